//! The web page's built files (`web/dist`: `index.html`, `app.js`,
//! `app.css`), embedded in the binary so `rhizome serve --http` serves the
//! page with nothing installed beside it.
//!
//! The bundle is committed with its sources; `web/build.mjs --check` (run
//! by `scripts/suites/60-web.sh`) fails when it no longer matches them, so a
//! plain `cargo build` never needs Node.

/// One embedded file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asset {
    /// The path it answers under (`/`, `/app.js`, …).
    pub path: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
}

const INDEX: &[u8] = include_bytes!("../../../web/dist/index.html");

/// Every embedded file, `/` and `/index.html` both being the page.
pub const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: INDEX,
    },
    Asset {
        path: "/index.html",
        content_type: "text/html; charset=utf-8",
        body: INDEX,
    },
    Asset {
        path: "/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../../web/dist/app.js"),
    },
    Asset {
        path: "/app.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../../../web/dist/app.css"),
    },
];

/// The file served for a `GET` of `path` (its query string, if any, ignored).
pub fn asset(path: &str) -> Option<&'static Asset> {
    let path = path.split(['?', '#']).next().unwrap_or(path);
    ASSETS.iter().find(|a| a.path == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_its_bundle_are_embedded() {
        let page = asset("/").expect("the page");
        let html = std::str::from_utf8(page.body).unwrap();
        assert!(html.contains("<script src=\"app.js\">"));
        assert!(html.contains("app.css"));
        assert!(asset("/app.js").unwrap().body.len() > 100_000);
        assert!(asset("/app.css").is_some());
        assert_eq!(asset("/?x=1").unwrap().path, "/");
        assert!(asset("/nothing").is_none());
        assert!(asset("/../Cargo.toml").is_none());
    }
}
