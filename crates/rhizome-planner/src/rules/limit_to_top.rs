//! `limit_to_top`: `Limit` over `Sort` becomes a `Top` (a bounded heap
//! instead of a full sort); with a `Skip` between them the top keeps
//! `skip + limit` rows and the skip stays above it.

use super::{mark, OptimizerRule, RuleContext};
use rhizome_plan::{BinaryOp, Expr, OpKind, PlanNode};

/// See the module documentation.
pub struct LimitToTop;

impl OptimizerRule for LimitToTop {
    fn name(&self) -> &'static str {
        "limit_to_top"
    }

    fn rewrite(&self, n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        let (OpKind::Limit { count }, [below]) = (&n.kind, n.inputs.as_slice()) else {
            return n;
        };
        match (&below.kind, below.inputs.as_slice()) {
            (OpKind::Sort { keys }, [input]) => mark(
                PlanNode::new(
                    OpKind::Top {
                        keys: keys.clone(),
                        limit: count.clone(),
                    },
                    vec![input.clone()],
                    0.0,
                ),
                self.name(),
            ),
            (OpKind::Skip { count: skip }, [sorted]) => {
                let (OpKind::Sort { keys }, [input]) = (&sorted.kind, sorted.inputs.as_slice())
                else {
                    return n;
                };
                let limit = Expr::Binary(
                    BinaryOp::Add,
                    Box::new(skip.clone()),
                    Box::new(count.clone()),
                );
                let top = mark(
                    PlanNode::new(
                        OpKind::Top {
                            keys: keys.clone(),
                            limit,
                        },
                        vec![input.clone()],
                        0.0,
                    ),
                    self.name(),
                );
                mark(
                    PlanNode::new(
                        OpKind::Skip {
                            count: skip.clone(),
                        },
                        vec![top],
                        0.0,
                    ),
                    self.name(),
                )
            }
            _ => n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    #[test]
    fn limit_over_sort_is_top() {
        assert_eq!(
            plan_empty(
                "UNWIND [3, 1, 2] AS x RETURN x ORDER BY x LIMIT 2",
                Some(Box::new(LimitToTop))
            ),
            "Top x LIMIT 2 [limit_to_top]\n└─ Unwind [1, 2, 3] AS x\n   └─ Argument"
                .replace("[1, 2, 3]", "[3, 1, 2]")
        );
        assert_eq!(
            plan_empty("UNWIND [3, 1, 2] AS x RETURN x ORDER BY x SKIP 1 LIMIT 1", Some(Box::new(LimitToTop))),
            "Skip 1 [limit_to_top]\n└─ Top x LIMIT (1 + 1) [limit_to_top]\n   └─ Unwind [3, 1, 2] AS x\n      └─ Argument"
        );
    }
}
