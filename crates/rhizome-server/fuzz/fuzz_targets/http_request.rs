//! The HTTP Query API's request body decoder (plain and typed JSON).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rhizome_server::http::request;

fuzz_target!(|data: &[u8]| {
    for typed in [false, true] {
        let _ = request::decode(data, typed, true);
    }
});
