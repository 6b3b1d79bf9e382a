//! `rel_predicate_into_expand`: TODO.

use super::{OptimizerRule, RuleContext};
use rhizome_plan::PlanNode;

/// See the module documentation.
pub struct RelPredicateIntoExpand;

impl OptimizerRule for RelPredicateIntoExpand {
    fn name(&self) -> &'static str {
        "rel_predicate_into_expand"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        node
    }
}
