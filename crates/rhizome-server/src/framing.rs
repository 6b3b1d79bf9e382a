//! Bolt's chunked framing: a message is a sequence of chunks (a 2-byte
//! big-endian size, then that many bytes) ended by a zero-size chunk. A
//! zero-size chunk between messages is a keep-alive (NOOP).
//!
//! [`ChunkDecoder`] is sans-I/O: the connection feeds it whatever bytes
//! arrived and gets whole messages back. It refuses a message the moment its
//! chunks add up to more than the configured maximum, so a client cannot
//! make the server buffer more than that.

use std::fmt;

/// The largest chunk a size header can declare.
pub const MAX_CHUNK: usize = u16::MAX as usize;

/// A message was larger than the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageTooLarge {
    /// The limit in bytes.
    pub limit: usize,
}

impl fmt::Display for MessageTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a message is larger than the server's limit of {} bytes (max_message_size)",
            self.limit
        )
    }
}

/// Reassembles messages from chunks.
#[derive(Debug)]
pub struct ChunkDecoder {
    limit: usize,
    message: Vec<u8>,
    /// True while a message has started (a non-empty chunk came).
    in_message: bool,
}

impl ChunkDecoder {
    /// A decoder that refuses messages over `limit` bytes.
    pub fn new(limit: usize) -> ChunkDecoder {
        ChunkDecoder {
            limit,
            message: Vec::new(),
            in_message: false,
        }
    }

    /// Takes what it can from the front of `input`: returns the number of
    /// bytes consumed and, if a message was completed, the message. Call
    /// again with the rest while it consumes bytes.
    pub fn decode(&mut self, input: &[u8]) -> Result<(usize, Option<Vec<u8>>), MessageTooLarge> {
        let mut pos = 0;
        loop {
            let Some(header) = input.get(pos..pos + 2) else {
                return Ok((pos, None));
            };
            let size = u16::from_be_bytes([header[0], header[1]]) as usize;
            if size == 0 {
                pos += 2;
                if self.in_message {
                    self.in_message = false;
                    return Ok((pos, Some(std::mem::take(&mut self.message))));
                }
                continue; // a NOOP between messages
            }
            if self.message.len() + size > self.limit {
                return Err(MessageTooLarge { limit: self.limit });
            }
            let Some(body) = input.get(pos + 2..pos + 2 + size) else {
                return Ok((pos, None));
            };
            self.message.extend_from_slice(body);
            self.in_message = true;
            pos += 2 + size;
        }
    }
}

/// Appends `message` to `out` as chunks of at most [`MAX_CHUNK`] bytes and
/// the end marker.
pub fn write_message(out: &mut Vec<u8>, message: &[u8]) {
    for chunk in message.chunks(MAX_CHUNK) {
        out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&[0, 0]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_messages(decoder: &mut ChunkDecoder, mut input: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let (used, message) = decoder.decode(input).unwrap();
            input = &input[used..];
            match message {
                Some(m) => out.push(m),
                None => return out,
            }
        }
    }

    #[test]
    fn messages_split_over_chunks_and_reads_reassemble() {
        let mut wire = Vec::new();
        write_message(&mut wire, &[1, 2, 3]);
        wire.extend_from_slice(&[0, 0]); // NOOP
        write_message(&mut wire, &vec![7; 70_000]);
        // Fed one byte at a time, the same two messages come out.
        let mut decoder = ChunkDecoder::new(100_000);
        let mut buffer = Vec::new();
        let mut messages = Vec::new();
        for &b in &wire {
            buffer.push(b);
            let (used, message) = decoder.decode(&buffer).unwrap();
            buffer.drain(..used);
            messages.extend(message);
        }
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0], [1, 2, 3]);
        assert_eq!(messages[1].len(), 70_000);
        assert_eq!(
            all_messages(&mut ChunkDecoder::new(100_000), &wire).len(),
            2
        );
    }

    #[test]
    fn a_message_over_the_limit_is_refused_at_its_first_chunk_past_it() {
        let mut decoder = ChunkDecoder::new(10);
        assert_eq!(
            decoder.decode(&[0, 8, 1, 2, 3, 4, 5, 6, 7, 8]),
            Ok((10, None))
        );
        // The next header declares 8 more: refused before the bytes arrive.
        assert_eq!(decoder.decode(&[0, 8]), Err(MessageTooLarge { limit: 10 }));
    }

    #[test]
    fn a_spec_example_decodes() {
        // 00 03 | 01 02 03 | 00 00 from the Bolt documentation.
        let mut decoder = ChunkDecoder::new(1024);
        assert_eq!(
            decoder.decode(&[0x00, 0x03, 0x01, 0x02, 0x03, 0x00, 0x00]),
            Ok((7, Some(vec![1, 2, 3])))
        );
    }
}
