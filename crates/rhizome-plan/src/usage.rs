//! Which slots an expression or operator reads and writes.
//!
//! Used to place filters, to check that a rewrite keeps every value an
//! operator above needs, and to prune unused projections. Slots bound inside
//! an expression (comprehension variables, slots written by a nested plan)
//! are not reads of the enclosing row.

use crate::{CreateNode, CreateRel, Expr, OpKind, PathStep, PlanNode, Slot, SubqueryKind};
use std::collections::BTreeSet;

/// Slots read by `e` from the row it is evaluated on.
pub fn expr_reads(e: &Expr) -> BTreeSet<Slot> {
    let mut out = BTreeSet::new();
    add_expr_reads(e, &mut out);
    out
}

/// Adds the slots `e` reads to `out`.
pub fn add_expr_reads(e: &Expr, out: &mut BTreeSet<Slot>) {
    match e {
        Expr::Slot(s) => {
            out.insert(*s);
        }
        Expr::ListComprehension {
            variable,
            list,
            predicate,
            projection,
        } => {
            add_expr_reads(list, out);
            let mut inner = BTreeSet::new();
            for x in predicate.iter().chain(projection.iter()) {
                add_expr_reads(x, &mut inner);
            }
            inner.remove(variable);
            out.extend(inner);
        }
        Expr::Quantified {
            variable,
            list,
            predicate,
            ..
        } => {
            add_expr_reads(list, out);
            let mut inner = expr_reads(predicate);
            inner.remove(variable);
            out.extend(inner);
        }
        Expr::Reduce {
            accumulator,
            init,
            variable,
            list,
            expr,
        } => {
            add_expr_reads(init, out);
            add_expr_reads(list, out);
            let mut inner = expr_reads(expr);
            inner.remove(variable);
            inner.remove(accumulator);
            out.extend(inner);
        }
        Expr::Subquery(plan, kind) => {
            let (free, bound) = free_reads(plan);
            out.extend(free);
            if let SubqueryKind::Collect(x) = kind {
                out.extend(expr_reads(x).difference(&bound));
            }
        }
        Expr::Path(steps) => {
            for step in steps {
                match *step {
                    PathStep::Node(n) => {
                        out.insert(n);
                    }
                    PathStep::Rel(r, n) | PathStep::Rels(r, n) => {
                        out.insert(r);
                        out.insert(n);
                    }
                }
            }
        }
        // Every other expression reads what its sub-expressions read.
        _ => e.for_each_child(&mut |c| add_expr_reads(c, out)),
    }
}

