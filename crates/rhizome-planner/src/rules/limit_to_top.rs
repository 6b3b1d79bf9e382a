//! `limit_to_top`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct LimitToTop;

impl OptimizerRule for LimitToTop {
    fn name(&self) -> &'static str {
        "limit_to_top"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
