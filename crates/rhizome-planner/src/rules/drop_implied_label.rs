//! `drop_implied_label`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct DropImpliedLabel;

impl OptimizerRule for DropImpliedLabel {
    fn name(&self) -> &'static str {
        "drop_implied_label"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
