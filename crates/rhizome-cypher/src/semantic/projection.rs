//! `WITH` / `RETURN`: columns, aliases, aggregation and grouping, `ORDER BY`,
//! `SKIP` / `LIMIT` and the scope change a projection causes.

use super::{Analyzer, Ctx, ProjectionInfo, Type};
use crate::ast::*;
use crate::functions;
use rhizome_common::Result;

/// A variable reference found in an expression.
pub(crate) struct Ref {
    pub name: String,
    pub span: Span,
}

/// Whether the function named by `parts` is an aggregate.
fn is_aggregate_name(parts: &[Ident]) -> bool {
    match parts {
        [single] => functions::lookup_parts(&[single.name.as_str()]).is_some_and(|f| f.aggregate),
        _ => functions::is_aggregate(&join_names(parts)),
    }
}

/// Whether `e` contains an aggregate call (not looking into subqueries).
pub(crate) fn contains_aggregate(e: &Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        if let ExprKind::CountStar = x.kind {
            found = true;
        }
        if let ExprKind::FunctionCall { name, .. } = &x.kind {
            if is_aggregate_name(name) {
                found = true;
            }
        }
    });
    found
}

/// The direct sub-expressions of `e` (not entering subquery bodies).
pub(crate) fn children(e: &Expr) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    match &e.kind {
        ExprKind::List(items) => out.extend(items.iter()),
        ExprKind::Map(entries) => out.extend(entries.iter().map(|(_, v)| v)),
        ExprKind::Property(b, _)
        | ExprKind::Unary(_, b)
        | ExprKind::IsNull(b, _)
        | ExprKind::HasLabels(b, _) => out.push(b),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            out.push(a);
            out.push(b);
        }
        ExprKind::Slice(a, b, c) => {
            out.push(a);
            out.extend(b.iter().chain(c.iter()).map(|x| &**x));
        }
        ExprKind::Comparison(a, rest) => {
            out.push(a);
            out.extend(rest.iter().map(|(_, x)| x));
        }
        ExprKind::Case {
            operand,
            whens,
            else_,
        } => {
            out.extend(operand.iter().map(|x| &**x));
            for (a, b) in whens {
                out.push(a);
                out.push(b);
            }
            out.extend(else_.iter().map(|x| &**x));
        }
        ExprKind::FunctionCall { args, .. } => out.extend(args.iter()),
        ExprKind::ListComprehension {
            list,
            predicate,
            projection,
            ..
        } => {
            out.push(list);
            out.extend(predicate.iter().chain(projection.iter()).map(|x| &**x));
        }
        ExprKind::PatternComprehension {
            predicate,
            projection,
            ..
        } => {
            out.extend(predicate.iter().map(|x| &**x));
            out.push(projection);
        }
        ExprKind::Reduce {
            init, list, expr, ..
        } => {
            out.push(init);
            out.push(list);
            out.push(expr);
        }
        ExprKind::Quantified {
            list, predicate, ..
        } => {
            out.push(list);
            out.extend(predicate.iter().map(|x| &**x));
        }
        ExprKind::MapProjection(_, items) => {
            for i in items {
                if let MapProjectionItem::Literal(_, v) = i {
                    out.push(v);
                }
            }
        }
        _ => {}
    }
    out
}

/// Calls `f` on `e` and every sub-expression (not entering subquery bodies).
pub(crate) fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    for c in children(e) {
        walk(c, f);
    }
}

/// Free variable references of `e` (names bound inside `e` excluded).
pub(crate) fn free_refs(e: &Expr) -> Vec<Ref> {
    let mut out = Vec::new();
    refs(e, &mut Vec::new(), false, &mut out);
    out
}

fn pattern_refs(p: &PatternElement, bound: &[String], out: &mut Vec<Ref>) {
    let nodes = std::iter::once(&p.start).chain(p.chain.iter().map(|(_, n)| n));
    for n in nodes {
        if let Some(v) = &n.variable {
            if !bound.contains(&v.name) {
                out.push(Ref {
                    name: v.name.clone(),
                    span: v.span,
                });
            }
        }
    }
}