/// Slots an operator reads (its own expressions and slot arguments, not its inputs').
pub fn op_reads(kind: &OpKind) -> BTreeSet<Slot> {
    let mut out = BTreeSet::new();
    let e = |x: &Expr, out: &mut BTreeSet<Slot>| add_expr_reads(x, out);
    match kind {
        OpKind::Eager => {}
        OpKind::Create { .. }
        | OpKind::SetItems { .. }
        | OpKind::RemoveItems { .. }
        | OpKind::Delete { .. }
        | OpKind::Merge { .. }
        | OpKind::Foreach { .. } => {
            let mut k = kind.clone();
            for x in k.exprs_mut() {
                e(x, &mut out);
            }
            match kind {
                OpKind::Create { rels, .. } | OpKind::Merge { rels, .. } => {
                    // The operator's own entities (and `MERGE` actions on
                    // them) are not reads of the input row.
                    let created = create_writes(kind);
                    for r in rels {
                        out.insert(r.start);
                        out.insert(r.end);
                    }
                    for s in created {
                        out.remove(&s);
                    }
                }
                OpKind::Foreach { variable, .. } => {
                    out.remove(variable);
                }
                _ => {}
            }
        }
        OpKind::Argument
        | OpKind::AllNodesScan { .. }
        | OpKind::LabelScan { .. }
        | OpKind::Optional { .. }
        | OpKind::Apply { .. }
        | OpKind::SemiApply { .. }
        | OpKind::CartesianProduct => {}
        OpKind::IndexSeek { lookup, .. } => match lookup {
            crate::IndexLookup::Equal(x) | crate::IndexLookup::AnyOf(x) => e(x, &mut out),
            crate::IndexLookup::Range(lo, hi) => {
                for b in [lo, hi] {
                    if let crate::SeekBound::Inclusive(x) | crate::SeekBound::Exclusive(x) = b {
                        e(x, &mut out);
                    }
                }
            }
        },
        OpKind::NodeByIdSeek { ids, .. } => e(ids, &mut out),
        OpKind::Expand {
            from,
            distinct_from,
            ..
        } => {
            out.insert(*from);
            out.extend(distinct_from.iter().copied());
        }
        OpKind::ExpandInto {
            from,
            to,
            distinct_from,
            ..
        } => {
            out.insert(*from);
            out.insert(*to);
            out.extend(distinct_from.iter().copied());
        }
        OpKind::VarExpand {
            from,
            to,
            into,
            rel_predicate,
            node_predicate,
            distinct_from,
            ..
        } => {
            out.insert(*from);
            if *into {
                out.insert(*to);
            }
            out.extend(distinct_from.iter().copied());
            if let Some((var, p)) = rel_predicate {
                let mut inner = expr_reads(p);
                inner.remove(var);
                out.extend(inner);
            }
            if let Some(np) = node_predicate {
                let mut inner = expr_reads(&np.predicate);
                inner.remove(&np.var);
                out.extend(inner);
            }
        }
        OpKind::ShortestPath {
            from,
            to,
            path,
            rels,
            path_predicate,
            ..
        } => {
            out.insert(*from);
            out.insert(*to);
            if let Some(p) = path_predicate {
                let mut inner = expr_reads(p);
                inner.remove(path);
                if let Some(r) = rels {
                    inner.remove(r);
                }
                out.extend(inner);
            }
        }
        OpKind::Filter { predicate } => e(predicate, &mut out),
        OpKind::Project { items } => {
            for (_, x) in items {
                e(x, &mut out);
            }
        }
        OpKind::Aggregate { keys, aggregates } => {
            for (_, x) in keys {
                e(x, &mut out);
            }
            for a in aggregates {
                a.args.iter().for_each(|x| e(x, &mut out));
            }
        }
        OpKind::Distinct { slots } => out.extend(slots.iter().copied()),
        OpKind::Sort { keys } => out.extend(keys.iter().map(|k| k.slot)),
        OpKind::Top { keys, limit } => {
            out.extend(keys.iter().map(|k| k.slot));
            e(limit, &mut out);
        }
        OpKind::Skip { count } | OpKind::Limit { count } => e(count, &mut out),
        OpKind::Unwind { list, .. } => e(list, &mut out),
        OpKind::HashJoin {
            build_keys,
            probe_keys,
        } => {
            out.extend(build_keys.iter().copied());
            out.extend(probe_keys.iter().copied());
        }
        OpKind::Union { slots, .. } => out.extend(slots.iter().copied()),
        OpKind::ProcedureCall { args, .. } => args.iter().for_each(|x| e(x, &mut out)),
        OpKind::DistinctEndpoints { from, .. } => {
            out.insert(*from);
        }
        OpKind::ExpandCount {
            from,
            prefix,
            rel_predicate,
            distinct_from,
            ..
        } => {
            out.insert(*from);
            out.extend(distinct_from.iter().copied());
            let hop_predicates = prefix.iter().filter_map(|h| h.rel_predicate.as_ref());
            for (var, p) in rel_predicate.iter().chain(hop_predicates) {
                let mut inner = expr_reads(p);
                inner.remove(var);
                out.extend(inner);
            }
        }
    }
    out
}

