//! [`GraphView`] over a native storage snapshot, and opening databases with
//! errors that tell a user what to do.

use crate::cli::OpenArgs;
use crate::graph::{GraphView, Properties};
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result};
use rhizome_storage::{Database, DatabaseOptions, GraphRead, PropertyKeyId, RelInfo};
use std::path::Path;

/// Opens the database in `dir` with default options; see [`open_database_with`].
pub fn open_database(dir: &Path) -> Result<Database> {
    open_database_with(dir, &OpenArgs::default())
}

/// Opens the database in `dir` as `--lock-timeout`, `--transaction-timeout`
/// and `--read-only` say; a missing directory is an `IoError` that names the
/// commands creating one.
pub fn open_database_with(dir: &Path, args: &OpenArgs) -> Result<Database> {
    let defaults = DatabaseOptions::default();
    let options = DatabaseOptions {
        lock_timeout: args.lock_timeout.unwrap_or(defaults.lock_timeout),
        transaction_timeout: args.transaction_timeout.or(defaults.transaction_timeout),
        read_only: args.read_only,
        ..defaults
    };
    open_database_options(dir, options)
}

/// Opens the database in `dir` with `options`; a missing directory is an
/// `IoError` that names the commands creating one.
pub fn open_database_options(dir: &Path, options: DatabaseOptions) -> Result<Database> {
    if !dir.exists() {
        return Err(Error::new(
            ErrorKind::IoError,
            format!(
                "no database at `{}`: the directory does not exist \
                 (create one with `rhizome import`, or try `rhizome demo`)",
                dir.display()
            ),
        ));
    }
    Database::open_with(dir, options)
}

/// Resolves entities through any [`GraphRead`] (a snapshot of the database the
/// result came from).
pub struct StorageView<'a, G: GraphRead> {
    graph: &'a G,
}

impl<'a, G: GraphRead> StorageView<'a, G> {
    /// A view over `graph`.
    pub fn new(graph: &'a G) -> StorageView<'a, G> {
        StorageView { graph }
    }

    fn check_node(&self, id: NodeId) -> Result<()> {
        if self.graph.node_exists(id) {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::EntityNotFound,
                format!("node {id} does not exist"),
            ))
        }
    }

    fn rel(&self, id: RelId) -> Result<RelInfo> {
        self.graph.relationship(id).ok_or_else(|| {
            Error::new(
                ErrorKind::EntityNotFound,
                format!("relationship {id} does not exist"),
            )
        })
    }

    fn named(&self, props: Vec<(PropertyKeyId, rhizome_common::Value)>) -> Properties {
        let catalog = self.graph.catalog();
        props
            .into_iter()
            .map(|(key, v)| (catalog.property_key_name(key).to_string(), v))
            .collect()
    }
}

impl<G: GraphRead> GraphView for StorageView<'_, G> {
    fn node_labels(&self, id: NodeId) -> Result<Vec<String>> {
        self.check_node(id)?;
        let catalog = self.graph.catalog();
        Ok(self
            .graph
            .node_labels(id)
            .iter()
            .map(|&l| catalog.label_name(l).to_string())
            .collect())
    }

    fn node_properties(&self, id: NodeId) -> Result<Properties> {
        self.check_node(id)?;
        let mut props = Vec::new();
        self.graph.node_properties(id, &mut props);
        Ok(self.named(props))
    }

    fn rel_type(&self, id: RelId) -> Result<String> {
        let info = self.rel(id)?;
        Ok(self
            .graph
            .catalog()
            .rel_type_name(info.rel_type)
            .to_string())
    }

    fn rel_endpoints(&self, id: RelId) -> Result<(NodeId, NodeId)> {
        let info = self.rel(id)?;
        Ok((info.start, info.end))
    }

    fn rel_properties(&self, id: RelId) -> Result<Properties> {
        self.rel(id)?;
        let mut props = Vec::new();
        self.graph.rel_properties(id, &mut props);
        Ok(self.named(props))
    }
}
