//! The hook for static web assets: `GET` requests that are not API
//! routes (`/`, `/index.html`, `/app.js`, …) are answered from here.
//!
//! The files are the web page's built bundle, embedded by
//! [`crate::web_assets`]; any other path gets a JSON 404.

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
    crate::web_assets::asset(path).map(|a| Asset {
        content_type: a.content_type,
        body: a.body,
    })
}
