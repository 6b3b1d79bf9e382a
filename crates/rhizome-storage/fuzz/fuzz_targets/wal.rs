//! Fuzzes the write-ahead log reader: any bytes, as a whole file and as the
//! payload of a correctly framed record (so the checksum does not hide the
//! operation decoder), must parse without panicking; whatever decodes must
//! encode again to a record that parses to the same operations.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rhizome_storage::wal;

fuzz_target!(|data: &[u8]| {
    let raw = wal::parse(data);
    assert!(raw.valid_len <= data.len() as u64);

    let mut file = wal::header(7);
    file.extend_from_slice(&(data.len() as u32).to_le_bytes());
    file.extend_from_slice(&crc32c::crc32c(data).to_le_bytes());
    file.extend_from_slice(data);
    let framed = wal::parse(&file);
    assert_eq!(framed.generation, Some(7));
    for record in &framed.records {
        let mut again = wal::header(7);
        again.extend_from_slice(&wal::encode_record(record.commit, &record.ops));
        let reparsed = wal::parse(&again);
        assert_eq!(reparsed.records, vec![record.clone()], "re-encoding changed the record");
        assert_eq!(reparsed.damage, None);
    }
});
