//! Fuzzes message parsing and parameter conversion: never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rhizome_server::message::{parse, Request};
use rhizome_server::values::parameters;

fuzz_target!(|data: &[u8]| {
    if let Ok(Request::Run { params, .. }) = parse(data) {
        let _ = parameters(params);
    }
});
