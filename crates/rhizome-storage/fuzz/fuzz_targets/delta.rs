#![no_main]
//! Delta files (incremental checkpoints): any bytes are refused or read, never a panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = rhizome_storage::deltafile::check_bytes(data);
});
