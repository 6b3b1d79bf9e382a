//! `optional_expand`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct OptionalExpand;

impl OptimizerRule for OptionalExpand {
    fn name(&self) -> &'static str {
        "optional_expand"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
