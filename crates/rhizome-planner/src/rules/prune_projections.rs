//! `prune_projections`: removes projection items whose slot nothing reads
//! (no operator, no nested plan, not a result column), and projections left
//! empty, so values (and the properties behind them) that are never used
//! are never computed or read.

use super::{ApplyOrder, OptimizerRule, RuleContext};
use crate::usage::op_reads;
use rhizome_plan::{Expr, OpKind, PlanNode, Slot, SubqueryKind};
use std::collections::BTreeSet;

/// See the module documentation.
pub struct PruneProjections;

/// Every slot read anywhere in `node`, including inside nested plans.
fn deep_reads(node: &PlanNode, out: &mut BTreeSet<Slot>) {
    node.walk(&mut |n| {
        out.extend(op_reads(&n.kind));
        let mut kind = n.kind.clone();
        for e in kind.exprs_mut() {
            e.visit_mut(&mut |x| {
                if let Expr::Subquery(plan, k) = x {
                    deep_reads(plan, out);
                    if let SubqueryKind::Collect(v) = k {
                        out.extend(crate::usage::expr_reads(v));
                    }
                }
            });
        }
    });
}

impl OptimizerRule for PruneProjections {
    fn name(&self) -> &'static str {
        "prune_projections"
    }

    fn apply_order(&self) -> ApplyOrder {
        // Which projections are needed is known only from the whole plan.
        ApplyOrder::WholePlan
    }

    fn rewrite(&self, node: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode {
        let mut needed: BTreeSet<Slot> = ctx.columns.iter().copied().collect();
        deep_reads(&node, &mut needed);
        node.transform_up(&mut |mut n| {
            let OpKind::Project { items } = &mut n.kind else {
                return n;
            };
            let before = items.len();
            items.retain(|(s, _)| needed.contains(s));
            if items.is_empty() && n.inputs.len() == 1 {
                return n.inputs.pop().unwrap_or_else(crate::logical::argument);
            }
            if items.len() != before {
                n.rule = Some("prune_projections");
            }
            n
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    #[test]
    fn unused_projections_are_dropped() {
        assert_eq!(
            plan_empty(
                "MATCH (n) WITH n, n.name AS name, n.age AS age RETURN n, age",
                Some(Box::new(PruneProjections))
            ),
            "Projection n.age AS age [prune_projections]\n└─ AllNodesScan (n)\n   └─ Argument"
        );
        assert_eq!(
            plan_empty(
                "MATCH (n) WITH n, n.name AS name RETURN n",
                Some(Box::new(PruneProjections))
            ),
            "AllNodesScan (n)\n└─ Argument"
        );
    }
}
