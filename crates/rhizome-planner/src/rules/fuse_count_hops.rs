//! `fuse_count_hops`: counting a two-hop tail without producing its middle
//! rows. An `ExpandCount` whose input is the `Expand` that binds its start
//! node (possibly with a filter on that expansion's relationship between
//! them) takes that hop into its `prefix`, when nothing above reads the hop's
//! relationship or end node: the aggregation directly above only reads the
//! count and grouping keys that do not mention them.
//!
//! Only one hop is fused: the rows feeding the fused count (one per
//! relationship of the hop before) are what the runtime splits across workers,
//! so fusing the whole pattern would serialise it.
//!
//! Uniqueness stays exact: the fused relationship must be one the counted hop
//! already had to differ from, and everything the fused hop had to differ
//! from must be in the counted hop's list too (both hops belong to the same
//! MATCH), so "every relationship of the walk is distinct from the others and
//! from `distinct_from`" is precisely the original condition.

use super::{mark, OptimizerRule, RuleContext};
use crate::usage::expr_reads;
use rhizome_plan::{CountHop, OpKind, PlanNode};

/// See the module documentation.
pub struct FuseCountHops;

impl OptimizerRule for FuseCountHops {
    fn name(&self) -> &'static str {
        "fuse_count_hops"
    }

    fn rewrite(&self, mut n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        let OpKind::Aggregate { keys, .. } = &n.kind else {
            return n;
        };
        let keys = keys.clone();
        let [below] = n.inputs.as_mut_slice() else {
            return n;
        };
        // The ExpandCount, directly or under the count > 0 filter of a grouped count.
        let count_node: &mut PlanNode = match &below.kind {
            OpKind::ExpandCount { .. } => below,
            OpKind::Filter { .. } if matches!(below.inputs.as_slice(), [e] if matches!(e.kind, OpKind::ExpandCount { .. })) => {
                &mut below.inputs[0]
            }
            _ => return n,
        };
        let OpKind::ExpandCount {
            from: x,
            prefix,
            distinct_from,
            rel_predicate,
            ..
        } = &count_node.kind
        else {
            return n;
        };
        if !prefix.is_empty() {
            return n;
        }
        let (x, counted_distinct) = (*x, distinct_from.clone());
        let [ec_input] = count_node.inputs.as_slice() else {
            return n;
        };
        let (hop_filter, expand) = match (&ec_input.kind, ec_input.inputs.as_slice()) {
            (OpKind::Filter { predicate }, [e]) => (Some(predicate.clone()), e),
            _ => (None, ec_input),
        };
        let OpKind::Expand {
            rel: r,
            to,
            types,
            direction,
            to_labels,
            distinct_from: d0,
            optional: false,
            from: a,
        } = &expand.kind
        else {
            return n;
        };
        let (r, a) = (*r, *a);
        if *to != x
            || !counted_distinct.contains(&r)
            || !d0.iter().all(|s| counted_distinct.contains(s))
        {
            return n;
        }
        let reads_hop =
            |reads: &std::collections::BTreeSet<usize>| reads.contains(&r) || reads.contains(&x);
        if keys.iter().any(|(_, k)| reads_hop(&expr_reads(k))) {
            return n;
        }
        if let Some((var, p)) = rel_predicate {
            let mut reads = expr_reads(p);
            reads.remove(var);
            if reads_hop(&reads) {
                return n;
            }
        }
        if let Some(p) = &hop_filter {
            let mut reads = expr_reads(p);
            reads.remove(&r);
            if reads.contains(&x) {
                return n;
            }
        }
        let hop = CountHop {
            types: types.clone(),
            direction: *direction,
            to_labels: to_labels.clone(),
            rel_predicate: hop_filter.map(|p| (r, p)),
        };
        let new_input = expand.inputs[0].clone();
        let OpKind::ExpandCount {
            from,
            prefix,
            distinct_from,
            ..
        } = &mut count_node.kind
        else {
            return n;
        };
        *from = a;
        prefix.push(hop);
        distinct_from.retain(|s| *s != r);
        count_node.inputs = vec![new_input];
        let fused = std::mem::replace(count_node, PlanNode::new(OpKind::Argument, vec![], 0.0));
        *count_node = mark(fused, "fuse_count_hops");
        n
    }
}
