//! `DELETE` / `DETACH DELETE`: relationships first, then nodes; entities
//! already deleted by the statement are skipped; a node still connected is
//! retried when the statement ends and fails it then.

use super::{UpdateRun, Values};
use rhizome_common::{Error, ErrorKind, NodeId, RelId, Result, Value};
use rhizome_plan::Expr;
use rhizome_storage::GraphRead;

/// Nodes and relationships named by one `DELETE` over all its rows.
#[derive(Default)]
struct Targets {
    nodes: Vec<NodeId>,
    rels: Vec<RelId>,
}

impl Targets {
    fn add(&mut self, v: Value) -> Result<()> {
        match v {
            Value::Null => {}
            Value::Node(id) => self.nodes.push(id),
            Value::Relationship(id) => self.rels.push(id),
            Value::Path(p) => {
                self.rels.extend(p.rels);
                self.nodes.extend(p.nodes);
            }
            other => {
                return Err(Error::new(
                    ErrorKind::TypeError,
                    format!(
                        "DELETE expects a node, relationship or path, got {}",
                        other.type_name()
                    ),
                )
                .with_code("InvalidArgumentType"))
            }
        }
        Ok(())
    }
}

fn connected(e: &Error) -> bool {
    e.code == Some("DeleteConnectedNode")
}

impl UpdateRun<'_> {
    /// Deletes what `exprs` evaluate to on every row.
    pub(crate) fn delete(&mut self, exprs: &[Expr], detach: bool, rows: &[Values]) -> Result<()> {
        let mut targets = Targets::default();
        for row in rows {
            for e in exprs {
                let v = self.eval(e, row)?;
                targets.add(v)?;
            }
        }
        for rel in targets.rels {
            if GraphRead::relationship(&*self.txn, rel).is_some() {
                self.writer().delete_relationship(rel)?;
                self.wrote();
            }
        }
        for node in targets.nodes {
            if !GraphRead::node_exists(&*self.txn, node) {
                continue;
            }
            match self.writer().delete_node(node, detach) {
                Ok(()) => self.wrote(),
                Err(e) if !detach && connected(&e) => self.pending_deletes.push(node),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Deletes the nodes whose relationships were still there at their
    /// `DELETE`; fails if one still has relationships.
    pub(crate) fn finish_deletes(&mut self) -> Result<()> {
        for node in std::mem::take(&mut self.pending_deletes) {
            if GraphRead::node_exists(&*self.txn, node) {
                self.writer().delete_node(node, false)?;
                self.wrote();
            }
        }
        Ok(())
    }
}
