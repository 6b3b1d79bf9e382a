//! `distinct_endpoints`: "do not enumerate what you only deduplicate". An
//! aggregation whose every aggregate ignores duplicates (`min`, `max`, and
//! any `DISTINCT` aggregate) and whose keys and arguments read only the
//! last node of a chain of `Expand`s gets, in place of the chain, a
//! `DistinctEndpoints` that computes the set of nodes the chain reaches hop
//! by hop (one frontier per hop) and produces each once: the aggregate sees
//! every value the paths would have given it, without the paths. Since each
//! node comes once, an aggregate of the node itself drops its `DISTINCT`.
//!
//! Relationship uniqueness stays exact. The runtime keeps consecutive hops
//! apart itself; every other pair of hops in the walk must have disjoint,
//! named type sets (so they can never match the same relationship), and no
//! hop may have to differ from a relationship bound below the walk. The
//! walk is the longest run of top hops that meets both conditions; with
//! none (even one hop must differ from a relationship below it), the plan
//! stays as it is.
//!
//! The walk's frontiers are dense over node ids, so its start nodes must
//! come from a scan (of all nodes or a label, possibly filtered) of the
//! argument row: a walk from a few sought or bound nodes — once per outer
//! row of a subquery — is cheaper enumerated.

use super::{mark, OptimizerRule, RuleContext};
use crate::usage::expr_reads;
use rhizome_plan::{Expr, FrontierHop, OpKind, PlanNode, Slot};

/// See the module documentation.
pub struct DistinctEndpoints;

/// One `Expand` of the chain, top first.
struct ChainHop {
    from: Slot,
    rel: Slot,
    hop: FrontierHop,
    distinct_from: Vec<Slot>,
}

/// True if `e` reads no slot but `to` and gives the same value whenever it
/// is evaluated on the same node (no random functions, no subqueries).
fn reads_only(e: &Expr, to: Slot) -> bool {
    let mut pure = true;
    e.visit(&mut |x| match x {
        Expr::Function(name, _) if matches!(name.as_str(), "rand" | "randomuuid") => pure = false,
        Expr::Subquery(..) => pure = false,
        _ => {}
    });
    pure && expr_reads(e).iter().all(|s| *s == to)
}

/// True if no relationship can match both type lists.
fn types_disjoint(a: &[String], b: &[String]) -> bool {
    !a.is_empty() && !b.is_empty() && a.iter().all(|t| !b.contains(t))
}

/// The chain of non-optional `Expand`s ending at `to`, top first, and the
/// node below each hop.
fn chain(mut node: &PlanNode, mut to: Slot) -> Vec<(ChainHop, &PlanNode)> {
    let mut hops = Vec::new();
    while let (
        OpKind::Expand {
            from,
            rel,
            to: t,
            types,
            direction,
            to_labels,
            distinct_from,
            optional: false,
        },
        [input],
    ) = (&node.kind, node.inputs.as_slice())
    {
        if *t != to {
            break;
        }
        hops.push((
            ChainHop {
                from: *from,
                rel: *rel,
                hop: FrontierHop {
                    types: types.clone(),
                    direction: *direction,
                    to_labels: to_labels.clone(),
                },
                distinct_from: distinct_from.clone(),
            },
            input,
        ));
        to = *from;
        node = input;
    }
    hops
}

/// True if `n` is a scan of all nodes or of a label, under filters, over
/// the argument row.
fn scan_of_argument(n: &PlanNode) -> bool {
    match (&n.kind, n.inputs.as_slice()) {
        (OpKind::Filter { .. }, [input]) => scan_of_argument(input),
        (OpKind::AllNodesScan { .. } | OpKind::LabelScan { .. }, [input]) => {
            matches!(input.kind, OpKind::Argument)
        }
        _ => false,
    }
}

/// How many of the top hops (`hops`, top first) form a walk whose
/// uniqueness the runtime can keep exactly.
fn exact_walk_len(hops: &[(ChainHop, &PlanNode)]) -> usize {
    let mut best = 0;
    for len in 1..=hops.len() {
        let walk = &hops[..len];
        let rels: Vec<Slot> = walk.iter().map(|(h, _)| h.rel).collect();
        let inside = walk
            .iter()
            .all(|(h, _)| h.distinct_from.iter().all(|s| rels.contains(s)));
        let apart = (0..len).all(|i| {
            (i + 2..len).all(|j| types_disjoint(&walk[i].0.hop.types, &walk[j].0.hop.types))
        });
        if inside && apart {
            best = len;
        }
    }
    best
}

