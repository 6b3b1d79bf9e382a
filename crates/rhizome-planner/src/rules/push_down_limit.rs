//! `push_down_limit`: `Limit`, `Skip` and `Top` move below a `Project`
//! (which keeps one row per row) whose slots they do not read, so
//! expressions are computed only for the rows that are returned and the
//! limit reaches the operators that can stop early. A `Project` the limit
//! reads in part is split: the items the limit needs (and the earlier items
//! those read) stay below it, the others move above it (a `Top` by a date
//! over rows with long texts then reads the texts of its few rows only).

use super::{mark, OptimizerRule, RuleContext};
use crate::usage::{expr_reads, op_reads};
use rhizome_plan::{Expr, OpKind, PlanNode, Slot};
use std::collections::BTreeSet;

/// See the module documentation.
pub struct PushDownLimit;

type Items = Vec<(Slot, Expr)>;

/// Splits `items` (evaluated in order) into those `required` needs, with
/// the earlier items they read, and the rest; adds the reads of the kept
/// items to `required`.
fn split(items: &[(Slot, Expr)], required: &mut BTreeSet<Slot>) -> (Items, Items) {
    let mut keep = vec![false; items.len()];
    for (i, (slot, e)) in items.iter().enumerate().rev() {
        if required.contains(slot) {
            keep[i] = true;
            required.extend(expr_reads(e));
        }
    }
    let (mut kept, mut moved) = (Vec::new(), Vec::new());
    for (item, k) in items.iter().zip(keep) {
        if k {
            kept.push(item.clone());
        } else {
            moved.push(item.clone());
        }
    }
    (kept, moved)
}

fn project(items: Items, input: PlanNode) -> PlanNode {
    if items.is_empty() {
        return input;
    }
    PlanNode::new(OpKind::Project { items }, vec![input], 0.0)
}

impl OptimizerRule for PushDownLimit {
    fn name(&self) -> &'static str {
        "push_down_limit"
    }

    fn rewrite(&self, n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        if !matches!(
            n.kind,
            OpKind::Limit { .. } | OpKind::Skip { .. } | OpKind::Top { .. }
        ) || n.inputs.len() != 1
        {
            return n;
        }
        // The chain of projections directly below, top first.
        let mut chain: Vec<&Items> = Vec::new();
        let mut cur = &n.inputs[0];
        while let (OpKind::Project { items }, [input]) = (&cur.kind, cur.inputs.as_slice()) {
            chain.push(items);
            cur = input;
        }
        if chain.is_empty() {
            return n;
        }
        // Items the limit (or an item that stays) reads must stay below.
        let mut required = op_reads(&n.kind);
        let parts: Vec<(Items, Items)> = chain
            .iter()
            .map(|items| split(items, &mut required))
            .collect();
        if parts.iter().all(|(_, moved)| moved.is_empty()) {
            return n;
        }
        let mut plan = cur.clone();
        for (kept, _) in parts.iter().rev() {
            plan = project(kept.clone(), plan);
        }
        plan = mark(PlanNode::new(n.kind.clone(), vec![plan], 0.0), self.name());
        for (_, moved) in parts.into_iter().rev() {
            plan = project(moved, plan);
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    #[test]
    fn top_moves_below_projections_it_does_not_read() {
        let q = "MATCH (n) RETURN n.x AS x, n.y AS y ORDER BY n.z LIMIT 5";
        let all: Vec<Box<dyn OptimizerRule>> =
            vec![Box::new(crate::rules::LimitToTop), Box::new(PushDownLimit)];
        let analyzed = rhizome_cypher::compile(q).unwrap();
        let planned = crate::plan_statement_with(&analyzed, &crate::EmptyContext, &all).unwrap();
        let text = rhizome_plan::render_plan(&planned.plan, &mut |_, _| String::new());
        assert!(text.starts_with("Projection n.x AS x, n.y AS y"), "{text}");
    }

    #[test]
    fn limit_moves_below_projection() {
        assert_eq!(
            plan_empty("MATCH (n) RETURN n.x AS x LIMIT 5", Some(Box::new(PushDownLimit))),
            "Projection n.x AS x\n└─ Limit 5 [push_down_limit]\n   └─ AllNodesScan (n)\n      └─ Argument"
        );
    }

    #[test]
    fn top_splits_a_projection_it_reads_in_part() {
        // The sort key stays below the top; the other columns move above.
        let q = "MATCH (n) RETURN n.x AS x, n.y AS y, n.z AS z ORDER BY z DESC LIMIT 5";
        let all: Vec<Box<dyn OptimizerRule>> =
            vec![Box::new(crate::rules::LimitToTop), Box::new(PushDownLimit)];
        let analyzed = rhizome_cypher::compile(q).unwrap();
        let planned = crate::plan_statement_with(&analyzed, &crate::EmptyContext, &all).unwrap();
        let text = rhizome_plan::render_plan(&planned.plan, &mut |_, _| String::new());
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("Projection n.x AS x, n.y AS y"),
            "{text}"
        );
        assert!(lines[1].contains("Top z DESC LIMIT 5"), "{text}");
        assert!(lines[2].contains("Projection n.z AS z"), "{text}");
    }

    #[test]
    fn an_item_a_kept_item_reads_stays_below() {
        // `b` reads `a` (items are evaluated in order): both stay below.
        let q = "MATCH (n) WITH n, n.x AS a WITH n, a, a + 1 AS b, n.y AS c RETURN b, c ORDER BY b LIMIT 2";
        let all: Vec<Box<dyn OptimizerRule>> =
            vec![Box::new(crate::rules::LimitToTop), Box::new(PushDownLimit)];
        let analyzed = rhizome_cypher::compile(q).unwrap();
        let planned = crate::plan_statement_with(&analyzed, &crate::EmptyContext, &all).unwrap();
        let text = rhizome_plan::render_plan(&planned.plan, &mut |_, _| String::new());
        let top = text.find("Top").expect("a Top");
        let (above, below) = text.split_at(top);
        assert!(above.contains("n.y AS c"), "{text}");
        assert!(
            below.contains("n.x AS a") && below.contains("(a + 1) AS b"),
            "{text}"
        );
    }
}