/// Slots an operator writes itself.
pub fn op_writes(kind: &OpKind) -> Vec<Slot> {
    match kind {
        OpKind::AllNodesScan { out }
        | OpKind::LabelScan { out, .. }
        | OpKind::IndexSeek { out, .. }
        | OpKind::NodeByIdSeek { out, .. }
        | OpKind::Unwind { out, .. } => vec![*out],
        OpKind::Expand { rel, to, .. } => vec![*rel, *to],
        OpKind::ExpandInto { rel, .. } => vec![*rel],
        OpKind::VarExpand { rels, to, into, .. } => {
            if *into {
                vec![*rels]
            } else {
                vec![*rels, *to]
            }
        }
        OpKind::ShortestPath { path, rels, .. } => {
            let mut v = vec![*path];
            v.extend(rels.iter().copied());
            v
        }
        OpKind::Project { items } => items.iter().map(|(s, _)| *s).collect(),
        OpKind::Aggregate { keys, aggregates } => keys
            .iter()
            .map(|(s, _)| *s)
            .chain(aggregates.iter().map(|a| a.slot))
            .collect(),
        OpKind::ProcedureCall { yields, .. } => yields.iter().map(|(_, s)| *s).collect(),
        OpKind::ExpandCount { count_slot, .. } => vec![*count_slot],
        OpKind::DistinctEndpoints { to, .. } => vec![*to],
        OpKind::Union { slots, .. } => slots.clone(),
        OpKind::Create { .. } | OpKind::Merge { .. } => create_writes(kind),
        _ => Vec::new(),
    }
}

/// Slots of the entities a `Create` or `Merge` makes.
fn create_writes(kind: &OpKind) -> Vec<Slot> {
    let parts = |nodes: &[CreateNode], rels: &[CreateRel]| {
        nodes
            .iter()
            .map(|n| n.slot)
            .chain(rels.iter().map(|r| r.slot))
            .collect()
    };
    match kind {
        OpKind::Create { nodes, rels } | OpKind::Merge { nodes, rels, .. } => parts(nodes, rels),
        _ => Vec::new(),
    }
}

/// The slots a plan reads from the row its `Argument` yields (reads not
/// bound below them), and the slots bound in its output rows.
pub fn free_reads(node: &PlanNode) -> (BTreeSet<Slot>, BTreeSet<Slot>) {
    let sub: Vec<(BTreeSet<Slot>, BTreeSet<Slot>)> = node.inputs.iter().map(free_reads).collect();
    let empty = || (BTreeSet::new(), BTreeSet::new());
    let (mut free, input_avail, mut avail) = match &node.kind {
        OpKind::Optional { .. }
        | OpKind::Apply { .. }
        | OpKind::SemiApply { .. }
        | OpKind::Merge { .. }
        | OpKind::Foreach { .. } => {
            let (f0, a0) = sub.first().cloned().unwrap_or_else(empty);
            let (mut f1, a1) = sub.get(1).cloned().unwrap_or_else(empty);
            if let OpKind::Foreach { variable, .. } = &node.kind {
                f1.remove(variable);
            }
            let mut free = f0;
            free.extend(f1.difference(&a0).copied());
            let avail = if matches!(node.kind, OpKind::SemiApply { .. } | OpKind::Foreach { .. }) {
                a0.clone()
            } else {
                a0.union(&a1).copied().collect()
            };
            (free, a0, avail)
        }
        OpKind::CartesianProduct | OpKind::HashJoin { .. } | OpKind::Union { .. } => {
            let mut free = BTreeSet::new();
            let mut avail = BTreeSet::new();
            for (f, a) in sub {
                free.extend(f);
                avail.extend(a);
            }
            (free, avail.clone(), avail)
        }
        OpKind::Aggregate { .. } => {
            let (f0, a0) = sub.into_iter().next().unwrap_or_else(empty);
            (f0, a0, BTreeSet::new())
        }
        _ => {
            let (f0, a0) = sub.into_iter().next().unwrap_or_else(empty);
            (f0, a0.clone(), a0)
        }
    };
    free.extend(op_reads(&node.kind).difference(&input_avail).copied());
    avail.extend(op_writes(&node.kind));
    (free, avail)
}

