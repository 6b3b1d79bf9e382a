//! The hook for static web assets: `GET` requests that are not API
//! routes (`/`, `/index.html`, `/app.js`, …) are answered from here.
//!
//! Today no assets are built in, so every such request gets a JSON 404.
//! A web front end plugs in by making [`lookup`] return its files (for
//! example from `include_bytes!`); nothing else in the server changes.

/// A static file to send.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
}

/// The asset served at `path` (`/` included), if there is one.
pub fn lookup(path: &str) -> Option<Asset> {
    let _ = path;
    None
}
