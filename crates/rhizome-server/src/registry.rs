//! The databases a server offers, by name.
//!
//! Today a server has one database (named in its configuration); `neo4j`
//! is accepted as an alias of the default one so drivers' default sessions
//! work. The registry is the seam where later issues add read-only
//! external sources as further databases.

use rhizome_common::Value;
use rhizome_engine::procedures::Procedure;
use rhizome_engine::Engine;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The Neo4j version the server reports to drivers and tools that gate
/// features on it (the Bolt 5.4 era).
pub const NEO4J_COMPATIBLE_VERSION: &str = "5.26.0";

/// The alias always accepted for the default database.
pub const DEFAULT_ALIAS: &str = "neo4j";

/// One database a server offers.
#[derive(Clone)]
pub struct DatabaseEntry {
    /// Its name.
    pub name: String,
    /// Its query engine (with the server's procedures registered).
    pub engine: Engine,
    /// True if it only reads.
    pub read_only: bool,
}

/// The databases by name, and which is the default.
pub struct Registry {
    databases: BTreeMap<String, DatabaseEntry>,
    default: String,
}

impl Registry {
    /// A registry with one database, the default, named `name`.
    pub fn single(name: &str, engine: Engine) -> Registry {
        let mut engine = engine;
        for procedure in server_procedures() {
            engine.register_procedure(procedure);
        }
        let entry = DatabaseEntry {
            name: name.to_string(),
            engine,
            read_only: false,
        };
        Registry {
            databases: [(name.to_string(), entry)].into(),
            default: name.to_string(),
        }
    }

    /// The database called `name` (`None` or empty: the default; `neo4j`
    /// is the default's alias). Names compare case-insensitively, as in Neo4j.
    pub fn get(&self, name: Option<&str>) -> Option<&DatabaseEntry> {
        let name = match name {
            None | Some("") => return self.databases.get(&self.default),
            Some(n) => n.to_ascii_lowercase(),
        };
        if let Some(entry) = self
            .databases
            .values()
            .find(|e| e.name.eq_ignore_ascii_case(&name))
        {
            return Some(entry);
        }
        (name == DEFAULT_ALIAS).then(|| &self.databases[&self.default])
    }

    /// The default database.
    pub fn default_entry(&self) -> &DatabaseEntry {
        &self.databases[&self.default]
    }

    /// All databases, by name.
    pub fn all(&self) -> impl Iterator<Item = &DatabaseEntry> {
        self.databases.values()
    }
}

/// Procedures the server adds to every database: what drivers and tools
/// call on connect.
fn server_procedures() -> Vec<Procedure> {
    let mut procedures = crate::introspection::procedures();
    procedures.extend([
        Procedure {
            name: "dbms.components".into(),
            inputs: vec![],
            outputs: vec![
                ("name".into(), "STRING".into()),
                ("versions".into(), "LIST".into()),
                ("edition".into(), "STRING".into()),
            ],
            body: Arc::new(|_, _| {
                Ok(vec![vec![
                    Value::String("Neo4j Kernel".into()),
                    Value::List(vec![Value::String(NEO4J_COMPATIBLE_VERSION.into())]),
                    Value::String("community".into()),
                ]])
            }),
        },
        Procedure {
            name: "db.schema.visualization".into(),
            inputs: vec![],
            outputs: vec![
                ("nodes".into(), "LIST".into()),
                ("relationships".into(), "LIST".into()),
            ],
            body: Arc::new(|_, _| Ok(vec![vec![Value::List(vec![]), Value::List(vec![])]])),
        },
    ]);
    procedures
}
