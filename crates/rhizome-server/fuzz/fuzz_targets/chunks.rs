//! Fuzzes the chunk decoder: arbitrary bytes, fed in pieces whose sizes the
//! first byte chooses, never panic, and no message exceeds the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rhizome_server::framing::ChunkDecoder;

const LIMIT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&step, data)) = data.split_first() else {
        return;
    };
    let step = step.max(1) as usize;
    let mut decoder = ChunkDecoder::new(LIMIT);
    let mut buffer = Vec::new();
    for piece in data.chunks(step) {
        buffer.extend_from_slice(piece);
        loop {
            match decoder.decode(&buffer) {
                Ok((used, message)) => {
                    buffer.drain(..used);
                    match message {
                        Some(m) => assert!(m.len() <= LIMIT),
                        None => break,
                    }
                }
                Err(_) => return,
            }
        }
    }
});
