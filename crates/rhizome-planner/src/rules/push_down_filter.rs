//! `push_down_filter`: moves each conjunct of a filter as far down the plan
//! as the slots it reads allow (below expands, projections, unwinds, scans
//! and sorts that do not write them, into the input side of optional and
//! apply operators, into the matching side of joins), merging it with
//! filters it meets. Rows are dropped as early as possible; nothing is
//! pushed below an operator that changes which rows exist by looking at
//! all of them (aggregation, distinct, skip/limit/top, union).

use super::{OptimizerRule, RuleContext};
use crate::usage::{and_all, conjuncts, expr_reads, op_writes, subtree_writes};
use rhizome_plan::{Expr, OpKind, PlanNode, Slot};
use std::collections::BTreeSet;

/// See the module documentation.
pub struct PushDownFilter;

const NAME: &str = "push_down_filter";

fn wrap(conj: Vec<Expr>, node: PlanNode, mark: bool) -> PlanNode {
    match and_all(conj) {
        Some(predicate) => {
            let mut f = PlanNode::new(OpKind::Filter { predicate }, vec![node], 0.0);
            if mark {
                f.rule = Some(NAME);
            }
            f
        }
        None => node,
    }
}

fn disjoint(reads: &BTreeSet<Slot>, writes: &BTreeSet<Slot>) -> bool {
    reads.is_disjoint(writes)
}

/// Applies `conj` to `node` at the deepest valid place; returns whether anything moved.
fn sink(conj: Vec<Expr>, mut node: PlanNode) -> (PlanNode, bool) {
    if conj.is_empty() {
        return (node, false);
    }
    // Per input: conjuncts that go into it.
    let mut into: Vec<Vec<Expr>> = vec![Vec::new(); node.inputs.len()];
    let mut stay = Vec::new();
    match &node.kind {
        OpKind::Filter { predicate } if node.inputs.len() == 1 => {
            let mut all = conjuncts(predicate.clone());
            all.extend(conj);
            let input = node.inputs.pop().unwrap_or_else(crate::logical::argument);
            let (n, _) = sink(all.clone(), input);
            return (n, true);
        }
        OpKind::Expand { .. }
        | OpKind::ExpandInto { .. }
        | OpKind::VarExpand { .. }
        | OpKind::Project { .. }
        | OpKind::Unwind { .. }
        | OpKind::Sort { .. }
        | OpKind::AllNodesScan { .. }
        | OpKind::LabelScan { .. }
        | OpKind::IndexSeek { .. }
        | OpKind::NodeByIdSeek { .. }
        | OpKind::ShortestPath { .. }
        | OpKind::ProcedureCall { .. }
        | OpKind::ExpandCount { .. }
        | OpKind::SemiApply { .. }
            if !node.inputs.is_empty() =>
        {
            let writes: BTreeSet<Slot> = op_writes(&node.kind).into_iter().collect();
            for c in conj {
                if disjoint(&expr_reads(&c), &writes) {
                    into[0].push(c);
                } else {
                    stay.push(c);
                }
            }
        }
        OpKind::Optional { .. } | OpKind::Apply { .. } if node.inputs.len() == 2 => {
            let writes = subtree_writes(&node.inputs[1]);
            for c in conj {
                if disjoint(&expr_reads(&c), &writes) {
                    into[0].push(c);
                } else {
                    stay.push(c);
                }
            }
        }
        OpKind::CartesianProduct | OpKind::HashJoin { .. } if node.inputs.len() == 2 => {
            // CartesianProduct: [left, right]; HashJoin: [build, probe]. The
            // second (resp. first) side is computed once, from its own slots only.
            let once = if matches!(node.kind, OpKind::CartesianProduct) {
                1
            } else {
                0
            };
            let other = 1 - once;
            let once_writes = subtree_writes(&node.inputs[once]);
            for c in conj {
                let reads = expr_reads(&c);
                if !reads.is_empty() && reads.is_subset(&once_writes) {
                    into[once].push(c);
                } else if disjoint(&reads, &once_writes) {
                    into[other].push(c);
                } else {
                    stay.push(c);
                }
            }
        }
        _ => return (wrap(conj, node, true), false),
    }
    if into.iter().all(Vec::is_empty) {
        return (wrap(stay, node, true), false);
    }
    let inputs = std::mem::take(&mut node.inputs);
    node.inputs = inputs
        .into_iter()
        .zip(into)
        .map(|(input, c)| sink(c, input).0)
        .collect();
    (wrap(stay, node, true), true)
}

impl OptimizerRule for PushDownFilter {
    fn name(&self) -> &'static str {
        NAME
    }

    fn rewrite(&self, n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        let OpKind::Filter { predicate } = &n.kind else {
            return n;
        };
        if n.inputs.len() != 1 {
            return n;
        }
        let conj = conjuncts(predicate.clone());
        let input = n.inputs[0].clone();
        let (moved, changed) = sink(conj, input);
        if changed {
            moved
        } else {
            n
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    #[test]
    fn filters_sink_below_projections_and_expands() {
        let q = "MATCH (a)-->(b) WITH a, b, b.x AS x WHERE a.y = 1 AND x = 2 RETURN a";
        let before = plan_empty(q, None);
        let after = plan_empty(q, Some(Box::new(PushDownFilter)));
        assert!(
            before.starts_with("Filter ((a.y = 1) AND (x = 2))"),
            "{before}"
        );
        assert_eq!(
            after,
            "Filter (x = 2) [push_down_filter]\n└─ Projection b.x AS x\n   └─ Expand (a)-[  anon_0]->(b)\n      └─ Filter (a.y = 1) [push_down_filter]\n         └─ AllNodesScan (a)\n            └─ Argument"
        );
    }

    #[test]
    fn filters_stop_at_aggregation_and_limit() {
        let q = "MATCH (a) WITH a LIMIT 3 WHERE a.y = 1 RETURN a";
        assert_eq!(
            plan_empty(q, None),
            plan_empty(q, Some(Box::new(PushDownFilter)))
        );
    }
}
