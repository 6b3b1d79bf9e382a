//! `push_down_limit`: `Limit` and `Skip` move below a `Project` (which
//! keeps one row per row), so expressions are computed only for the rows
//! that are returned and the limit reaches the operators that can stop early.

use super::{mark, transform_up, OptimizerRule, RuleContext};
use rhizome_plan::{OpKind, PlanNode};

/// See the module documentation.
pub struct PushDownLimit;

impl OptimizerRule for PushDownLimit {
    fn name(&self) -> &'static str {
        "push_down_limit"
    }

    fn rewrite(&self, node: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        transform_up(node, &mut |n| {
            if !matches!(n.kind, OpKind::Limit { .. } | OpKind::Skip { .. }) {
                return n;
            }
            let [project] = n.inputs.as_slice() else {
                return n;
            };
            let (OpKind::Project { .. }, [input]) = (&project.kind, project.inputs.as_slice())
            else {
                return n;
            };
            let limited = mark(
                PlanNode::new(n.kind.clone(), vec![input.clone()], 0.0),
                self.name(),
            );
            PlanNode::new(project.kind.clone(), vec![limited], 0.0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    #[test]
    fn limit_moves_below_projection() {
        assert_eq!(
            plan_empty("MATCH (n) RETURN n.x AS x LIMIT 5", Some(Box::new(PushDownLimit))),
            "Projection n.x AS x\n└─ Limit 5 [push_down_limit]\n   └─ AllNodesScan (n)\n      └─ Argument"
        );
    }
}
