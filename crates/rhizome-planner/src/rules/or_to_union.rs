//! `or_to_union`: a filter `P1 OR P2` over a pattern, where each side
//! compares an indexed property of a label-scanned node with a value known
//! before the pattern, becomes a `UNION ALL` of the pattern filtered by `P1`
//! and the pattern filtered by `P2 AND NOT coalesce(P1, false)`: each branch
//! then starts from an index seek (by `push_down_filter` and `index_seek`)
//! instead of scanning the label. A row passing both sides is kept by the
//! first branch only and a row where `P1` is null by the second only if `P2`
//! holds, so the rows are exactly those the filter keeps.
//!
//! The pattern must be one that computes the same rows each time it runs
//! (scans, expansions, filters, projections), since both branches run it.

use super::{mark, OptimizerRule, RuleContext};
use crate::context::PlannerContext;
use crate::usage::{and_all, conjuncts, expr_reads, subtree_writes};
use rhizome_common::{UnaryOp, Value};
use rhizome_plan::{BinaryOp, Expr, OpKind, PlanNode, Slot};
use std::collections::BTreeSet;

/// See the module documentation.
pub struct OrToUnion;

/// True if the plan's rows are a function of its argument row.
fn repeatable(n: &PlanNode) -> bool {
    let mut ok = true;
    n.walk(&mut |x| {
        ok &= matches!(
            x.kind,
            OpKind::Argument
                | OpKind::AllNodesScan { .. }
                | OpKind::LabelScan { .. }
                | OpKind::IndexSeek { .. }
                | OpKind::NodeByIdSeek { .. }
                | OpKind::Expand { .. }
                | OpKind::ExpandInto { .. }
                | OpKind::VarExpand { .. }
                | OpKind::Filter { .. }
                | OpKind::Project { .. }
        );
    });
    ok
}

/// Label-scanned node slots of the plan with their labels.
fn label_scans(n: &PlanNode) -> Vec<(Slot, String)> {
    let mut out = Vec::new();
    n.walk(&mut |x| {
        if let OpKind::LabelScan { out: s, label } = &x.kind {
            out.push((*s, label.clone()));
        }
    });
    out
}

/// True if a conjunct of `side` is `v.key = value` for a label-scanned `v`
/// with an index on `(label, key)` and a `value` the pattern does not bind.
fn seekable(
    side: &Expr,
    scans: &[(Slot, String)],
    bound: &BTreeSet<Slot>,
    ctx: &dyn PlannerContext,
) -> bool {
    conjuncts(side.clone()).iter().any(|c| {
        let Expr::Binary(BinaryOp::Eq, l, r) = c else {
            return false;
        };
        [(l, r), (r, l)].iter().any(|(prop, value)| {
            let Expr::Property(base, key) = &***prop else {
                return false;
            };
            let Expr::Slot(v) = **base else {
                return false;
            };
            scans
                .iter()
                .any(|(s, label)| *s == v && ctx.has_index(label, key))
                && expr_reads(value).is_disjoint(bound)
        })
    })
}

impl OptimizerRule for OrToUnion {
    fn name(&self) -> &'static str {
        "or_to_union"
    }

    fn rewrite(&self, n: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode {
        let (OpKind::Filter { predicate }, [input]) = (&n.kind, n.inputs.as_slice()) else {
            return n;
        };
        if !repeatable(input) {
            return n;
        }
        let scans = label_scans(input);
        if scans.is_empty() {
            return n;
        }
        let bound = subtree_writes(input);
        let mut conj = conjuncts(predicate.clone());
        let Some(i) = conj.iter().position(|c| {
            matches!(c, Expr::Binary(BinaryOp::Or, p1, p2)
                if seekable(p1, &scans, &bound, ctx.ctx) && seekable(p2, &scans, &bound, ctx.ctx))
        }) else {
            return n;
        };
        let Expr::Binary(BinaryOp::Or, p1, p2) = conj.remove(i) else {
            return n;
        };
        let not_p1 = Expr::Unary(
            UnaryOp::Not,
            Box::new(Expr::Function(
                "coalesce".into(),
                vec![(*p1).clone(), Expr::Literal(Value::Bool(false))],
            )),
        );
        let branch = |extra: Vec<Expr>| {
            let mut parts = conj.clone();
            parts.extend(extra);
            let predicate = and_all(parts).expect("a branch has its side of the OR");
            mark(
                PlanNode::new(
                    OpKind::Filter { predicate },
                    vec![input.clone()],
                    n.estimated_rows / 2.0,
                ),
                self.name(),
            )
        };
        let first = branch(vec![*p1]);
        let second = branch(vec![*p2, not_p1]);
        mark(
            PlanNode::new(
                OpKind::Union {
                    distinct: false,
                    slots: bound.into_iter().collect(),
                },
                vec![first, second],
                n.estimated_rows,
            ),
            self.name(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::{plan_with, Indexed};

    /// `P.id` is indexed and unique.
    const INDEXED: Indexed = Indexed {
        indexes: &[("P", "id")],
        distinct: &[],
        default_distinct: 100,
    };

    fn plan(q: &str) -> String {
        plan_with(q, Some(Box::new(OrToUnion)), &INDEXED)
    }

    #[test]
    fn an_or_of_two_seeks_becomes_a_union() {
        assert_eq!(
            plan("MATCH (a:P)-[:T]->(b:P) WHERE (a.id = $x AND b.id = $y) OR (a.id = $y AND b.id = $x) RETURN a"),
            "Union all [or_to_union]\n├─ Filter ((a.id = $x) AND (b.id = $y)) [or_to_union]\n│  └─ Expand (a)-[  anon_0:T]->(b:P)\n│     └─ LabelScan (a:P)\n│        └─ Argument\n└─ Filter (((a.id = $y) AND (b.id = $x)) AND NOT coalesce(((a.id = $x) AND (b.id = $y)), false)) [or_to_union]\n   └─ Expand (a)-[  anon_0:T]->(b:P)\n      └─ LabelScan (a:P)\n         └─ Argument"
        );
    }

    #[test]
    fn ors_without_a_seek_on_both_sides_stay() {
        for q in [
            "MATCH (a:P) WHERE a.id = 1 OR a.name = 'x' RETURN a",
            "MATCH (a:Q) WHERE a.id = 1 OR a.id = 2 RETURN a",
            "MATCH (a:P)-->(b) WHERE a.id = b.x OR a.id = 2 RETURN a",
        ] {
            assert!(!plan(q).contains("Union"), "{q}:\n{}", plan(q));
        }
    }
}
