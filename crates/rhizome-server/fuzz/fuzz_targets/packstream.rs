//! Fuzzes the PackStream decoder: never panics; what decodes re-encodes to
//! bytes that decode and encode to the same bytes again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rhizome_server::packstream::decode;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = decode(data) {
        let mut once = Vec::new();
        value.encode(&mut once);
        let again = decode(&once).expect("an encoded value decodes");
        let mut twice = Vec::new();
        again.encode(&mut twice);
        assert_eq!(once, twice);
    }
});
