//! `cargo bench -p rhizome-import`: generates the likes graph (100k persons,
//! 2k items, 10M likes; override with `LIKES_PERSONS`, `LIKES_ITEMS`,
//! `LIKES_PER_PERSON`; parsing threads with `IMPORT_THREADS`), imports it, then imports LDBC SF0.1 from
//! `shared/datasets` (or `$RHIZOME_DATASETS`), printing one line per import:
//! rows, time, rows/s, bytes on disk, bytes per relationship, peak memory.

use rhizome_import::bench::{run_import_bench, BenchOptions};
use rhizome_import::NoProgress;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.parse().ok()
}

fn main() {
    // `cargo bench` passes `--bench`; a test-mode run (`cargo test --benches`) passes nothing we need.
    let mut options = BenchOptions::default();
    if let Some(likes) = options.likes.as_mut() {
        likes.persons = env_u64("LIKES_PERSONS").unwrap_or(likes.persons);
        likes.items = env_u64("LIKES_ITEMS").unwrap_or(likes.items);
        likes.likes_per_person = env_u64("LIKES_PER_PERSON").unwrap_or(likes.likes_per_person);
    }
    options.threads = env_u64("IMPORT_THREADS").unwrap_or(0) as usize;
    if options.ldbc_sf01.is_none() {
        eprintln!("shared/datasets not found (set RHIZOME_DATASETS); skipping LDBC SF0.1");
    }
    match run_import_bench(&options, &NoProgress) {
        Ok(lines) => {
            for line in lines {
                println!("{}", line.render());
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
