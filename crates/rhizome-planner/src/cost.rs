//! Cardinality estimates from the [`PlannerContext`] statistics.
//!
//! The planner uses the helpers here to choose where a pattern starts and
//! which relationship to expand next; [`annotate`] fills `estimated_rows`
//! of a finished plan bottom-up (EXPLAIN shows them). Estimates assume
//! independence between predicates; with no statistics (an empty graph or
//! [`crate::EmptyContext`]) every count is zero and choices fall back to the
//! order in which the query was written.

use crate::context::{Dir, PlannerContext};
use rhizome_common::Value;
use rhizome_plan::{BinaryOp, ExpandDirection, Expr, IndexLookup, OpKind, PlanNode, Slot};
use std::collections::HashMap;

/// Selectivity of an equality predicate without statistics.
pub const EQUALITY_SELECTIVITY: f64 = 0.1;
/// Selectivity of a range predicate.
pub const RANGE_SELECTIVITY: f64 = 0.3;
/// Selectivity of any other predicate.
pub const DEFAULT_SELECTIVITY: f64 = 0.5;

/// Rows of a scan of nodes carrying all `labels` (all nodes for none).
pub fn scan_rows(ctx: &dyn PlannerContext, labels: &[String]) -> f64 {
    if labels.is_empty() {
        return ctx.node_count() as f64;
    }
    labels
        .iter()
        .map(|l| ctx.label_count(l).unwrap_or(0) as f64)
        .fold(f64::INFINITY, f64::min)
}

/// Rows of an index equality seek on (`label`, `key`).
pub fn seek_rows(ctx: &dyn PlannerContext, label: &str, key: &str) -> f64 {
    let n = ctx.label_count(label).unwrap_or(0) as f64;
    match ctx.distinct_values(label, key) {
        Some(d) if d > 0 => n / d as f64,
        _ => n * EQUALITY_SELECTIVITY,
    }
}

fn dir(d: ExpandDirection) -> Dir {
    match d {
        ExpandDirection::Outgoing => Dir::Outgoing,
        ExpandDirection::Incoming => Dir::Incoming,
        ExpandDirection::Both => Dir::Both,
    }
}

/// Expected neighbours per source row of an expansion from a node carrying
/// `from_labels` over `types` in `direction` to a node carrying `to_labels`.
pub fn expand_factor(
    ctx: &dyn PlannerContext,
    from_labels: &[String],
    types: &[String],
    direction: ExpandDirection,
    to_labels: &[String],
) -> f64 {
    let from = from_labels.first().map(String::as_str);
    let to = to_labels.first().map(String::as_str);
    let type_list: Vec<Option<&str>> = if types.is_empty() {
        vec![None]
    } else {
        types.iter().map(|t| Some(t.as_str())).collect()
    };
    let mut total = 0.0;
    for t in type_list {
        let triples = |s: Option<&str>, d: Option<&str>| ctx.triple_count(s, t, d) as f64;
        let rels = match direction {
            ExpandDirection::Outgoing => triples(from, to),
            ExpandDirection::Incoming => triples(to, from),
            ExpandDirection::Both => triples(from, to) + triples(to, from),
        };
        let nodes = match from {
            Some(l) => ctx.label_count(l).unwrap_or(0) as f64,
            None => ctx.node_count() as f64,
        };
        total += if nodes > 0.0 {
            rels / nodes
        } else {
            ctx.avg_degree(from, t, dir(direction))
        };
    }
    total
}

/// Estimated fraction of rows a predicate keeps.
pub fn selectivity(e: &Expr) -> f64 {
    match e {
        Expr::Binary(BinaryOp::And, a, b) => selectivity(a) * selectivity(b),
        Expr::Binary(BinaryOp::Or, a, b) => {
            let (x, y) = (selectivity(a), selectivity(b));
            x + y - x * y
        }
        Expr::Binary(BinaryOp::Eq, ..) => EQUALITY_SELECTIVITY,
        Expr::Binary(BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge, ..) => {
            RANGE_SELECTIVITY
        }
        Expr::Literal(Value::Bool(true)) => 1.0,
        Expr::Literal(_) => 0.0,
        _ => DEFAULT_SELECTIVITY,
    }
}

fn literal_int(e: &Expr) -> Option<f64> {
    match e {
        Expr::Literal(Value::Int(i)) => Some((*i).max(0) as f64),
        _ => None,
    }
}

/// Fills `estimated_rows` of every operator of `node` (and of plans nested
/// in its expressions) from the statistics.
pub fn annotate(node: &mut PlanNode, ctx: &dyn PlannerContext) {
    let mut labels = HashMap::new();
    annotate_node(node, ctx, &mut labels);
}

fn annotate_exprs(kind: &mut OpKind, ctx: &dyn PlannerContext) {
    for e in kind.exprs_mut() {
        annotate_expr(e, ctx);
    }
}

fn annotate_expr(e: &mut Expr, ctx: &dyn PlannerContext) {
    e.visit_mut(&mut |x| {
        if let Expr::Subquery(plan, _) = x {
            annotate(plan, ctx);
        }
    });
}

