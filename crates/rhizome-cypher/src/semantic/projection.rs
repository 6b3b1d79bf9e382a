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
    pub in_aggregate: bool,
}

/// Whether `e` contains an aggregate call (not looking into subqueries).
pub(crate) fn contains_aggregate(e: &Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        if let ExprKind::CountStar = x.kind {
            found = true;
        }
        if let ExprKind::FunctionCall { name, .. } = &x.kind {
            if functions::is_aggregate(&join_names(name)) {
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
        ExprKind::Property(b, _) | ExprKind::Unary(_, b) | ExprKind::IsNull(b, _) | ExprKind::HasLabels(b, _) => out.push(b),
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
        ExprKind::Case { operand, whens, else_ } => {
            out.extend(operand.iter().map(|x| &**x));
            for (a, b) in whens {
                out.push(a);
                out.push(b);
            }
            out.extend(else_.iter().map(|x| &**x));
        }
        ExprKind::FunctionCall { args, .. } => out.extend(args.iter()),
        ExprKind::ListComprehension { list, predicate, projection, .. } => {
            out.push(list);
            out.extend(predicate.iter().chain(projection.iter()).map(|x| &**x));
        }
        ExprKind::PatternComprehension { predicate, projection, .. } => {
            out.extend(predicate.iter().map(|x| &**x));
            out.push(projection);
        }
        ExprKind::Reduce { init, list, expr, .. } => {
            out.push(init);
            out.push(list);
            out.push(expr);
        }
        ExprKind::Quantified { list, predicate, .. } => {
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

fn pattern_refs(p: &PatternElement, bound: &mut Vec<String>, in_agg: bool, out: &mut Vec<Ref>) {
    let nodes = std::iter::once(&p.start).chain(p.chain.iter().map(|(_, n)| n));
    for n in nodes {
        if let Some(v) = &n.variable {
            if !bound.contains(&v.name) {
                out.push(Ref { name: v.name.clone(), span: v.span, in_aggregate: in_agg });
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
                out.push(Ref { name: name.clone(), span: e.span, in_aggregate: in_agg });
            }
        }
        ExprKind::MapProjection(v, items) => {
            if !bound.contains(&v.name) {
                out.push(Ref { name: v.name.clone(), span: v.span, in_aggregate: in_agg });
            }
            for i in items {
                match i {
                    MapProjectionItem::Literal(_, x) => refs(x, bound, in_agg, out),
                    MapProjectionItem::Variable(v) if !bound.contains(&v.name) => {
                        out.push(Ref { name: v.name.clone(), span: v.span, in_aggregate: in_agg })
                    }
                    _ => {}
                }
            }
        }
        ExprKind::FunctionCall { name, args, .. } => {
            let agg = in_agg || functions::is_aggregate(&join_names(name));
            for a in args {
                refs(a, bound, agg, out);
            }
        }
        ExprKind::ListComprehension { variable, list, predicate, projection } => {
            refs(list, bound, in_agg, out);
            let parts: Vec<&Expr> = predicate.iter().chain(projection.iter()).map(|b| &**b).collect();
            scoped(&[variable], &parts, bound, out);
        }
        ExprKind::Quantified { variable, list, predicate, .. } => {
            refs(list, bound, in_agg, out);
            let parts: Vec<&Expr> = predicate.iter().map(|b| &**b).collect();
            scoped(&[variable], &parts, bound, out);
        }
        ExprKind::Reduce { accumulator, init, variable, list, expr } => {
            refs(init, bound, in_agg, out);
            refs(list, bound, in_agg, out);
            scoped(&[accumulator, variable], &[expr], bound, out);
        }
        ExprKind::PatternPredicate(p) => pattern_refs(p, bound, in_agg, out),
        ExprKind::PatternComprehension { pattern, .. } => pattern_refs(pattern, bound, in_agg, out),
        _ => {
            for c in children(e) {
                refs(c, bound, in_agg, out);
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
            if old_frame.is_empty() && p.items.is_empty() {
                return Err(self.err(p.span, "NoVariablesInScope", format!("{} * is not allowed when there are no variables in scope", if is_with { "WITH" } else { "RETURN" })));
            }
            let mut sorted = old_frame.clone();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            for (n, i) in sorted {
                names.push(n.clone());
                new_frame.push((n, i));
            }
        }
        let item_ctx = Ctx { aggregates: true, predicate: false };
        let mut agg_flags = Vec::with_capacity(p.items.len());
        for item in &p.items {
            let ty = self.expr(&item.expr, item_ctx)?;
            if is_with && item.alias.is_none() && !matches!(item.expr.kind, ExprKind::Variable(_)) {
                return Err(self.err(item.span, "NoExpressionAlias", "expression in WITH must be aliased (use AS)"));
            }
            let name = item.column_name().to_string();
            if p.items.iter().filter(|o| o.column_name() == name).count() > 1 {
                return Err(self.err(item.span, "ColumnNameConflict", format!("multiple result columns with the same name `{name}`")));
            }
            agg_flags.push(contains_aggregate(&item.expr));
            let index = match (&item.expr.kind, &item.alias) {
                (ExprKind::Variable(v), None) => self.lookup(v).unwrap_or_else(|| self.variables.len()),
                _ => {
                    let span = item.alias.as_ref().map_or(item.span, |a| a.span);
                    let i = self.variables.len();
                    self.variables.push(super::VariableInfo { name: name.clone(), ty: ty.clone(), declared_at: span });
                    i
                }
            };
            new_frame.retain(|(n, _)| *n != name);
            names.retain(|n| *n != name);
            new_frame.push((name.clone(), index));
            names.push(name);
        }
        let aggregating = agg_flags.iter().any(|&a| a);
        // Variables usable outside aggregates: grouping keys that are plain variables.
        let mut grouping: Vec<String> = if p.star { old_frame.iter().map(|(n, _)| n.clone()).collect() } else { Vec::new() };
        for (item, &agg) in p.items.iter().zip(&agg_flags) {
            if let (false, ExprKind::Variable(v)) = (agg, &item.expr.kind) {
                grouping.push(v.clone());
            }
        }
        if aggregating {
            for (item, &agg) in p.items.iter().zip(&agg_flags) {
                if !agg {
                    continue;
                }
                if let Some(r) = free_refs(&item.expr).into_iter().find(|r| !r.in_aggregate && !grouping.contains(&r.name)) {
                    return Err(self.err(
                        r.span,
                        "AmbiguousAggregationExpression",
                        format!("`{}` is used outside an aggregate but is not a grouping key of this projection", r.name),
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
            let saved = std::mem::replace(self.frames.last_mut().expect("frame"), combined);
            let result = (|| {
                for s in &p.order_by {
                    let sort_agg = contains_aggregate(&s.expr);
                    if restricted && !p.items.iter().any(|i| i.expr == s.expr) {
                        for r in free_refs(&s.expr) {
                            let projected = names.contains(&r.name);
                            let allowed = projected || (!r.in_aggregate && grouping.contains(&r.name)) || (r.in_aggregate && aggregating);
                            if !allowed {
                                return Err(if sort_agg {
                                    self.err(r.span, "AmbiguousAggregationExpression", format!("`{}` is not a grouping key and cannot be used in ORDER BY after aggregation", r.name))
                                } else {
                                    self.err(r.span, "UndefinedVariable", format!("variable `{}` not defined (only projected columns can be used in ORDER BY after DISTINCT or aggregation)", r.name))
                                });
                            }
                        }
                    }
                    if sort_agg && !aggregating {
                        return Err(self.err(s.span, "InvalidAggregation", "aggregation in ORDER BY is only allowed when the projection aggregates"));
                    }
                    self.expr(&s.expr, Ctx { aggregates: aggregating, predicate: false })?;
                }
                Ok(())
            })();
            if let Some(f) = self.frames.last_mut() {
                *f = saved;
            }
            result?;
        }
        for (e, what) in [(&p.skip, "SKIP"), (&p.limit, "LIMIT")] {
            if let Some(e) = e {
                self.skip_limit(e, what)?;
            }
        }
        if let Some(f) = self.frames.last_mut() {
            *f = new_frame;
        }
        if let Some(w) = &p.where_ {
            self.predicate(w)?;
        }
        self.projections.push(ProjectionInfo { span: p.span, columns: names.clone(), aggregating });
        Ok(names)
    }

    fn skip_limit(&mut self, e: &Expr, what: &str) -> Result<()> {
        if let Some(r) = free_refs(e).first() {
            return Err(self.err(r.span, "NonConstantExpression", format!("{what} must be a constant expression, it cannot use variable `{}`", r.name)));
        }
        let mut dynamic = false;
        walk(e, &mut |x| {
            if matches!(x.kind, ExprKind::PatternPredicate(_) | ExprKind::PatternComprehension { .. } | ExprKind::Exists(_) | ExprKind::CountSubquery(_)) {
                dynamic = true;
            }
        });
        if dynamic {
            return Err(self.err(e.span, "NonConstantExpression", format!("{what} must be a constant expression")));
        }
        let ty = self.expr(e, Ctx::plain())?;
        if let ExprKind::Literal(Literal::Integer(v)) = e.kind {
            if v < 0 {
                return Err(self.err(e.span, "NegativeIntegerArgument", format!("{what} must be a non-negative integer, got {v}")));
            }
        }
        if !matches!(ty, Type::Integer | Type::Any | Type::Null) {
            return Err(self.err(e.span, "InvalidArgumentType", format!("{what} must be an integer, got {ty}")));
        }
        Ok(())
    }
}
