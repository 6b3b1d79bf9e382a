//! The databases a server offers, by name.
//!
//! A server has one native database (named in its configuration); `neo4j`
//! is accepted as an alias of it so drivers' default sessions work.
//! Graph sources (`rhizome serve --source NAME=MAPPING.json`) are further,
//! read-only databases: each is a [`SourceEngine`] over PostgreSQL or
//! Redis, which the session runs statements on (see docs/server.md).

use rhizome_common::Value;
use rhizome_engine::procedures::Procedure;
use rhizome_engine::Engine;
use rhizome_sources::SourceEngine;
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
    /// The graph source it reads, for a source database (then `engine` is
    /// the source's, whose native base is empty: statements run through
    /// the source engine).
    pub source: Option<Arc<SourceEngine>>,
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
            source: None,
        };
        Registry {
            databases: [(name.to_string(), entry)].into(),
            default: name.to_string(),
        }
    }

    /// Adds the graph source `source` as the read-only database `name`
    /// (with the server's procedures registered on it). Fails if the name
    /// is taken (case-insensitively, `neo4j` and `system` included) or is
    /// not a plain name.
    pub fn add_source(&mut self, name: &str, mut source: SourceEngine) -> Result<(), String> {
        check_name(name)?;
        let taken = self
            .databases
            .keys()
            .chain([&DEFAULT_ALIAS.to_string(), &"system".to_string()])
            .any(|n| n.eq_ignore_ascii_case(name));
        if taken {
            return Err(format!(
                "--source {name}=…: the name `{name}` is taken (names compare case-insensitively; \
                 `neo4j`, `system` and the native database's name are reserved)"
            ));
        }
        for procedure in server_procedures() {
            source.register_procedure(procedure);
        }
        let entry = DatabaseEntry {
            name: name.to_string(),
            engine: source.engine().clone(),
            read_only: true,
            source: Some(Arc::new(source)),
        };
        self.databases.insert(name.to_string(), entry);
        Ok(())
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

/// A database name clients can write in a session's `db` and in an HTTP
/// path: ASCII letters, digits, `.`, `-` and `_`, starting with a letter.
fn check_name(name: &str) -> Result<(), String> {
    let plain = name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if plain {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a database name: use 1 to 63 ASCII letters, digits, `.`, `-` \
             or `_`, starting with a letter"
        ))
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
            defaults: vec![],
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
            defaults: vec![],
            body: Arc::new(|_, _| Ok(vec![vec![Value::List(vec![]), Value::List(vec![])]])),
        },
    ]);
    procedures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_names_are_plain_names() {
        for good in ["roads", "pg", "Roads-2", "a.b_c"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "2roads", "ro ads", "r/oads", "роуды", &"x".repeat(64)] {
            let e = check_name(bad).unwrap_err();
            assert!(e.contains("is not a database name"), "{bad}: {e}");
        }
    }
}
