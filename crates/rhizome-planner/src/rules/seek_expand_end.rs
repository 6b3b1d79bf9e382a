//! `seek_expand_end`: a filter `v.key = value` over a chain of row-at-a-time
//! operators that starts at the enclosing `Argument`, where `v` is the
//! neighbour of an `Expand` checked for a label with an index on `key`
//! that finds at most about one node per value, and `value` reads only
//! slots bound before the chain, seeks `v` through the index at the start
//! of the chain and turns the `Expand` into an `ExpandInto`: the chain then
//! checks the last hop against one bound node instead of reading the
//! property of every neighbour it reaches (IC14's weighing comprehensions,
//! `(a)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(:Post)-[:HAS_CREATOR]->(b:Person)
//! WHERE … b.id = endNode(r).id`).
//!
//! The rows are the same: the `Expand` kept the relationships to a
//! neighbour with the label, the filter those whose neighbour has
//! `key = value`; the seek binds exactly the nodes with the label and
//! `key = value`, and the `ExpandInto` keeps the relationships to the
//! bound node, one row per relationship as before. Every operator of the
//! chain passes its input slots through row by row, so binding `v` earlier
//! changes no other value. Like [`super::IndexSeek`], the value is then
//! computed once per outer row rather than per candidate row.

use super::{mark, OptimizerRule, RuleContext};
use crate::usage::{and_all, conjuncts, expr_reads, subtree_writes};
use rhizome_common::Value;
use rhizome_plan::{BinaryOp, Expr, IndexLookup, OpKind, PlanNode, Slot};

/// See the module documentation.
pub struct SeekExpandEnd;

/// Most rows the seek may expect (the chain runs once per sought node).
const MAX_SEEK_ROWS: f64 = 1.5;

/// True for operators that extend or drop rows one input row at a time and
/// keep every input slot.
fn row_at_a_time(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::AllNodesScan { .. }
            | OpKind::LabelScan { .. }
            | OpKind::IndexSeek { .. }
            | OpKind::NodeByIdSeek { .. }
            | OpKind::Expand { .. }
            | OpKind::ExpandInto { .. }
            | OpKind::VarExpand { .. }
            | OpKind::Filter { .. }
            | OpKind::Project { .. }
    )
}

/// True if `n` is a chain of [`row_at_a_time`] operators down to an `Argument`.
fn chain_from_argument(n: &PlanNode) -> bool {
    let mut cur = n;
    loop {
        match (&cur.kind, cur.inputs.as_slice()) {
            (OpKind::Argument, []) => return true,
            (kind, [input]) if row_at_a_time(kind) => cur = input,
            _ => return false,
        }
    }
}

/// The labels of the non-optional `Expand` of the chain that writes `v`.
fn expand_labels(n: &PlanNode, v: Slot) -> Option<&[String]> {
    let mut cur = n;
    loop {
        if let OpKind::Expand {
            to,
            to_labels,
            optional: false,
            ..
        } = &cur.kind
        {
            if *to == v {
                return Some(to_labels);
            }
        }
        cur = cur.inputs.first()?;
    }
}

/// `v.key = value` (either way round) as `(v, key, value)`.
fn property_equality(e: &Expr) -> Option<(Slot, String, Expr)> {
    let Expr::Binary(BinaryOp::Eq, l, r) = e else {
        return None;
    };
    [(l, r), (r, l)].into_iter().find_map(|(prop, value)| {
        let Expr::Property(base, key) = &**prop else {
            return None;
        };
        let Expr::Slot(v) = **base else {
            return None;
        };
        Some((v, key.clone(), (**value).clone()))
    })
}

/// The chain with `v`'s `Expand` turned into an `ExpandInto` and `seek`
/// placed over its `Argument`.
fn rebuild(n: &PlanNode, v: Slot, seek: &OpKind, rule: &'static str) -> PlanNode {
    if let OpKind::Argument = n.kind {
        return mark(PlanNode::new(seek.clone(), vec![n.clone()], 1.0), rule);
    }
    let inputs: Vec<PlanNode> = n.inputs.iter().map(|i| rebuild(i, v, seek, rule)).collect();
    match &n.kind {
        OpKind::Expand {
            from,
            rel,
            to,
            types,
            direction,
            distinct_from,
            optional: false,
            ..
        } if *to == v => mark(
            PlanNode::new(
                OpKind::ExpandInto {
                    from: *from,
                    rel: *rel,
                    to: v,
                    types: types.clone(),
                    direction: *direction,
                    distinct_from: distinct_from.clone(),
                    optional: false,
                },
                inputs,
                n.estimated_rows,
            ),
            rule,
        ),
        _ => {
            let mut out = n.clone();
            out.inputs = inputs;
            out
        }
    }
}

