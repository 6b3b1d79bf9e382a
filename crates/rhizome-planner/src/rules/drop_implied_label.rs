//! `drop_implied_label`: drops a neighbour label check of a single-type
//! expansion when the statistics prove every relationship of that type
//! ends at a node with that label (`PlannerContext::label_implied`).

use super::{mark, transform_up, OptimizerRule, RuleContext};
use crate::context::Dir;
use rhizome_plan::{ExpandDirection, OpKind, PlanNode};

/// See the module documentation.
pub struct DropImpliedLabel;

impl OptimizerRule for DropImpliedLabel {
    fn name(&self) -> &'static str {
        "drop_implied_label"
    }

    fn rewrite(&self, node: PlanNode, ctx: &mut RuleContext<'_>) -> PlanNode {
        let pctx = ctx.ctx;
        transform_up(node, &mut |mut n| {
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
        })
    }
}
