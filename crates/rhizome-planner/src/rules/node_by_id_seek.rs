//! `node_by_id_seek`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct NodeByIdSeek;

impl OptimizerRule for NodeByIdSeek {
    fn name(&self) -> &'static str {
        "node_by_id_seek"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
