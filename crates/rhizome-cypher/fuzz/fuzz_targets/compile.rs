//! Fuzzes parsing plus semantic analysis and error rendering: must never
//! panic or hang on any input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = rhizome_cypher::compile(text) {
        let _ = e.render_with_source(text);
    }
});
