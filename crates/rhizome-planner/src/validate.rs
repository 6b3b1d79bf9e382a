//! The slot discipline of a plan, checked: every slot an operator reads is
//! bound below it (or by the enclosing plan's row), result columns are bound
//! at the root, and every slot is inside the row.
//!
//! Availability follows the operators' documented semantics: `Argument`
//! yields the enclosing row; `Aggregate` keeps only its keys and aggregates
//! (plus the enclosing row); the inner side of `Optional`/`Apply` adds its
//! slots; `SemiApply` adds none; the side of a `CartesianProduct` /
//! `HashJoin` computed once sees only the enclosing row; `Union` yields its
//! output slots.

use crate::usage::{op_reads, op_writes};
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_plan::{Expr, OpKind, Plan, PlanNode, Slot, SubqueryKind};
use std::collections::BTreeSet;

/// Checks the slot discipline of `plan` (see the module documentation).
/// An error means a planner bug, reported as `Internal`.
pub fn validate_plan(plan: &Plan) -> Result<()> {
    let outer = BTreeSet::new();
    let available = check(&plan.root, &outer, plan.width)?;
    for (name, slot) in &plan.columns {
        if !available.contains(slot) {
            return Err(bug(format!(
                "result column `{name}` (slot {slot}) is never bound"
            )));
        }
    }
    Ok(())
}

fn bug(message: String) -> Error {
    Error::new(ErrorKind::Internal, format!("planner bug: {message}"))
}

/// Checks `node` given the enclosing row's slots; returns the slots bound in its output rows.
fn check(node: &PlanNode, outer: &BTreeSet<Slot>, width: usize) -> Result<BTreeSet<Slot>> {
    let inputs_ok = |i: usize| -> Result<BTreeSet<Slot>> {
        match node.inputs.get(i) {
            Some(n) => check(n, outer, width),
            None => Ok(outer.clone()),
        }
    };
    let (input_avail, mut out) = match &node.kind {
        OpKind::Argument => (outer.clone(), outer.clone()),
        OpKind::Optional { .. }
        | OpKind::Apply { .. }
        | OpKind::SemiApply { .. }
        | OpKind::Merge { .. }
        | OpKind::Foreach { .. } => {
            let left = inputs_ok(0)?;
            let mut inner_outer = left.clone();
            if let OpKind::Foreach { variable, .. } = &node.kind {
                inner_outer.insert(*variable);
            }
            let inner = match node.inputs.get(1) {
                Some(n) => check(n, &inner_outer, width)?,
                None => return Err(bug(format!("{} without an inner plan", node.name()))),
            };
            let out = if matches!(node.kind, OpKind::SemiApply { .. } | OpKind::Foreach { .. }) {
                left.clone()
            } else {
                inner
            };
            (left, out)
        }
        OpKind::CartesianProduct => {
            let left = inputs_ok(0)?;
            let right = inputs_ok(1)?;
            let both: BTreeSet<Slot> = left.union(&right).copied().collect();
            (both.clone(), both)
        }
        OpKind::HashJoin {
            build_keys,
            probe_keys,
        } => {
            let build = inputs_ok(0)?;
            let probe = inputs_ok(1)?;
            if build_keys.iter().any(|k| !build.contains(k))
                || probe_keys.iter().any(|k| !probe.contains(k))
            {
                return Err(bug("hash join key not bound on its side".into()));
            }
            let both: BTreeSet<Slot> = build.union(&probe).copied().collect();
            (both.clone(), both)
        }
        OpKind::Union { .. } => {
            for i in 0..node.inputs.len() {
                inputs_ok(i)?;
            }
            (outer.clone(), outer.clone())
        }
        OpKind::Aggregate { .. } => {
            let input = inputs_ok(0)?;
            (input, outer.clone())
        }
        _ => {
            let input = inputs_ok(0)?;
            (input.clone(), input)
        }
    };
    let skip_reads = matches!(node.kind, OpKind::HashJoin { .. } | OpKind::Union { .. });
    if !skip_reads {
        for s in op_reads(&node.kind) {
            if !input_avail.contains(&s) {
                return Err(bug(format!(
                    "{} reads slot {s}, which is not bound there",
                    node.describe(&[])
                )));
            }
        }
    }
    for s in op_writes(&node.kind) {
        if s >= width {
            return Err(bug(format!(
                "{} writes slot {s} outside the row",
                node.name()
            )));
        }
        out.insert(s);
    }
    // Plans nested in expressions run on this operator's input rows, with
    // the variables of the expressions around them (comprehension and
    // relationship-predicate variables are in the row while their body runs).
    let mut local = Vec::new();
    if let OpKind::VarExpand {
        rel_predicate: Some((v, _)),
        ..
    }
    | OpKind::ExpandCount {
        rel_predicate: Some((v, _)),
        ..
    } = &node.kind
    {
        local.push(*v);
    }
    if let OpKind::VarExpand {
        node_predicate: Some(np),
        ..
    } = &node.kind
    {
        local.push(np.var);
    }
    if let OpKind::ExpandCount { prefix, .. } = &node.kind {
        local.extend(
            prefix
                .iter()
                .filter_map(|h| h.rel_predicate.as_ref().map(|(v, _)| *v)),
        );
    }
    if let OpKind::ShortestPath { path, rels, .. } = &node.kind {
        local.push(*path);
        local.extend(rels.iter().copied());
    }
    let mut env = input_avail.clone();
    env.extend(op_writes(&node.kind));
    env.extend(local);
    for e in node.kind.exprs() {
        check_nested(e, &env, width)?;
    }
    Ok(out)
}

/// Checks the plans nested in `e`, which runs on rows binding `env`. A
/// pattern comprehension's projection runs on its plan's rows, so a
/// subquery nested there sees the comprehension's variables too.
fn check_nested(e: &Expr, env: &BTreeSet<Slot>, width: usize) -> Result<()> {
    let scoped = |slots: &[Slot]| {
        let mut inner = env.clone();
        inner.extend(slots.iter().copied());
        inner
    };
    match e {
        Expr::Subquery(plan, kind) => {
            let bound = check(plan, env, width)?;
            if let SubqueryKind::Collect(x) = kind {
                let inner: BTreeSet<Slot> = env.union(&bound).copied().collect();
                check_nested(x, &inner, width)?;
            }
            Ok(())
        }
        Expr::ListComprehension { variable, .. } | Expr::Quantified { variable, .. } => {
            let inner = scoped(&[*variable]);
            let mut result = Ok(());
            e.for_each_child(&mut |c| {
                if result.is_ok() {
                    result = check_nested(c, &inner, width);
                }
            });
            result
        }
        Expr::Reduce {
            accumulator,
            variable,
            ..
        } => {
            let inner = scoped(&[*accumulator, *variable]);
            let mut result = Ok(());
            e.for_each_child(&mut |c| {
                if result.is_ok() {
                    result = check_nested(c, &inner, width);
                }
            });
            result
        }
        _ => {
            let mut result = Ok(());
            e.for_each_child(&mut |c| {
                if result.is_ok() {
                    result = check_nested(c, env, width);
                }
            });
            result
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_an_unbound_slot_is_a_bug() {
        let scan = PlanNode::new(
            OpKind::Filter {
                predicate: Expr::Slot(1),
            },
            vec![PlanNode::new(OpKind::Argument, vec![], 1.0)],
            1.0,
        );
        let plan = Plan {
            root: scan,
            width: 2,
            columns: vec![],
            slot_names: vec![],
            ordered: false,
            updating: false,
        };
        assert!(validate_plan(&plan).is_err());
    }
}