impl OptimizerRule for SeekExpandEnd {
    fn name(&self) -> &'static str {
        "seek_expand_end"
    }

    fn rewrite(&self, n: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode {
        let pctx = ctx.ctx;
        let (OpKind::Filter { predicate }, [input]) = (&n.kind, n.inputs.as_slice()) else {
            return n;
        };
        if !chain_from_argument(input) {
            return n;
        }
        let bound = subtree_writes(input);
        let conj = conjuncts(predicate.clone());
        let found = conj.iter().enumerate().find_map(|(i, c)| {
            let (v, key, value) = property_equality(c)?;
            if matches!(value, Expr::List(_) | Expr::Literal(Value::List(_))) {
                return None;
            }
            if !expr_reads(&value).is_disjoint(&bound) {
                return None;
            }
            let [label] = expand_labels(input, v)? else {
                return None;
            };
            let seekable = pctx.has_index(label, &key)
                && crate::cost::seek_rows(pctx, label, &key) <= MAX_SEEK_ROWS;
            seekable.then(|| (i, v, label.clone(), key, value))
        });
        let Some((i, v, label, key, value)) = found else {
            return n;
        };
        let seek = OpKind::IndexSeek {
            out: v,
            label,
            key,
            lookup: IndexLookup::Equal(value),
        };
        let chain = rebuild(input, v, &seek, self.name());
        let rest: Vec<Expr> = conj
            .into_iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, c)| c)
            .collect();
        match and_all(rest) {
            Some(predicate) => mark(
                PlanNode::new(OpKind::Filter { predicate }, vec![chain], n.estimated_rows),
                self.name(),
            ),
            None => chain,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::{plan_with, Indexed};

    /// `P.id` is indexed and unique, `P.age` indexed with few values.
    const INDEXED: Indexed = Indexed {
        indexes: &[("P", "id"), ("P", "age")],
        distinct: &[("id", 100)],
        default_distinct: 5,
    };

    fn plan(q: &str) -> String {
        plan_with(q, Some(Box::new(SeekExpandEnd)), &INDEXED)
    }

    #[test]
    fn the_expanded_end_is_sought_and_reached_with_expand_into() {
        assert_eq!(
            plan("MATCH (a:P {id: $x})<-[:C]-(m)-[:C]->(b:P) WHERE b.id = $y AND m.k = 1 RETURN m"),
            "ExpandInto (m)-[  anon_1:C]->(b) [seek_expand_end]\n\
             └─ Filter (m.k = 1)\n   \
                └─ Expand (a)<-[  anon_0:C]-(m)\n      \
                   └─ Filter (a.id = $x)\n         \
                      └─ LabelScan (a:P)\n            \
                         └─ IndexSeek (b:P {id = $y}) [seek_expand_end]\n               \
                            └─ Argument"
        );
    }

    #[test]
    fn inside_an_optional_match_the_inner_side_is_sought() {
        // No node found leaves the inner side empty, as the filter did, so
        // `Optional` still pads the row with nulls.
        assert_eq!(
            plan("MATCH (a:P) OPTIONAL MATCH (a)-[:C]->(b:P) WHERE b.id = $y RETURN a"),
            "Optional\n\
             ├─ LabelScan (a:P)\n\
             │  └─ Argument\n\
             └─ ExpandInto (a)-[  anon_0:C]->(b) [seek_expand_end]\n   \
                └─ IndexSeek (b:P {id = $y}) [seek_expand_end]\n      \
                   └─ Argument"
        );
    }

    #[test]
    fn it_stays_without_a_selective_index_an_outer_value_or_a_label() {
        for q in [
            // Many nodes per value: the chain would run once per node.
            "MATCH (a:P)-[:C]->(b:P) WHERE b.age = $y RETURN a",
            // No index.
            "MATCH (a:P)-[:C]->(b:Q) WHERE b.id = $y RETURN a",
            // No label on the neighbour.
            "MATCH (a:P)-[:C]->(b) WHERE b.id = $y RETURN a",
            // The value depends on the chain.
            "MATCH (a:P)-[:C]->(b:P) WHERE b.id = a.id RETURN a",
        ] {
            assert!(!plan(q).contains("seek_expand_end"), "{q}:\n{}", plan(q));
        }
    }
}
