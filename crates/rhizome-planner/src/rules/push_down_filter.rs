//! `push_down_filter`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct PushDownFilter;

impl OptimizerRule for PushDownFilter {
    fn name(&self) -> &'static str {
        "push_down_filter"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
