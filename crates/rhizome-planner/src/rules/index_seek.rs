//! `index_seek`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct IndexSeek;

impl OptimizerRule for IndexSeek {
    fn name(&self) -> &'static str {
        "index_seek"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