fn refs(e: &Expr, bound: &mut Vec<String>, in_agg: bool, out: &mut Vec<Ref>) {
    let scoped = |vars: &[&Ident], parts: &[&Expr], bound: &mut Vec<String>, out: &mut Vec<Ref>| {
        let n = bound.len();
        bound.extend(vars.iter().map(|v| v.name.clone()));
        for p in parts {
            refs(p, bound, in_agg, out);
        }
        bound.truncate(n);
    };
    match &e.kind {
        ExprKind::Variable(name) => {
            if !bound.contains(name) {
                out.push(Ref {
                    name: name.clone(),
                    span: e.span,
                });
            }
        }
        ExprKind::MapProjection(v, items) => {
            if !bound.contains(&v.name) {
                out.push(Ref {
                    name: v.name.clone(),
                    span: v.span,
                });
            }
            for i in items {
                match i {
                    MapProjectionItem::Literal(_, x) => refs(x, bound, in_agg, out),
                    MapProjectionItem::Variable(v) if !bound.contains(&v.name) => out.push(Ref {
                        name: v.name.clone(),
                        span: v.span,
                    }),
                    _ => {}
                }
            }
        }
        ExprKind::FunctionCall { name, args, .. } => {
            let agg = in_agg || is_aggregate_name(name);
            for a in args {
                refs(a, bound, agg, out);
            }
        }
        ExprKind::ListComprehension {
            variable,
            list,
            predicate,
            projection,
        } => {
            refs(list, bound, in_agg, out);
            let parts: Vec<&Expr> = predicate
                .iter()
                .chain(projection.iter())
                .map(|b| &**b)
                .collect();
            scoped(&[variable], &parts, bound, out);
        }
        ExprKind::Quantified {
            variable,
            list,
            predicate,
            ..
        } => {
            refs(list, bound, in_agg, out);
            let parts: Vec<&Expr> = predicate.iter().map(|b| &**b).collect();
            scoped(&[variable], &parts, bound, out);
        }
        ExprKind::Reduce {
            accumulator,
            init,
            variable,
            list,
            expr,
        } => {
            refs(init, bound, in_agg, out);
            refs(list, bound, in_agg, out);
            scoped(&[accumulator, variable], &[expr], bound, out);
        }
        ExprKind::PatternPredicate(p) => pattern_refs(p, bound, out),
        ExprKind::PatternComprehension { pattern, .. } => pattern_refs(pattern, bound, out),
        _ => {
            for c in children(e) {
                refs(c, bound, in_agg, out);
            }
        }
    }
}

/// How a leaf of an aggregating expression is judged.
struct GroupingCheck<'e> {
    /// Expressions of the non-aggregating items (grouping keys).
    keys: Vec<&'e Expr>,
    /// Expressions of all items (for ORDER BY matching).
    items: Vec<&'e Expr>,
    /// Names usable as variables.
    names: Vec<String>,
    /// Variables referenced by grouping keys (for choosing the error code).
    key_refs: Vec<String>,
    /// Checking an ORDER BY item (aggregate arguments must also be in scope).
    order_by: bool,
}

/// An offending variable reference and whether it is "ambiguous" (the
/// variable is known to the projection) rather than undefined.
struct Offender {
    name: String,
    span: Span,
    ambiguous: bool,
}

fn is_aggregate_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::CountStar => true,
        ExprKind::FunctionCall { name, .. } => is_aggregate_name(name),
        _ => false,
    }
}

fn check_grouping(
    e: &Expr,
    g: &GroupingCheck,
    bound: &mut Vec<String>,
    out: &mut Option<Offender>,
) {
    if out.is_some() {
        return;
    }
    let simple = |x: &Expr| match &x.kind {
        ExprKind::Variable(_) => true,
        ExprKind::Property(b, _) => matches!(b.kind, ExprKind::Variable(_)),
        _ => is_aggregate_call(x),
    };
    if g.order_by && simple(e) && g.items.iter().any(|i| **i == *e) {
        return;
    }
    if is_aggregate_call(e) {
        if g.order_by {
            for r in free_refs(e) {
                if !g.names.contains(&r.name) && !bound.contains(&r.name) {
                    *out = Some(Offender {
                        name: r.name,
                        span: r.span,
                        ambiguous: false,
                    });
                    return;
                }
            }
        }
        return;
    }
    let scoped = |vars: Vec<&Ident>,
                  parts: Vec<&Expr>,
                  bound: &mut Vec<String>,
                  out: &mut Option<Offender>| {
        let n = bound.len();
        bound.extend(vars.iter().map(|v| v.name.clone()));
        for p in parts {
            check_grouping(p, g, bound, out);
        }
        bound.truncate(n);
    };
    match &e.kind {
        ExprKind::Variable(v) => {
            if !g.names.contains(v) && !bound.contains(v) {
                *out = Some(Offender {
                    name: v.clone(),
                    span: e.span,
                    ambiguous: g.key_refs.contains(v) || !g.order_by,
                });
            }
        }
        ExprKind::Property(base, _) if matches!(base.kind, ExprKind::Variable(_)) => {
            if !g.keys.iter().any(|k| **k == *e) {
                check_grouping(base, g, bound, out);
            }
        }
        ExprKind::ListComprehension {
            variable,
            list,
            predicate,
            projection,
        } => {
            check_grouping(list, g, bound, out);
            scoped(
                vec![variable],
                predicate
                    .iter()
                    .chain(projection.iter())
                    .map(|b| &**b)
                    .collect(),
                bound,
                out,
            );
        }
        ExprKind::Quantified {
            variable,
            list,
            predicate,
            ..
        } => {
            check_grouping(list, g, bound, out);
            scoped(
                vec![variable],
                predicate.iter().map(|b| &**b).collect(),
                bound,
                out,
            );
        }
        ExprKind::Reduce {
            accumulator,
            init,
            variable,
            list,
            expr,
        } => {
            check_grouping(init, g, bound, out);
            check_grouping(list, g, bound, out);
            scoped(vec![accumulator, variable], vec![expr], bound, out);
        }
        _ => {
            for c in children(e) {
                check_grouping(c, g, bound, out);
            }
        }
    }
}

