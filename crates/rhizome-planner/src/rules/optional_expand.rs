//! `optional_expand`: an `OPTIONAL MATCH` of a single relationship from a
//! bound node with nothing else inside (`Optional` over `Expand(Argument)`)
//! becomes one `OptionalExpand` (an `Expand` with `optional`), which keeps
//! rows without matches with nulls instead of running an inner plan per row.

use super::{mark, OptimizerRule, RuleContext};
use rhizome_plan::{OpKind, PlanNode};

/// See the module documentation.
pub struct OptionalExpand;

impl OptimizerRule for OptionalExpand {
    fn name(&self) -> &'static str {
        "optional_expand"
    }

    fn rewrite(&self, n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        let (OpKind::Optional { nullable, .. }, [input, inner]) = (&n.kind, n.inputs.as_slice())
        else {
            return n;
        };
        let [arg] = inner.inputs.as_slice() else {
            return n;
        };
        if !matches!(arg.kind, OpKind::Argument) {
            return n;
        }
        let kind = match &inner.kind {
            OpKind::Expand {
                from,
                rel,
                to,
                types,
                direction,
                to_labels,
                distinct_from,
                optional: false,
            } if nullable.iter().all(|s| s == rel || s == to) && distinct_from.is_empty() => {
                OpKind::Expand {
                    from: *from,
                    rel: *rel,
                    to: *to,
                    types: types.clone(),
                    direction: *direction,
                    to_labels: to_labels.clone(),
                    distinct_from: Vec::new(),
                    optional: true,
                }
            }
            OpKind::ExpandInto {
                from,
                rel,
                to,
                types,
                direction,
                distinct_from,
                optional: false,
            } if nullable.iter().all(|s| s == rel) && distinct_from.is_empty() => {
                OpKind::ExpandInto {
                    from: *from,
                    rel: *rel,
                    to: *to,
                    types: types.clone(),
                    direction: *direction,
                    distinct_from: Vec::new(),
                    optional: true,
                }
            }
            _ => return n,
        };
        mark(PlanNode::new(kind, vec![input.clone()], 0.0), self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    #[test]
    fn single_hop_optional_match_becomes_optional_expand() {
        assert_eq!(
            plan_empty("MATCH (a) OPTIONAL MATCH (a)-[r:T]->(b:B) RETURN a, r, b", Some(Box::new(OptionalExpand))),
            "OptionalExpand (a)-[r:T]->(b:B) [optional_expand]\n└─ AllNodesScan (a)\n   └─ Argument"
        );
    }

    #[test]
    fn optional_match_with_where_keeps_the_optional() {
        let q = "MATCH (a) OPTIONAL MATCH (a)-[r:T]->(b) WHERE b.x = 1 RETURN a, b";
        assert!(plan_empty(q, Some(Box::new(OptionalExpand))).starts_with("Optional\n"));
    }
}
