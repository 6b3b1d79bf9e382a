//! The shell's backend on a database opened in this process.

use super::{Backend, Executed, ShellError};
use crate::engine::{self, QueryOptions};
use crate::graph::{GraphView, Properties};
use crate::schema::{local_schema, local_stats, render_schema_report, render_stats_report};
use crate::storage_view::StorageView;
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use rhizome_storage::{Database, Snapshot};
use std::collections::BTreeMap;

/// Statements run by the engine on a local database.
pub struct Local {
    db: Database,
    options: QueryOptions,
    /// The explicit transaction opened with `BEGIN`, if any.
    txn: Option<rhizome_engine::Transaction>,
}

impl Local {
    /// A backend on `db`.
    pub fn new(db: Database, options: QueryOptions) -> Local {
        Local {
            db,
            options,
            txn: None,
        }
    }
}

/// Entities looked up in the state a statement ran on (in a transaction:
/// its own state, uncommitted writes included).
pub(super) struct SnapshotView(pub(super) Snapshot);

impl GraphView for SnapshotView {
    fn node_labels(&self, id: NodeId) -> Result<Vec<String>> {
        StorageView::new(&self.0).node_labels(id)
    }
    fn node_properties(&self, id: NodeId) -> Result<Properties> {
        StorageView::new(&self.0).node_properties(id)
    }
    fn rel_type(&self, id: RelId) -> Result<String> {
        StorageView::new(&self.0).rel_type(id)
    }
    fn rel_endpoints(&self, id: RelId) -> Result<(NodeId, NodeId)> {
        StorageView::new(&self.0).rel_endpoints(id)
    }
    fn rel_properties(&self, id: RelId) -> Result<Properties> {
        StorageView::new(&self.0).rel_properties(id)
    }
}

fn no_transaction() -> ShellError {
    ShellError::Local(Error::new(
        ErrorKind::ArgumentError,
        "no transaction is open; BEGIN one first",
    ))
}

impl Backend for Local {
    fn execute(
        &mut self,
        text: &str,
        params: &BTreeMap<String, Value>,
    ) -> std::result::Result<Executed, ShellError> {
        let (result, snapshot) = match &mut self.txn {
            Some(txn) => engine::execute_in(txn, text, params, &self.options)
                .map(|(result, state)| (result, state.unwrap_or_else(|| self.db.snapshot())))?,
            None => engine::execute(&self.db, text, params, &self.options)?,
        };
        Ok(Executed {
            result,
            graph: Box::new(SnapshotView(snapshot)),
        })
    }

    fn begin(&mut self) -> std::result::Result<(), ShellError> {
        self.txn = Some(rhizome_engine::Engine::new(self.db.clone()).begin()?);
        Ok(())
    }

    fn commit(&mut self) -> std::result::Result<(), ShellError> {
        let txn = self.txn.take().ok_or_else(no_transaction)?;
        txn.commit()?;
        Ok(())
    }

    fn rollback(&mut self) -> std::result::Result<(), ShellError> {
        self.txn.take().ok_or_else(no_transaction)?.rollback();
        Ok(())
    }

    fn in_transaction(&self) -> bool {
        self.txn.is_some()
    }

    fn schema(&mut self) -> std::result::Result<String, ShellError> {
        Ok(render_schema_report(&local_schema(&self.db)))
    }

    fn stats(&mut self) -> std::result::Result<String, ShellError> {
        Ok(render_stats_report(&local_stats(&self.db)))
    }
}