impl<'a> Analyzer<'a> {
    /// Analyses a `WITH` (`is_with`) or `RETURN`; replaces the innermost
    /// frame with the projected columns and returns their names.
    pub(crate) fn projection(&mut self, p: &Projection, is_with: bool) -> Result<Vec<String>> {
        let old_frame: Vec<(String, usize)> = self.current_names();
        let mut new_frame: Vec<(String, usize)> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        if p.star {
            if old_frame.is_empty() && p.items.is_empty() && !is_with {
                return Err(self.err(
                    p.span,
                    "NoVariablesInScope",
                    "RETURN * is not allowed when there are no variables in scope",
                ));
            }
            let mut sorted = old_frame.clone();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            for (n, i) in sorted {
                names.push(n.clone());
                new_frame.push((n, i));
            }
        }
        let item_ctx = Ctx {
            aggregates: true,
            predicate: false,
            in_aggregate: false,
        };
        let mut agg_flags = Vec::with_capacity(p.items.len());
        for item in &p.items {
            let ty = self.expr(&item.expr, item_ctx)?;
            let name = item.column_name().to_string();
            if p.items.iter().filter(|o| o.column_name() == name).count() > 1 {
                return Err(self.err(
                    item.span,
                    "ColumnNameConflict",
                    format!("multiple result columns with the same name `{name}`"),
                ));
            }
            agg_flags.push(contains_aggregate(&item.expr));
            let index = match (&item.expr.kind, &item.alias) {
                (ExprKind::Variable(v), None) => self.lookup(v).unwrap_or(self.variables.len()),
                _ => {
                    let span = item.alias.as_ref().map_or(item.span, |a| a.span);
                    let i = self.variables.len();
                    self.variables.push(super::VariableInfo {
                        name: name.clone(),
                        ty: ty.clone(),
                        declared_at: span,
                    });
                    i
                }
            };
            new_frame.retain(|(n, _)| *n != name);
            names.retain(|n| *n != name);
            new_frame.push((name.clone(), index));
            names.push(name);
        }
        let aggregating = agg_flags.iter().any(|&a| a);
        let keys: Vec<&Expr> = p
            .items
            .iter()
            .zip(&agg_flags)
            .filter(|(_, a)| !**a)
            .map(|(i, _)| &i.expr)
            .collect();
        let mut grouping_vars: Vec<String> = if p.star {
            old_frame.iter().map(|(n, _)| n.clone()).collect()
        } else {
            Vec::new()
        };
        for k in &keys {
            if let ExprKind::Variable(v) = &k.kind {
                grouping_vars.push(v.clone());
            }
        }
        let key_refs: Vec<String> = keys
            .iter()
            .flat_map(|k| free_refs(k))
            .map(|r| r.name)
            .collect();
        if aggregating {
            let g = GroupingCheck {
                keys: keys.clone(),
                items: Vec::new(),
                names: grouping_vars.clone(),
                key_refs: key_refs.clone(),
                order_by: false,
            };
            for (item, &agg) in p.items.iter().zip(&agg_flags) {
                if !agg {
                    continue;
                }
                let mut off = None;
                check_grouping(&item.expr, &g, &mut Vec::new(), &mut off);
                if let Some(o) = off {
                    return Err(self.err(
                        o.span,
                        "AmbiguousAggregationExpression",
                        format!("`{}` is used outside an aggregate but is not a grouping key of this projection", o.name),
                    ));
                }
            }
        }
        // ORDER BY sees the projected columns and, unless the projection
        // aggregates or is DISTINCT, the variables in scope before it.
        if !p.order_by.is_empty() {
            let mut combined = old_frame.clone();
            combined.extend(new_frame.iter().cloned());
            let restricted = aggregating || p.distinct;
            let mut visible = names.clone();
            visible.extend(grouping_vars.iter().cloned());
            let g = GroupingCheck {
                keys: keys.clone(),
                items: p.items.iter().map(|i| &i.expr).collect(),
                names: visible,
                key_refs: key_refs.clone(),
                order_by: true,
            };
            let saved = std::mem::replace(self.frames.last_mut().expect("frame"), combined);
            let result = (|| {
                for s in &p.order_by {
                    let sort_agg = contains_aggregate(&s.expr);
                    if sort_agg && !aggregating {
                        return Err(self.err(s.span, "InvalidAggregation", "aggregation in ORDER BY is only allowed when the projection aggregates"));
                    }
                    if restricted && !p.items.iter().any(|i| i.expr == s.expr) {
                        let mut off = None;
                        check_grouping(&s.expr, &g, &mut Vec::new(), &mut off);
                        if let Some(o) = off {
                            return Err(if o.ambiguous && sort_agg {
                                self.err(o.span, "AmbiguousAggregationExpression", format!("`{}` is not a grouping key and cannot be used in ORDER BY next to an aggregate", o.name))
                            } else {
                                self.err(o.span, "UndefinedVariable", format!("variable `{}` not defined (after DISTINCT or aggregation only projected columns are in scope)", o.name))
                            });
                        }
                    }
                    self.expr(
                        &s.expr,
                        Ctx {
                            aggregates: aggregating,
                            predicate: false,
                            in_aggregate: false,
                        },
                    )?;
                }
                Ok(())
            })();
            if let Some(f) = self.frames.last_mut() {
                *f = saved;
            }
            result?;
        }
        if is_with {
            if let Some(item) = p
                .items
                .iter()
                .find(|i| i.alias.is_none() && !matches!(i.expr.kind, ExprKind::Variable(_)))
            {
                return Err(self.err(
                    item.span,
                    "NoExpressionAlias",
                    "expression in WITH must be aliased (use AS)",
                ));
            }
        }
        for (e, what) in [(&p.skip, "SKIP"), (&p.limit, "LIMIT")] {
            if let Some(e) = e {
                self.skip_limit(e, what)?;
            }
        }
        // WHERE after WITH sees the projected columns and the variables before.
        if let Some(w) = &p.where_ {
            let mut combined = old_frame.clone();
            combined.extend(new_frame.iter().cloned());
            if let Some(f) = self.frames.last_mut() {
                *f = combined;
            }
            self.predicate(w)?;
        }
        if let Some(f) = self.frames.last_mut() {
            *f = new_frame;
        }
        self.projections.push(ProjectionInfo {
            span: p.span,
            columns: names.clone(),
            aggregating,
        });
        Ok(names)
    }
    fn skip_limit(&mut self, e: &Expr, what: &str) -> Result<()> {
        if let Some(r) = free_refs(e).first() {
            return Err(self.err(
                r.span,
                "NonConstantExpression",
                format!(
                    "{what} must be a constant expression, it cannot use variable `{}`",
                    r.name
                ),
            ));
        }
        let mut dynamic = false;
        walk(e, &mut |x| {
            if matches!(
                x.kind,
                ExprKind::PatternPredicate(_)
                    | ExprKind::PatternComprehension { .. }
                    | ExprKind::Exists(_)
                    | ExprKind::CountSubquery(_)
            ) {
                dynamic = true;
            }
        });
        if dynamic {
            return Err(self.err(
                e.span,
                "NonConstantExpression",
                format!("{what} must be a constant expression"),
            ));
        }
        let ty = self.expr(e, Ctx::plain())?;
        if let ExprKind::Literal(Literal::Integer(v)) = e.kind {
            if v < 0 {
                return Err(self.err(
                    e.span,
                    "NegativeIntegerArgument",
                    format!("{what} must be a non-negative integer, got {v}"),
                ));
            }
        }
        if !matches!(ty, Type::Integer | Type::Any | Type::Null) {
            return Err(self.err(
                e.span,
                "InvalidArgumentType",
                format!("{what} must be an integer, got {ty}"),
            ));
        }
        Ok(())
    }
}
