//! Fuzzes the property value codec: decoding any bytes must not panic, and a
//! decoded value must encode to bytes that decode to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rhizome_storage::codec;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = codec::decode(data) {
        let mut out = Vec::new();
        codec::encode(&value, &mut out);
        let again = codec::decode(&out).expect("an encoded value decodes");
        // NaN floats are not equal to themselves; compare their encodings.
        let mut twice = Vec::new();
        codec::encode(&again, &mut twice);
        assert_eq!(out, twice, "re-encoding changed the value");
    }
});
