//! Fuzzes the mapping parser: any text must parse or give an
//! `InvalidMapping` error, never panic or hang (seeded with the example
//! mappings of `examples/sources/`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let env = |name: &str| (name == "RHIZOME_PG_PORT").then(|| "5432".to_string());
    if let Err(e) = rhizome_sources::Mapping::parse_with_env(text, &env) {
        assert_eq!(e.code, Some("InvalidMapping"), "{e}");
    }
});
