//! `count_comprehension`: `size([pattern comprehension])` only needs the
//! number of matches, so it becomes a `COUNT` subquery: the runtime counts
//! the inner rows instead of building a list of projected values.

use super::{mark, OptimizerRule, RuleContext};
use rhizome_plan::{Expr, PlanNode, SubqueryKind};

/// See the module documentation.
pub struct CountComprehension;

impl OptimizerRule for CountComprehension {
    fn name(&self) -> &'static str {
        "count_comprehension"
    }

    fn rewrite(&self, mut n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        let mut changed = false;
        for e in n.kind.exprs_mut() {
            e.visit_mut(&mut |x| {
                let Expr::Function(name, args) = x else {
                    return;
                };
                if name != "size" || args.len() != 1 {
                    return;
                }
                if let Expr::Subquery(plan, SubqueryKind::Collect(_)) = &args[0] {
                    *x = Expr::Subquery(plan.clone(), SubqueryKind::Count);
                    changed = true;
                }
            });
        }
        if changed {
            mark(n, self.name())
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
    fn size_of_a_pattern_comprehension_is_a_count() {
        assert_eq!(
            plan_empty("MATCH (a) RETURN size([(a)-->(b) | b.name]) AS n", Some(Box::new(CountComprehension))),
            "Projection COUNT {...} AS n [count_comprehension]\n├─ AllNodesScan (a)\n│  └─ Argument\n\
             └─ [COUNT subquery] Expand (a)-[  anon_0]->(b)\n   └─ Argument"
        );
        // A list comprehension over a pattern comprehension stays a list.
        assert!(!plan_empty(
            "MATCH (a) RETURN size([x IN [(a)-->(b) | b] | x]) AS n",
            Some(Box::new(CountComprehension))
        )
        .contains("count_comprehension"));
    }
}
