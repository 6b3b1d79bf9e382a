//! Explicit transactions: several statements in one write transaction.

use crate::{Engine, QueryOptions, QueryResult, RowReceiver};
use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_storage::{CommitInfo, Snapshot, WriteTxn};
use std::collections::BTreeMap;
use std::sync::Arc;

/// An open write transaction of an [`Engine`] (from [`Engine::begin`]).
///
/// Statements run with [`Transaction::execute`] read the transaction's own
/// writes; others see nothing of them until [`Transaction::commit`].
/// Dropping it without committing rolls back. A statement that fails leaves
/// the transaction unusable: every later call fails and only rollback (or
/// drop) remains, so a partial statement is never committed.
pub struct Transaction {
    engine: Engine,
    txn: Option<WriteTxn>,
    failed: bool,
}

impl Transaction {
    pub(crate) fn new(engine: Engine, txn: WriteTxn) -> Transaction {
        Transaction {
            engine,
            txn: Some(txn),
            failed: false,
        }
    }

    fn usable(&mut self) -> Result<&mut WriteTxn> {
        if self.failed {
            return Err(Error::new(
                ErrorKind::TransientError,
                "the transaction failed earlier and can only be rolled back",
            ));
        }
        self.txn
            .as_mut()
            .ok_or_else(|| Error::new(ErrorKind::Internal, "the transaction is closed"))
    }

    /// Runs one statement inside the transaction.
    pub fn execute(
        &mut self,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
    ) -> Result<QueryResult> {
        let engine = self.engine.clone();
        let txn = self.usable()?;
        let result = engine.run_statement(query, params, options, Some(txn), None, &mut None);
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    /// Runs one statement inside the transaction like
    /// [`Transaction::execute`], handing its rows to `receiver` as
    /// [`Engine::execute_streaming`] does.
    pub fn execute_streaming(
        &mut self,
        query: &str,
        params: BTreeMap<String, Value>,
        options: &QueryOptions,
        receiver: Arc<dyn RowReceiver>,
    ) -> Result<QueryResult> {
        let engine = self.engine.clone();
        let txn = self.usable()?;
        let result =
            engine.run_statement(query, params, options, Some(txn), Some(receiver), &mut None);
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    /// The state the transaction's next statement reads: the database as of
    /// its start plus its own writes so far (`None` once it is closed). Costs
    /// a packing of what it wrote: take one per statement, not per row.
    pub fn snapshot(&self) -> Option<Snapshot> {
        self.txn.as_ref().map(WriteTxn::snapshot)
    }

    /// Makes the transaction's writes durable and visible.
    pub fn commit(mut self) -> Result<CommitInfo> {
        self.usable()?;
        match self.txn.take() {
            Some(txn) => txn.commit(),
            None => Err(Error::new(ErrorKind::Internal, "the transaction is closed")),
        }
    }

    /// Discards the transaction's writes.
    pub fn rollback(mut self) {
        if let Some(txn) = self.txn.take() {
            txn.rollback();
        }
    }
}
