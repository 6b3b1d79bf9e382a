//! `push_down_limit`: `Limit`, `Skip` and `Top` move below a `Project`
//! (which keeps one row per row) whose slots they do not read, so
//! expressions are computed only for the rows that are returned and the
//! limit reaches the operators that can stop early.

use super::{mark, OptimizerRule, RuleContext};
use crate::usage::{op_reads, op_writes};
use rhizome_plan::{OpKind, PlanNode};

/// See the module documentation.
pub struct PushDownLimit;

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
        let mut chain: Vec<OpKind> = Vec::new();
        let mut cur = &n.inputs[0];
        while let (OpKind::Project { .. }, [input]) = (&cur.kind, cur.inputs.as_slice()) {
            chain.push(cur.kind.clone());
            cur = input;
        }
        if chain.is_empty() {
            return n;
        }
        // Projections the limit (or a projection that stays) reads must stay below.
        let mut required = op_reads(&n.kind);
        let mut keep = vec![false; chain.len()];
        for (i, p) in chain.iter().enumerate() {
            if op_writes(p).iter().any(|s| required.contains(s)) {
                keep[i] = true;
                required.extend(op_reads(p));
            }
        }
        if keep.iter().all(|&k| k) {
            return n;
        }
        let mut plan = cur.clone();
        for (p, _) in chain.iter().zip(&keep).rev().filter(|(_, &k)| k) {
            plan = PlanNode::new(p.clone(), vec![plan], 0.0);
        }
        plan = mark(PlanNode::new(n.kind.clone(), vec![plan], 0.0), self.name());
        for (p, _) in chain.iter().zip(&keep).rev().filter(|(_, &k)| !k) {
            plan = PlanNode::new(p.clone(), vec![plan], 0.0);
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
}
