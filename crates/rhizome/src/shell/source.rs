//! The shell's backend on a graph source (`rhizome shell MAPPING.json`):
//! read-only statements over the source; no transactions.

use super::local::SnapshotView;
use super::{Backend, Executed, ShellError};
use crate::engine::{self, QueryOptions};
use rhizome_common::{Error, ErrorKind, Value};
use rhizome_sources::SourceEngine;
use std::collections::BTreeMap;

/// Statements run over a graph source.
pub struct SourceShell {
    source: SourceEngine,
    options: QueryOptions,
}

impl SourceShell {
    /// A backend on `source`.
    pub fn new(source: SourceEngine, options: QueryOptions) -> SourceShell {
        SourceShell { source, options }
    }
}

fn read_only(what: &str) -> ShellError {
    ShellError::Local(Error::new(
        ErrorKind::ArgumentError,
        format!("a graph source is read-only: {what} has nothing to do"),
    ))
}

impl Backend for SourceShell {
    fn execute(
        &mut self,
        text: &str,
        params: &BTreeMap<String, Value>,
    ) -> std::result::Result<Executed, ShellError> {
        let (result, snapshot) =
            engine::execute_on_source(&self.source, text, params, &self.options)?;
        Ok(Executed {
            result,
            graph: Box::new(SnapshotView(snapshot)),
        })
    }

    fn begin(&mut self) -> std::result::Result<(), ShellError> {
        Err(read_only("BEGIN"))
    }

    fn commit(&mut self) -> std::result::Result<(), ShellError> {
        Err(read_only("COMMIT"))
    }

    fn rollback(&mut self) -> std::result::Result<(), ShellError> {
        Err(read_only("ROLLBACK"))
    }

    fn in_transaction(&self) -> bool {
        false
    }

    fn schema(&mut self) -> std::result::Result<String, ShellError> {
        let mapping = self.source.source().mapping();
        let mut out = format!("{}\n", self.source.source().describe());
        for space in &mapping.nodes {
            let props: Vec<String> = space
                .properties
                .iter()
                .map(|(n, t)| format!("{n}: {t:?}"))
                .collect();
            let labels: Vec<&str> = std::iter::once(&space.label)
                .chain(&space.labels)
                .map(String::as_str)
                .collect();
            out.push_str(&format!(
                "  (:{} {{{}}}) key `{}`{}\n",
                labels.join(":"),
                props.join(", "),
                space.key,
                if space.keys.is_some() {
                    ", scannable"
                } else {
                    ""
                }
            ));
        }
        for rel in &mapping.relationships {
            let props: Vec<String> = rel
                .properties
                .iter()
                .map(|(n, t)| format!("{n}: {t:?}"))
                .collect();
            out.push_str(&format!(
                "  (:{})-[:{} {{{}}}]->(:{})\n",
                rel.from,
                rel.rel_type,
                props.join(", "),
                rel.to
            ));
        }
        Ok(out)
    }

    fn stats(&mut self) -> std::result::Result<String, ShellError> {
        let source = self.source.source();
        Ok(format!(
            "{}: {}, {} cached entries\n",
            source.describe(),
            source.counters().render(),
            source.cached_entries()
        ))
    }
}
