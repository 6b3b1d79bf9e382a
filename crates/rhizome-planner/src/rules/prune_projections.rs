//! `prune_projections`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct PruneProjections;

impl OptimizerRule for PruneProjections {
    fn name(&self) -> &'static str {
        "prune_projections"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
