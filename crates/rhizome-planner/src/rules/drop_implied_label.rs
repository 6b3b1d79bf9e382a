//! `drop_implied_label`: drops a neighbour label check of a single-type
//! expansion when the statistics prove every relationship of that type
//! ends at a node with that label (`PlannerContext::label_implied`).

use super::{mark, OptimizerRule, RuleContext};
use crate::context::Dir;
use rhizome_plan::{ExpandDirection, OpKind, PlanNode};

/// See the module documentation.
pub struct DropImpliedLabel;

impl OptimizerRule for DropImpliedLabel {
    fn name(&self) -> &'static str {
        "drop_implied_label"
    }

    fn rewrite(&self, mut n: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode {
        let pctx = ctx.ctx;
        let (types, direction, to_labels) = match &mut n.kind {
            OpKind::Expand {
                types,
                direction,
                to_labels,
                ..
            }
            | OpKind::ExpandCount {
                types,
                direction,
                to_labels,
                ..
            } => (types, direction, to_labels),
            _ => return n,
        };
        let [t] = types.as_slice() else {
            return n;
        };
        let dir = match direction {
            ExpandDirection::Outgoing => Dir::Outgoing,
            ExpandDirection::Incoming => Dir::Incoming,
            ExpandDirection::Both => return n,
        };
        let before = to_labels.len();
        to_labels.retain(|l| !pctx.label_implied(t, dir, l));
        if to_labels.len() != before {
            mark(n, self.name())
        } else {
            n
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_util::plan_with;
    use crate::PlannerContext;

    /// Every `T` relationship goes from an `A` to a `B`.
    struct Stats;
    impl PlannerContext for Stats {
        fn label_count(&self, _: &str) -> Option<u64> {
            Some(10)
        }
        fn node_count(&self) -> u64 {
            20
        }
        fn rel_count(&self, t: Option<&str>) -> u64 {
            if t == Some("T") {
                30
            } else {
                40
            }
        }
        fn triple_count(&self, s: Option<&str>, t: Option<&str>, d: Option<&str>) -> u64 {
            let ok = s.is_none_or(|x| x == "A")
                && t.is_none_or(|x| x == "T")
                && d.is_none_or(|x| x == "B");
            if ok {
                30
            } else {
                0
            }
        }
        fn has_index(&self, _: &str, _: &str) -> bool {
            false
        }
        fn distinct_values(&self, _: &str, _: &str) -> Option<u64> {
            None
        }
    }

    #[test]
    fn implied_labels_are_dropped_only_when_proven() {
        let rule = || Some(Box::new(DropImpliedLabel) as Box<dyn OptimizerRule>);
        assert!(
            plan_with("MATCH (a:A)-[:T]->(b:B) RETURN b", rule(), &Stats)
                .starts_with("Expand (a)-[  anon_0:T]->(b) [drop_implied_label]")
        );
        assert!(
            plan_with("MATCH (b:B)<-[:T]-(a:A) RETURN b", rule(), &Stats)
                .starts_with("Expand (b)<-[  anon_0:T]-(a) [drop_implied_label]")
        );
        assert!(
            plan_with("MATCH (a:A)-[:T]->(b:C) RETURN b", rule(), &Stats)
                .starts_with("Expand (a)-[  anon_0:T]->(b:C)\n")
        );
        assert!(
            plan_with("MATCH (a:A)-[:T|U]->(b:B) RETURN b", rule(), &Stats)
                .starts_with("Expand (a)-[  anon_0:T|U]->(b:B)\n")
        );
    }
}