impl OptimizerRule for DistinctEndpoints {
    fn name(&self) -> &'static str {
        "distinct_endpoints"
    }

    fn rewrite(&self, n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        let (OpKind::Aggregate { keys, aggregates }, [below]) = (&n.kind, n.inputs.as_slice())
        else {
            return n;
        };
        let OpKind::Expand { to, .. } = &below.kind else {
            return n;
        };
        let to = *to;
        let all_ignore_duplicates = !aggregates.is_empty()
            && aggregates.iter().all(|a| {
                a.ignores_duplicates()
                    && !a.args.is_empty()
                    && a.args.iter().all(|x| reads_only(x, to))
            });
        if !all_ignore_duplicates || !keys.iter().all(|(_, k)| reads_only(k, to)) {
            return n;
        }
        let hops = chain(below, to);
        let len = exact_walk_len(&hops);
        if len == 0 || !scan_of_argument(hops[len - 1].1) {
            return n;
        }
        let start = hops[len - 1].0.from;
        let input = hops[len - 1].1.clone();
        let walk: Vec<FrontierHop> = hops[..len]
            .iter()
            .rev()
            .map(|(h, _)| h.hop.clone())
            .collect();
        let endpoints = mark(
            PlanNode::new(
                OpKind::DistinctEndpoints {
                    from: start,
                    hops: walk,
                    to,
                },
                vec![input],
                below.estimated_rows.sqrt(),
            ),
            self.name(),
        );
        // Each end node arrives once, so an aggregate of the node itself
        // needs no DISTINCT of its own.
        let aggregates = aggregates
            .iter()
            .map(|a| {
                let mut a = a.clone();
                if matches!(a.args.as_slice(), [Expr::Slot(s)] if *s == to) {
                    a.distinct = false;
                }
                a
            })
            .collect();
        let out = PlanNode::new(
            OpKind::Aggregate {
                keys: keys.clone(),
                aggregates,
            },
            vec![endpoints],
            n.estimated_rows,
        );
        mark(out, self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    fn plan(q: &str) -> String {
        plan_empty(q, Some(Box::new(DistinctEndpoints)))
    }

    #[test]
    fn two_hops_become_a_frontier_walk() {
        assert_eq!(
            plan("MATCH (a)-->(b)-->(c) RETURN count(DISTINCT c) AS n"),
            "Aggregate keys [], aggregates [Count(c) AS n] [distinct_endpoints]\n└─ DistinctEndpoints distinct c of (a)-[]->()-[]->(c) [distinct_endpoints]\n   └─ AllNodesScan (a)\n      └─ Argument"
        );
    }

    #[test]
    fn min_max_and_distinct_collect_of_the_end_node() {
        let text = plan(
            "MATCH (a:A)-[:T]->(b)<-[:U]-(c:C) RETURN c.x AS k, min(c.y) AS lo, max(c.y) AS hi, collect(DISTINCT c.z) AS zs",
        );
        assert!(
            text.contains("DistinctEndpoints distinct c of (a)-[:T]->()<-[:U]-(c:C)"),
            "{text}"
        );
    }

    #[test]
    fn duplicate_sensitive_or_other_reads_prevent_it() {
        for q in [
            "MATCH (a)-->(b)-->(c) RETURN count(c)",
            "MATCH (a)-->(b)-->(c) RETURN collect(c)",
            "MATCH (a)-->(b)-->(c) RETURN count(DISTINCT b)",
            "MATCH (a)-->(b)-->(c) RETURN a, count(DISTINCT c)",
            "MATCH (a)-->(b)-->(c) RETURN count(DISTINCT c), count(*)",
            "MATCH (a)-->(b)-[r]->(c) WHERE r.w > 1 RETURN count(DISTINCT c)",
            "MATCH (a)-->(b) OPTIONAL MATCH (b)-->(c) RETURN count(DISTINCT c)",
        ] {
            assert!(!plan(q).contains("DistinctEndpoints"), "{q}:\n{}", plan(q));
        }
    }

    #[test]
    fn walks_keep_uniqueness_exact() {
        // Hops 1 and 3 could share a relationship: the last hop must differ
        // from relationships below any shorter walk, so nothing is rewritten.
        assert!(
            !plan("MATCH (a)-->(b)-->(c)-->(d) RETURN count(DISTINCT d)")
                .contains("DistinctEndpoints")
        );
        // Disjoint types between hops 1 and 3: the whole chain is one walk.
        let text = plan("MATCH (a)-[:T]->(b)-->(c)-[:U]->(d) RETURN count(DISTINCT d)");
        assert!(
            text.contains("DistinctEndpoints distinct d of (a)-[:T]->()-[]->()-[:U]->(d)"),
            "{text}"
        );
        // The start nodes must come from a scan, not from rows of an
        // earlier part of the query (nor an outer row).
        for q in [
            "MATCH (x)-[:T]->(a) WITH a MATCH (a)-->(b)-->(c) RETURN count(DISTINCT c)",
            "MATCH (p) CALL { WITH p MATCH (p)-->()-->(c) RETURN count(DISTINCT c) AS n } RETURN n",
        ] {
            assert!(!plan(q).contains("DistinctEndpoints"), "{q}:\n{}", plan(q));
        }
        let text = plan("MATCH (a:A) WHERE a.x > 1 MATCH (a)-->(b)-->(c) RETURN count(DISTINCT c)");
        assert!(
            text.contains("DistinctEndpoints distinct c of (a)"),
            "{text}"
        );
    }
}
