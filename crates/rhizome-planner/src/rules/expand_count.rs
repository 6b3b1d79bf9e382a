//! `expand_count`: "do not enumerate what you only count". An aggregation
//! that only counts rows (`count(*)`, or `count` of the last hop's
//! relationship or end node, which are never null) directly over the last
//! `Expand` of a pattern, whose relationship and end node nothing else
//! reads, becomes an `ExpandCount` writing each row's number of matches,
//! summed by the aggregation. A filter between them that reads only the
//! relationship becomes the `rel_predicate`, a label check on the end node
//! joins `to_labels`; relationship uniqueness is kept via `distinct_from`.
//! With grouping keys, rows counting zero are dropped (they would not have
//! existed as rows, so they must not create groups).

use super::{mark, OptimizerRule, RuleContext};
use crate::usage::{and_all, conjuncts, expr_reads};
use rhizome_common::Value;
use rhizome_plan::{AggregateItem, AggregateKind, BinaryOp, Expr, OpKind, PlanNode, Slot};

/// See the module documentation.
pub struct ExpandCount;

/// The pieces of an `Expand` (non-optional) the rewrite needs.
struct Hop {
    from: Slot,
    rel: Slot,
    to: Slot,
    types: Vec<String>,
    direction: rhizome_plan::ExpandDirection,
    to_labels: Vec<String>,
    distinct_from: Vec<Slot>,
    input: PlanNode,
}

fn hop(n: &PlanNode) -> Option<Hop> {
    match (&n.kind, n.inputs.as_slice()) {
        (
            OpKind::Expand {
                from,
                rel,
                to,
                types,
                direction,
                to_labels,
                distinct_from,
                optional: false,
            },
            [input],
        ) => Some(Hop {
            from: *from,
            rel: *rel,
            to: *to,
            types: types.clone(),
            direction: *direction,
            to_labels: to_labels.clone(),
            distinct_from: distinct_from.clone(),
            input: input.clone(),
        }),
        _ => None,
    }
}

impl OptimizerRule for ExpandCount {
    fn name(&self) -> &'static str {
        "expand_count"
    }

    fn rewrite(&self, n: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode {
        let slots = &mut *ctx.slots;
        let (OpKind::Aggregate { keys, aggregates }, [below]) = (&n.kind, n.inputs.as_slice())
        else {
            return n;
        };
        if aggregates.is_empty() {
            return n;
        }
        let (filter, expand) = match (&below.kind, below.inputs.as_slice()) {
            (OpKind::Filter { predicate }, [e]) => (Some(predicate.clone()), e),
            _ => (None, below),
        };
        let Some(mut h) = hop(expand) else {
            return n;
        };
        let (rel, to) = (h.rel, h.to);
        // Only row counts: count(*) or count of a value the hop always binds.
        let counts_rows = aggregates.iter().all(|a| {
            !a.distinct
                && match a.function {
                    AggregateKind::CountStar => true,
                    AggregateKind::Count => {
                        matches!(a.args.as_slice(), [Expr::Slot(s)] if *s == rel || *s == to)
                    }
                    _ => false,
                }
        });
        if !counts_rows {
            return n;
        }
        if keys.iter().any(|(_, k)| {
            let r = expr_reads(k);
            r.contains(&rel) || r.contains(&to)
        }) {
            return n;
        }
        let mut rel_preds = Vec::new();
        if let Some(p) = filter {
            for c in conjuncts(p) {
                let reads = expr_reads(&c);
                match &c {
                    Expr::HasLabels(base, labels) if **base == Expr::Slot(to) => {
                        h.to_labels.extend(labels.iter().cloned());
                    }
                    _ if reads.contains(&to) => return n,
                    _ => rel_preds.push(c),
                }
            }
        }
        let count_slot = slots.anon();
        let rel_predicate = and_all(rel_preds).map(|p| (rel, p));
        let mut plan = mark(
            PlanNode::new(
                OpKind::ExpandCount {
                    from: h.from,
                    prefix: Vec::new(),
                    types: h.types,
                    direction: h.direction,
                    to_labels: h.to_labels,
                    rel_predicate,
                    distinct_from: h.distinct_from,
                    count_slot,
                },
                vec![h.input],
                0.0,
            ),
            self.name(),
        );
        if !keys.is_empty() {
            plan = PlanNode::new(
                OpKind::Filter {
                    predicate: Expr::Binary(
                        BinaryOp::Gt,
                        Box::new(Expr::Slot(count_slot)),
                        Box::new(Expr::Literal(Value::Int(0))),
                    ),
                },
                vec![plan],
                0.0,
            );
        }
        let aggregates = aggregates
            .iter()
            .map(|a| AggregateItem {
                slot: a.slot,
                function: AggregateKind::Sum,
                args: vec![Expr::Slot(count_slot)],
                distinct: false,
            })
            .collect();
        mark(
            PlanNode::new(
                OpKind::Aggregate {
                    keys: keys.clone(),
                    aggregates,
                },
                vec![plan],
                0.0,
            ),
            self.name(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    fn count(q: &str) -> String {
        plan_empty(q, Some(Box::new(ExpandCount)))
    }

    #[test]
    fn counting_the_last_hop() {
        assert_eq!(
            count("MATCH (a)-[:T]->(b)-[r:T]->(c:C) WHERE r.w > 2 RETURN count(*) AS n"),
            "Aggregate keys [], aggregates [Sum(  anon_1) AS n] [expand_count]\n└─ ExpandCount count of (b)-[:T]->(:C) AS   anon_1 [expand_count]\n   └─ Expand (a)-[  anon_0:T]->(b)\n      └─ AllNodesScan (a)\n         └─ Argument"
        );
    }

    #[test]
    fn grouped_counts_drop_zero_rows() {
        let text = count("MATCH (a)-[:T]->(b) RETURN a, count(b) AS n");
        assert!(
            text.contains("Filter (  anon_1 > 0)\n   └─ ExpandCount"),
            "{text}"
        );
    }

    #[test]
    fn used_end_nodes_or_other_aggregates_prevent_it() {
        assert!(!count("MATCH (a)-[:T]->(b) RETURN b, count(*)").contains("ExpandCount"));
        assert!(!count("MATCH (a)-[:T]->(b) WHERE b.x = 1 RETURN count(*)").contains("ExpandCount"));
        assert!(!count("MATCH (a)-[:T]->(b) RETURN count(*), collect(a)").contains("ExpandCount"));
        assert!(!count("MATCH (a)-[:T]->(b) RETURN count(DISTINCT b)").contains("ExpandCount"));
    }

    #[test]
    fn uniqueness_is_kept() {
        let analyzed =
            rhizome_cypher::compile("MATCH (a)-[r1]->(b)-[r2]->(c) RETURN count(*)").unwrap();
        let planned = crate::plan_statement(&analyzed, &crate::EmptyContext).unwrap();
        let mut found = None;
        planned.plan.root.walk(&mut |n| {
            if let OpKind::ExpandCount {
                distinct_from,
                prefix,
                ..
            } = &n.kind
            {
                found = Some((distinct_from.clone(), prefix.len()));
            }
        });
        let r1 = planned
            .plan
            .slot_names
            .iter()
            .position(|n| n == "r1")
            .unwrap();
        // Either r2 must differ from r1, or fuse_count_hops walked r1 and
        // keeps the walk's relationships distinct itself.
        assert!(
            found == Some((vec![r1], 0)) || found == Some((vec![], 1)),
            "{found:?}"
        );
    }
}
