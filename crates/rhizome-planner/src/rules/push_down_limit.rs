//! `push_down_limit`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct PushDownLimit;

impl OptimizerRule for PushDownLimit {
    fn name(&self) -> &'static str {
        "push_down_limit"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