/// The slots whose values decide the value of the expression subquery
/// `plan` / `kind` (its free reads, in slot order), if the subquery may be
/// memoized: neither its plan nor its projection, nor any subquery nested
/// in them, updates the graph, calls a procedure or calls a random
/// function, so over one snapshot the same values of those slots always
/// give the same value. `None` if it may not.
pub fn subquery_memo_key(plan: &PlanNode, kind: &SubqueryKind) -> Option<Vec<Slot>> {
    let projection = match kind {
        SubqueryKind::Collect(x) => Some(&**x),
        _ => None,
    };
    if !plan_is_pure(plan) || !projection.is_none_or(expr_is_pure) {
        return None;
    }
    let (mut key, bound) = free_reads(plan);
    if let Some(x) = projection {
        key.extend(expr_reads(x).difference(&bound));
    }
    Some(key.into_iter().collect())
}

/// True if no operator of `plan` (nor of a plan nested in it) writes, calls
/// a procedure or calls a random function.
fn plan_is_pure(plan: &PlanNode) -> bool {
    let mut pure = true;
    plan.walk(&mut |n| {
        if n.kind.is_update() || matches!(n.kind, OpKind::ProcedureCall { .. }) {
            pure = false;
        }
        if pure {
            pure = n.kind.exprs().into_iter().all(expr_is_pure);
        }
    });
    pure
}

/// True if `e` calls no random function and nests no impure plan (one
/// that writes, calls a procedure or a random function): over one
/// snapshot the same slot values always give it the same value.
pub fn expr_is_pure(e: &Expr) -> bool {
    let mut pure = true;
    e.visit(&mut |x| match x {
        Expr::Function(name, _)
            if name.eq_ignore_ascii_case("rand") || name.eq_ignore_ascii_case("randomuuid") =>
        {
            pure = false
        }
        // (The projection of a nested `COLLECT` is visited as a child.)
        Expr::Subquery(plan, _) if pure => pure = plan_is_pure(plan),
        _ => {}
    });
    pure
}

/// Every slot written anywhere in the subtree (not counting plans nested in expressions).
pub fn subtree_writes(node: &PlanNode) -> BTreeSet<Slot> {
    let mut out = BTreeSet::new();
    node.walk(&mut |n| out.extend(op_writes(&n.kind)));
    out
}

/// Every slot read anywhere in the subtree, including reads of nested plans.
pub fn plan_reads(node: &PlanNode) -> BTreeSet<Slot> {
    let mut out = BTreeSet::new();
    node.walk(&mut |n| out.extend(op_reads(&n.kind)));
    out
}

/// Splits a predicate into its top-level `AND` conjuncts.
pub fn conjuncts(e: Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            Expr::Binary(crate::BinaryOp::And, a, b) => {
                stack.push(*b);
                stack.push(*a);
            }
            other => out.push(other),
        }
    }
    out
}

/// Joins conjuncts with `AND` (`None` for none).
pub fn and_all(parts: Vec<Expr>) -> Option<Expr> {
    parts
        .into_iter()
        .reduce(|a, b| Expr::Binary(crate::BinaryOp::And, Box::new(a), Box::new(b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BinaryOp;

    #[test]
    fn comprehension_variables_are_not_reads() {
        let e = Expr::Quantified {
            quantifier: crate::Quantifier::All,
            variable: 3,
            list: Box::new(Expr::Slot(1)),
            predicate: Box::new(Expr::Binary(
                BinaryOp::Gt,
                Box::new(Expr::Slot(3)),
                Box::new(Expr::Slot(2)),
            )),
        };
        assert_eq!(expr_reads(&e).into_iter().collect::<Vec<_>>(), vec![1, 2]);
    }

    #[test]
    fn conjuncts_round_trip() {
        let a = Expr::Slot(0);
        let b = Expr::Slot(1);
        let c = Expr::Slot(2);
        let e = and_all(vec![a.clone(), b.clone(), c.clone()]).unwrap();
        assert_eq!(conjuncts(e), vec![a, b, c]);
    }
}
