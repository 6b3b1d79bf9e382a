//! Fuzzes the client's side: arbitrary bytes as a server's answers to a
//! login and one query (handshake answer, framing, responses, records and
//! the entities in them). Never panics; ends at the end of the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rhizome_server::client::records::Entities;
use rhizome_server::client::{Auth, BoltClient};
use std::io::{Cursor, Read, Write};

/// A server that answers with the fuzzer's bytes and swallows requests.
struct Replay(Cursor<Vec<u8>>);

impl Read for Replay {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Replay {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(mut client) = BoltClient::over(Replay(Cursor::new(data.to_vec())), &Auth::None) else {
        return;
    };
    if let Ok(result) = client.query("RETURN 1", &Default::default()) {
        let mut entities = Entities::default();
        for record in result.records {
            let _ = entities.record(record);
        }
    }
});
