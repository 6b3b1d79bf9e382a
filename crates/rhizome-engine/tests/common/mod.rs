//! Set-up shared by the engine's integration tests.

use rhizome_engine::Engine;
use std::path::Path;

/// An engine over a new empty database in `dir/db`.
pub fn empty_engine(dir: &Path) -> Engine {
    let db = dir.join("db");
    rhizome_storage::GraphBuilder::new().write(&db).unwrap();
    Engine::open(&db).unwrap()
}
