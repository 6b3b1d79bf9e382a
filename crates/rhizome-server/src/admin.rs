//! Statements the server answers itself rather than the engine: those about
//! the server (its databases, the current user) that drivers and tools send
//! on connect.

use crate::registry::{Registry, DEFAULT_ALIAS};
use rhizome_common::Value;

/// A result computed by the server.
pub struct ServerResult {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<Value>>,
}

/// The answer to `query` if it is a server statement, else `None`.
/// `user` and `roles` describe the logged-in user.
pub fn answer(
    query: &str,
    registry: &Registry,
    user: &str,
    roles: &[String],
) -> Option<ServerResult> {
    let words: Vec<String> = query
        .trim()
        .trim_end_matches(';')
        .split_whitespace()
        .map(str::to_ascii_uppercase)
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["SHOW", "DATABASES"] => Some(databases(registry, None)),
        ["SHOW", "DEFAULT" | "HOME", "DATABASE"] => Some(databases(registry, Some(None))),
        ["SHOW", "DATABASE", _] => {
            let name = query
                .split_whitespace()
                .nth(2)?
                .trim_end_matches(';')
                .trim_matches('`');
            Some(databases(registry, Some(Some(name))))
        }
        ["CALL", "DBMS.SHOWCURRENTUSER()"] | ["SHOW", "CURRENT", "USER"] => Some(ServerResult {
            columns: vec!["username".into(), "roles".into(), "flags".into()],
            rows: vec![vec![
                Value::String(user.to_string()),
                Value::List(roles.iter().map(|r| Value::String(r.clone())).collect()),
                Value::List(vec![]),
            ]],
        }),
        _ => None,
    }
}

/// `SHOW DATABASES` rows: all (`None`), the default (`Some(None)`) or one
/// by name. A graph source is listed with type `source`, access
/// `read-only` and its backend as the status message.
fn databases(registry: &Registry, which: Option<Option<&str>>) -> ServerResult {
    let columns = [
        "name",
        "type",
        "aliases",
        "access",
        "address",
        "role",
        "writer",
        "requestedStatus",
        "currentStatus",
        "statusMessage",
        "default",
        "home",
        "constituents",
    ];
    let default = registry.default_entry().name.clone();
    let chosen: Vec<_> = match which {
        None => registry.all().collect(),
        Some(name) => registry.get(name).into_iter().collect(),
    };
    let rows = chosen
        .into_iter()
        .map(|entry| {
            let is_default = entry.name == default;
            let aliases = if is_default && entry.name != DEFAULT_ALIAS {
                vec![Value::String(DEFAULT_ALIAS.into())]
            } else {
                vec![]
            };
            // A graph source: type `source`, its backend in the status message.
            let (kind, status) = match &entry.source {
                Some(source) => ("source", source.source().describe()),
                None => ("standard", String::new()),
            };
            vec![
                Value::String(entry.name.clone()),
                Value::String(kind.into()),
                Value::List(aliases),
                Value::String(
                    if entry.read_only {
                        "read-only"
                    } else {
                        "read-write"
                    }
                    .into(),
                ),
                Value::String("localhost".into()),
                Value::String("primary".into()),
                Value::Bool(true),
                Value::String("online".into()),
                Value::String("online".into()),
                Value::String(status),
                Value::Bool(is_default),
                Value::Bool(is_default),
                Value::List(vec![]),
            ]
        })
        .collect();
    ServerResult {
        columns: columns.iter().map(|c| c.to_string()).collect(),
        rows,
    }
}
