//! Setup shared by the tests that run against real PostgreSQL and Redis
//! servers (`scripts/suites/50-sources.sh` starts them, loads the road
//! networks, the places and LDBC, and exports RHIZOME_PG_PORT and
//! RHIZOME_REDIS_PORT, which the example mappings read).
//!
//! Each test file includes this module (`mod common;`) and uses a part
//! of it, hence the `dead_code` allowance.
#![allow(dead_code)]

use rhizome_common::{Result, Value};
use rhizome_engine::QueryOptions;
use rhizome_sources::{Mapping, Source, SourceEngine};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The directory of the example mappings (`examples/sources`).
pub fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/sources")
}

/// Panics with how to run the tests unless the backends' ports are set.
pub fn require_backends() {
    for var in ["RHIZOME_PG_PORT", "RHIZOME_REDIS_PORT"] {
        assert!(
            std::env::var(var).is_ok(),
            "{var} is not set: run scripts/suites/50-sources.sh"
        );
    }
}

/// The text of the example mapping `file`.
pub fn example(file: &str) -> String {
    require_backends();
    std::fs::read_to_string(examples().join(file)).unwrap()
}

/// The example mapping `file`, loaded.
pub fn mapping(file: &str) -> Mapping {
    require_backends();
    Mapping::load(&examples().join(file)).unwrap()
}

/// An engine over a new source (an empty cache) of the mapping `text`.
pub fn engine(text: &str) -> Result<SourceEngine> {
    SourceEngine::new(Source::connect(Mapping::parse(text)?)?)
}

/// Statement options with a timeout of `seconds`.
pub fn options(seconds: u64) -> QueryOptions {
    QueryOptions {
        timeout: Some(Duration::from_secs(seconds)),
        ..QueryOptions::default()
    }
}

/// The rows of `query` (no parameters, 60 s timeout) over `engine`.
pub fn rows(engine: &SourceEngine, query: &str) -> Result<Vec<Vec<Value>>> {
    Ok(engine
        .execute(query, BTreeMap::new(), &options(60))?
        .0
        .rows
        .to_vecs())
}
