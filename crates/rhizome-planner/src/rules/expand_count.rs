//! `expand_count`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct ExpandCount;

impl OptimizerRule for ExpandCount {
    fn name(&self) -> &'static str {
        "expand_count"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
