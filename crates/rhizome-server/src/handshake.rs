//! The Bolt handshake: the client sends the magic `60 60 B0 17` and four
//! version proposals of 4 bytes each (`00 RANGE MINOR MAJOR`: MAJOR.MINOR
//! and the RANGE minor versions below it); the server answers with the one
//! version it picked (`00 00 MINOR MAJOR`) or four zero bytes and closes.
//!
//! An HTTP request sent to the Bolt port is recognised by its first bytes
//! and answered with an HTTP error saying where Bolt is.

/// The first four bytes of a Bolt connection.
pub const MAGIC: [u8; 4] = [0x60, 0x60, 0xB0, 0x17];
/// Bytes of a complete handshake: the magic and four proposals.
pub const HANDSHAKE_LEN: usize = 20;

/// A Bolt protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major version (4 or 5).
    pub major: u8,
    /// Minor version.
    pub minor: u8,
}

impl Version {
    /// Bolt 4.4.
    pub const V4_4: Version = Version { major: 4, minor: 4 };
    /// Bolt 5.0 (element ids, UTC date-times).
    pub const V5_0: Version = Version { major: 5, minor: 0 };
    /// Bolt 5.1 (authentication by LOGON / LOGOFF).
    pub const V5_1: Version = Version { major: 5, minor: 1 };

    /// The four bytes that announce this version.
    pub fn to_bytes(self) -> [u8; 4] {
        [0, 0, self.minor, self.major]
    }

    /// True from 5.0 on: element ids, UTC date-times.
    pub fn is_v5(self) -> bool {
        self.major >= 5
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The versions this server speaks, newest first.
pub const SUPPORTED: [Version; 6] = [
    Version { major: 5, minor: 4 },
    Version { major: 5, minor: 3 },
    Version { major: 5, minor: 2 },
    Version { major: 5, minor: 1 },
    Version { major: 5, minor: 0 },
    Version::V4_4,
];

/// What the first bytes of a connection were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opening {
    /// A Bolt handshake: the version to answer with, if any was acceptable.
    Bolt(Option<Version>),
    /// An HTTP request (the bytes start with an HTTP method).
    Http,
    /// Anything else.
    Garbage,
}

/// Reads the 20 handshake bytes.
pub fn parse(bytes: &[u8; HANDSHAKE_LEN]) -> Opening {
    if bytes[..4] != MAGIC {
        return if looks_like_http(bytes) {
            Opening::Http
        } else {
            Opening::Garbage
        };
    }
    let proposals = bytes[4..].chunks_exact(4);
    Opening::Bolt(proposals.into_iter().find_map(|p| pick(p[1], p[2], p[3])))
}

/// True if `prefix` starts like an HTTP request line.
pub fn looks_like_http(prefix: &[u8]) -> bool {
    const METHODS: [&[u8]; 9] = [
        b"GET ", b"POST", b"PUT ", b"HEAD", b"DELE", b"OPTI", b"PATC", b"CONN", b"TRAC",
    ];
    METHODS.iter().any(|m| prefix.starts_with(m))
}

/// The newest supported version in MAJOR.(MINOR-RANGE ..= MINOR).
fn pick(range: u8, minor: u8, major: u8) -> Option<Version> {
    let lowest = minor.saturating_sub(range);
    SUPPORTED
        .iter()
        .copied()
        .find(|v| v.major == major && v.minor <= minor && v.minor >= lowest)
}

/// The answer to an HTTP request on the Bolt port.
pub fn http_refusal() -> Vec<u8> {
    let body = "This is Rhizome's Bolt port: connect with a Neo4j driver \
                (bolt:// or neo4j:// URI), not HTTP.\n";
    format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handshake(proposals: [[u8; 4]; 4]) -> [u8; HANDSHAKE_LEN] {
        let mut bytes = [0u8; HANDSHAKE_LEN];
        bytes[..4].copy_from_slice(&MAGIC);
        for (i, p) in proposals.iter().enumerate() {
            bytes[4 + 4 * i..8 + 4 * i].copy_from_slice(p);
        }
        bytes
    }

    #[test]
    fn the_python_driver_proposal_settles_on_5_4() {
        // neo4j 6.x without the manifest: 0x1FF (manifest), 5.8..5.0, 4.4..4.2, 3.0.
        let bytes = handshake([[0, 0, 1, 0xFF], [0, 8, 8, 5], [0, 2, 4, 4], [0, 0, 0, 3]]);
        assert_eq!(
            parse(&bytes),
            Opening::Bolt(Some(Version { major: 5, minor: 4 }))
        );
    }

    #[test]
    fn ranges_and_exact_versions() {
        let only_44 = handshake([[0, 0, 4, 4], [0; 4], [0; 4], [0; 4]]);
        assert_eq!(parse(&only_44), Opening::Bolt(Some(Version::V4_4)));
        let five_two = handshake([[0, 0, 2, 5], [0; 4], [0; 4], [0; 4]]);
        assert_eq!(
            parse(&five_two),
            Opening::Bolt(Some(Version { major: 5, minor: 2 }))
        );
        let too_old = handshake([[0, 0, 0, 3], [0, 0, 3, 4], [0; 4], [0; 4]]);
        assert_eq!(parse(&too_old), Opening::Bolt(None));
    }

    #[test]
    fn http_and_garbage_are_told_apart() {
        let mut get = [0u8; HANDSHAKE_LEN];
        get.copy_from_slice(b"GET / HTTP/1.1\r\nHost");
        assert_eq!(parse(&get), Opening::Http);
        assert!(String::from_utf8(http_refusal())
            .unwrap()
            .starts_with("HTTP/1.1 400"));
        assert_eq!(parse(&[7; HANDSHAKE_LEN]), Opening::Garbage);
    }
}
