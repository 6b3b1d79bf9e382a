//! `exists_to_semi_apply`: a top-level `EXISTS` conjunct of a filter (a
//! pattern predicate or `EXISTS { }`, possibly negated) becomes a
//! `SemiApply` (`AntiSemiApply`) whose inner plan stops at its first row:
//! a scoped probe per row with early exit instead of evaluating a subquery
//! expression. The other conjuncts are applied first, as a filter below.

use super::{mark, OptimizerRule, RuleContext};
use crate::usage::{and_all, conjuncts};
use rhizome_plan::{Expr, OpKind, PlanNode, SubqueryKind, UnaryOp};

/// See the module documentation.
pub struct ExistsToSemiApply;

fn as_exists(e: &Expr) -> Option<(PlanNode, bool)> {
    match e {
        Expr::Subquery(plan, SubqueryKind::Exists) => Some(((**plan).clone(), false)),
        Expr::Unary(UnaryOp::Not, inner) => match &**inner {
            Expr::Subquery(plan, SubqueryKind::Exists) => Some(((**plan).clone(), true)),
            _ => None,
        },
        _ => None,
    }
}

impl OptimizerRule for ExistsToSemiApply {
    fn name(&self) -> &'static str {
        "exists_to_semi_apply"
    }

    fn rewrite(&self, n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        let OpKind::Filter { predicate } = &n.kind else {
            return n;
        };
        if n.inputs.len() != 1 {
            return n;
        }
        let conj = conjuncts(predicate.clone());
        if !conj.iter().any(|c| as_exists(c).is_some()) {
            return n;
        }
        let mut rest = Vec::new();
        let mut probes = Vec::new();
        for c in conj {
            match as_exists(&c) {
                Some(p) => probes.push(p),
                None => rest.push(c),
            }
        }
        let mut plan = n.inputs[0].clone();
        if let Some(predicate) = and_all(rest) {
            plan = PlanNode::new(OpKind::Filter { predicate }, vec![plan], 0.0);
        }
        for (inner, anti) in probes {
            plan = mark(
                PlanNode::new(
                    OpKind::SemiApply {
                        anti,
                        scope: Default::default(),
                    },
                    vec![plan, inner],
                    0.0,
                ),
                self.name(),
            );
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    #[test]
    fn exists_conjuncts_become_semi_applies() {
        let q = "MATCH (a) WHERE a.x = 1 AND NOT (a)-->() RETURN a";
        assert_eq!(
            plan_empty(q, Some(Box::new(ExistsToSemiApply))),
            "AntiSemiApply scope: dfs max_si=1 [exists_to_semi_apply]\n├─ Filter (a.x = 1)\n│  └─ AllNodesScan (a)\n│     └─ Argument\n└─ Expand (a)-[  anon_1]->(  anon_0)\n   └─ Argument"
        );
    }

    #[test]
    fn disjunctions_stay_expressions() {
        let q = "MATCH (a) WHERE a.x = 1 OR (a)-->() RETURN a";
        assert!(plan_empty(q, Some(Box::new(ExistsToSemiApply))).starts_with("Filter"));
    }
}