fn annotate_node(
    node: &mut PlanNode,
    ctx: &dyn PlannerContext,
    labels: &mut HashMap<Slot, String>,
) {
    for input in node.inputs.iter_mut() {
        annotate_node(input, ctx, labels);
    }
    annotate_exprs(&mut node.kind, ctx);
    let ins: Vec<f64> = node.inputs.iter().map(|n| n.estimated_rows).collect();
    let input = ins.first().copied().unwrap_or(1.0);
    let label_of = |labels: &HashMap<Slot, String>, s: &Slot| labels.get(s).cloned();
    let rows = match &node.kind {
        OpKind::Argument => 1.0,
        OpKind::AllNodesScan { .. } => input * ctx.node_count() as f64,
        OpKind::LabelScan { out, label } => {
            labels.insert(*out, label.clone());
            input * ctx.label_count(label).unwrap_or(0) as f64
        }
        OpKind::IndexSeek {
            out,
            label,
            key,
            lookup,
        } => {
            labels.insert(*out, label.clone());
            let n = ctx.label_count(label).unwrap_or(0) as f64;
            input
                * match lookup {
                    IndexLookup::Equal(_) => seek_rows(ctx, label, key),
                    IndexLookup::AnyOf(Expr::List(items)) => {
                        seek_rows(ctx, label, key) * items.len() as f64
                    }
                    IndexLookup::AnyOf(Expr::Literal(Value::List(items))) => {
                        seek_rows(ctx, label, key) * items.len() as f64
                    }
                    IndexLookup::AnyOf(_) => seek_rows(ctx, label, key) * 10.0,
                    IndexLookup::Range(..) => n * RANGE_SELECTIVITY,
                }
        }
        OpKind::NodeByIdSeek { ids, .. } => match ids {
            Expr::List(items) => input * items.len() as f64,
            Expr::Literal(Value::List(items)) => input * items.len() as f64,
            _ => input,
        },
        OpKind::Expand {
            from,
            to,
            types,
            direction,
            to_labels,
            optional,
            ..
        } => {
            let from_labels: Vec<String> = label_of(labels, from).into_iter().collect();
            if let Some(l) = to_labels.first() {
                labels.insert(*to, l.clone());
            }
            let f = expand_factor(ctx, &from_labels, types, *direction, to_labels);
            let rows = input * f;
            if *optional {
                rows.max(input)
            } else {
                rows
            }
        }
        OpKind::ExpandInto {
            from,
            to,
            types,
            direction,
            ..
        } => {
            let from_labels: Vec<String> = label_of(labels, from).into_iter().collect();
            let to_labels: Vec<String> = label_of(labels, to).into_iter().collect();
            let f = expand_factor(ctx, &from_labels, types, *direction, &to_labels);
            let n = scan_rows(ctx, &to_labels).max(1.0);
            input * (f / n).min(1.0)
        }
        OpKind::VarExpand {
            from,
            types,
            direction,
            min,
            max,
            into,
            ..
        } => {
            let from_labels: Vec<String> = label_of(labels, from).into_iter().collect();
            let f = expand_factor(ctx, &from_labels, types, *direction, &[]);
            let hi = max.unwrap_or(min + 3).min(min + 3).max(*min);
            let mut total = 0.0;
            for k in *min..=hi {
                total += f.powi(k as i32);
            }
            if *into {
                input * total.min(1.0)
            } else {
                input * total
            }
        }
        OpKind::ShortestPath { .. } => input,
        OpKind::DistinctEndpoints { .. } => input.max(1.0),
        OpKind::Filter { predicate } => input * selectivity(predicate),
        OpKind::Project { .. } | OpKind::Sort { .. } | OpKind::ExpandCount { .. } => input,
        OpKind::Aggregate { keys, .. } => {
            if keys.is_empty() {
                1.0
            } else {
                input.sqrt().max(input.min(1.0))
            }
        }
        OpKind::Distinct { .. } => input.sqrt().max(input.min(1.0)),
        OpKind::Top { limit, .. } => literal_int(limit).map_or(input, |l| input.min(l)),
        OpKind::Limit { count } => literal_int(count).map_or(input, |l| input.min(l)),
        OpKind::Skip { count } => literal_int(count).map_or(input, |l| (input - l).max(0.0)),
        OpKind::Unwind { list, .. } => match list {
            Expr::List(items) => input * items.len() as f64,
            Expr::Literal(Value::List(items)) => input * items.len() as f64,
            _ => input * 10.0,
        },
        OpKind::Optional { .. } => {
            let inner = ins.get(1).copied().unwrap_or(1.0);
            input * inner.max(1.0)
        }
        OpKind::Apply { .. } => input * ins.get(1).copied().unwrap_or(1.0),
        OpKind::SemiApply { .. } => input * DEFAULT_SELECTIVITY,
        OpKind::CartesianProduct => input * ins.get(1).copied().unwrap_or(1.0),
        OpKind::HashJoin { .. } => {
            let build = input;
            let probe = ins.get(1).copied().unwrap_or(1.0);
            build.max(probe)
        }
        OpKind::Union { .. } => ins.iter().sum(),
        OpKind::ProcedureCall { .. } => input * 10.0,
        OpKind::Eager
        | OpKind::Create { .. }
        | OpKind::SetItems { .. }
        | OpKind::RemoveItems { .. }
        | OpKind::Delete { .. }
        | OpKind::Merge { .. }
        | OpKind::Foreach { .. } => input,
    };
    node.estimated_rows = if rows.is_finite() { rows.max(0.0) } else { 0.0 };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::EmptyContext;

    #[test]
    fn selectivities_multiply() {
        let eq = Expr::Binary(
            BinaryOp::Eq,
            Box::new(Expr::Slot(0)),
            Box::new(Expr::Slot(1)),
        );
        let both = Expr::Binary(BinaryOp::And, Box::new(eq.clone()), Box::new(eq));
        assert!((selectivity(&both) - 0.01).abs() < 1e-12);
    }

    #[test]
    fn empty_statistics_give_zero_rows() {
        let mut n = PlanNode::new(
            OpKind::LabelScan {
                out: 0,
                label: "A".into(),
            },
            vec![PlanNode::new(OpKind::Argument, vec![], 0.0)],
            0.0,
        );
        annotate(&mut n, &EmptyContext);
        assert_eq!(n.estimated_rows, 0.0);
        assert_eq!(n.inputs[0].estimated_rows, 1.0);
    }
}
