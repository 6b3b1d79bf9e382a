//! `exists_to_semi_apply`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct ExistsToSemiApply;

impl OptimizerRule for ExistsToSemiApply {
    fn name(&self) -> &'static str {
        "exists_to_semi_apply"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
