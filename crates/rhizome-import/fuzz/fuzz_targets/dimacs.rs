//! Fuzzes the DIMACS `.gr` and `.co` parsers: any bytes parse or fail with
//! an input error, never a panic; a parsed `.gr` keeps its arcs in range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rhizome_import::dimacs::{parse_co, parse_gr};

fuzz_target!(|data: &[u8]| {
    if let Ok(gr) = parse_gr(data) {
        assert_eq!(gr.sources.len(), gr.targets.len());
        assert!(gr
            .sources
            .iter()
            .chain(&gr.targets)
            .all(|&k| k >= 1 && u64::from(k) <= gr.node_count));
    }
    if let Ok(co) = parse_co(data) {
        assert_eq!(co.lat.len(), co.lon.len());
    }
});
