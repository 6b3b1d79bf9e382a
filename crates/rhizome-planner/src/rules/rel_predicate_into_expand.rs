//! `rel_predicate_into_expand`: a conjunct `all(r IN rels WHERE p(r))`
//! over the relationship list of a variable-length expansion becomes (part
//! of) the expansion's `rel_predicate`, so paths are pruned while they are
//! enumerated instead of filtered afterwards.

use super::{mark, OptimizerRule, RuleContext};
use crate::expr::has_subquery;
use crate::usage::{and_all, conjuncts, expr_reads};
use rhizome_plan::{BinaryOp, Expr, OpKind, PlanNode, Quantifier, Slot};

/// See the module documentation.
pub struct RelPredicateIntoExpand;

/// Replaces reads of slot `from` by `to`.
pub(crate) fn substitute(e: &mut Expr, from: Slot, to: Slot) {
    e.visit_mut(&mut |x| {
        if *x == Expr::Slot(from) {
            *x = Expr::Slot(to);
        }
    });
}

impl OptimizerRule for RelPredicateIntoExpand {
    fn name(&self) -> &'static str {
        "rel_predicate_into_expand"
    }

    fn rewrite(&self, n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        let (OpKind::Filter { predicate }, [expand]) = (&n.kind, n.inputs.as_slice()) else {
            return n;
        };
        let OpKind::VarExpand { rels, to, .. } = &expand.kind else {
            return n;
        };
        let (rels, to) = (*rels, *to);
        let mut moved = Vec::new();
        let mut rest = Vec::new();
        for c in conjuncts(predicate.clone()) {
            match &c {
                Expr::Quantified {
                    quantifier: Quantifier::All,
                    variable,
                    list,
                    predicate,
                } if **list == Expr::Slot(rels) && !has_subquery(predicate) => {
                    let reads = expr_reads(predicate);
                    if reads.iter().all(|s| s != &rels && s != &to) {
                        moved.push((*variable, (**predicate).clone()));
                        continue;
                    }
                    rest.push(c);
                }
                _ => rest.push(c),
            }
        }
        if moved.is_empty() {
            return n;
        }
        let mut expand = expand.clone();
        if let OpKind::VarExpand { rel_predicate, .. } = &mut expand.kind {
            for (var, mut p) in moved {
                *rel_predicate = Some(match rel_predicate.take() {
                    None => (var, p),
                    Some((v0, p0)) => {
                        substitute(&mut p, var, v0);
                        (v0, Expr::Binary(BinaryOp::And, Box::new(p0), Box::new(p)))
                    }
                });
            }
        }
        let expand = mark(expand, self.name());
        match and_all(rest) {
            Some(predicate) => PlanNode::new(OpKind::Filter { predicate }, vec![expand], 0.0),
            None => expand,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    #[test]
    fn all_over_the_relationship_list_prunes_paths() {
        let q = "MATCH (a)-[rs:T*1..3]->(b) WHERE all(r IN rs WHERE r.w > 1) AND b.x = 1 RETURN b";
        let text = plan_empty(q, Some(Box::new(RelPredicateIntoExpand)));
        assert!(text.starts_with("Filter (b.x = 1)\n└─ VarLengthExpand (a)-[rs:T*1..3]->(b) [rel_predicate_into_expand]"), "{text}");
    }

    #[test]
    fn substitution_renames_reads() {
        let mut e = Expr::Binary(
            BinaryOp::Gt,
            Box::new(Expr::Slot(3)),
            Box::new(Expr::Slot(4)),
        );
        substitute(&mut e, 3, 9);
        assert_eq!(
            e,
            Expr::Binary(
                BinaryOp::Gt,
                Box::new(Expr::Slot(9)),
                Box::new(Expr::Slot(4))
            )
        );
    }
}
