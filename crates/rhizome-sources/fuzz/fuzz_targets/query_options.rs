//! Fuzzes the query options a statement over a source may begin with
//! (`CYPHER prefetch=...`): any text must split or give an
//! `InvalidQueryOption` error, never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = rhizome_sources::query_options::split(text) {
        assert_eq!(e.code, Some("InvalidQueryOption"), "{e}");
    }
});
