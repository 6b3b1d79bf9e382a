//! Queries, unions and clauses.

use super::{Analyzer, Ctx, ProjectionInfo, QueryKind, Type};
use crate::ast::*;
use crate::semantic::patterns::PatternMode;
use rhizome_common::{ErrorKind, Result};

impl<'a> Analyzer<'a> {
    /// Analyses a (union) query; returns its result columns.
    pub(crate) fn query(&mut self, q: &Query, kind: QueryKind) -> Result<Vec<String>> {
        self.check_stack(q.span)?;
        let base = self.frames.len();
        self.push_frame();
        let columns = self.single_query(&q.first, kind);
        self.frames.truncate(base);
        let columns = columns?;
        let first_all = q.unions.first().map(|u| u.all);
        for u in &q.unions {
            if Some(u.all) != first_all {
                return Err(self.err(
                    u.span,
                    "InvalidClauseComposition",
                    "cannot mix UNION and UNION ALL",
                ));
            }
            self.push_frame();
            let other = self.single_query(&u.query, kind);
            self.frames.truncate(base);
            let other = other?;
            if other != columns {
                return Err(self.err(
                    u.span,
                    "DifferentColumnsInUnion",
                    format!(
                        "all sub queries in a UNION must have the same return column names: [{}] vs [{}]",
                        columns.join(", "),
                        other.join(", ")
                    ),
                ));
            }
        }
        Ok(columns)
    }

    fn single_query(&mut self, q: &SingleQuery, kind: QueryKind) -> Result<Vec<String>> {
        let mut columns = Vec::new();
        let n = q.clauses.len();
        for (i, clause) in q.clauses.iter().enumerate() {
            let last = i + 1 == n;
            if clause.is_update() {
                self.updating = true;
                if kind == QueryKind::ExpressionSubquery {
                    return Err(self.err(
                        clause.span(),
                        "InvalidClauseComposition",
                        "an EXISTS or COUNT subquery cannot contain updating clauses",
                    ));
                }
            }
            match clause {
                Clause::Return(p) => {
                    if !last {
                        return Err(self.err(
                            p.span,
                            "InvalidClauseComposition",
                            "RETURN can only be used at the end of the query",
                        ));
                    }
                    columns = self.projection(p, false)?;
                }
                Clause::With(p) => {
                    self.projection(p, true)?;
                }
                Clause::Call(c) if n > 1 || kind != QueryKind::Top => {
                    // `YIELD *` names its columns implicitly, which only a
                    // standalone call may do (openCypher's Call5).
                    if let Some(y) = c.yield_.as_ref().filter(|y| y.star) {
                        return Err(self.err(
                            y.span,
                            "UnexpectedSyntax",
                            "`YIELD *` is only allowed in a standalone procedure call; name the fields inside a query",
                        ));
                    }
                    self.clause(clause)?;
                }
                other => self.clause(other)?,
            }
            if last && kind == QueryKind::Top {
                let ok = match clause {
                    Clause::Return(_) | Clause::Call(_) | Clause::CallSubquery(_) => true,
                    c => c.is_update(),
                };
                if !ok {
                    return Err(self.err(
                        clause.span(),
                        "InvalidClauseComposition",
                        format!(
                            "query cannot conclude with {} (must be RETURN, an update clause or a procedure call)",
                            clause.name()
                        ),
                    ));
                }
                if let Clause::Call(c) = clause {
                    if n > 1 && c.yield_.is_none() {
                        // In-query calls without YIELD produce no columns.
                    }
                    if n == 1 {
                        columns = self.standalone_columns(c);
                    }
                }
            }
        }
        Ok(columns)
    }

    pub(crate) fn clause(&mut self, clause: &Clause) -> Result<()> {
        self.check_stack(clause.span())?;
        match clause {
            Clause::Match(m) => {
                let mut seen = Vec::new();
                for part in &m.pattern {
                    self.pattern_part(part, PatternMode::Match, &mut seen)?;
                }
                if let Some(w) = &m.where_ {
                    self.predicate(w)?;
                }
            }
            Clause::Unwind(u) => {
                let ty = self.expr(&u.expr, Ctx::plain())?;
                if self.current_has(&u.variable.name) {
                    return Err(self.already_bound(&u.variable));
                }
                let elem = match ty {
                    Type::List(t) => *t,
                    _ => Type::Any,
                };
                self.bind(&u.variable.name, elem, u.variable.span);
            }
            Clause::Create(c) => {
                let mut seen = Vec::new();
                for part in &c.pattern {
                    self.pattern_part(part, PatternMode::Create, &mut seen)?;
                }
            }
            Clause::Merge(m) => {
                let mut seen = Vec::new();
                self.pattern_part(&m.pattern, PatternMode::Merge, &mut seen)?;
                for a in &m.actions {
                    self.set_items(&a.items)?;
                }
            }
            Clause::Set(s) => self.set_items(&s.items)?,
            Clause::Remove(r) => {
                for item in &r.items {
                    match item {
                        RemoveItem::Property(e) => {
                            self.expr(e, Ctx::plain())?;
                        }
                        RemoveItem::Labels { variable, .. } => {
                            self.entity_variable(variable, true)?;
                        }
                    }
                }
            }
            Clause::Delete(d) => {
                for e in &d.exprs {
                    if let ExprKind::HasLabels(..) = e.kind {
                        return Err(self.err(e.span, "InvalidDelete", "DELETE expects nodes, relationships or paths, not a label expression; use REMOVE to remove labels"));
                    }
                    let ty = self.expr(e, Ctx::plain())?;
                    if !matches!(
                        ty,
                        Type::Any
                            | Type::Null
                            | Type::Node
                            | Type::Relationship
                            | Type::Path
                            | Type::List(_)
                    ) {
                        return Err(self.err(
                            e.span,
                            "InvalidArgumentType",
                            format!("DELETE expects a node, relationship or path but got {ty}"),
                        ));
                    }
                }
            }
            Clause::Foreach(f) => {
                let ty = self.expr(&f.list, Ctx::plain())?;
                if !ty.may_be_list() {
                    return Err(self.err(
                        f.list.span,
                        "InvalidArgumentType",
                        format!("FOREACH expects a list but got {ty}"),
                    ));
                }
                self.scoped(|this| {
                    this.bind(&f.variable.name, ty.element(), f.variable.span);
                    for c in &f.clauses {
                        if !c.is_update() {
                            return Err(this.err(
                                c.span(),
                                "InvalidClauseComposition",
                                format!(
                                    "{} cannot be used inside FOREACH, only updating clauses",
                                    c.name()
                                ),
                            ));
                        }
                        this.clause(c)?;
                    }
                    Ok(())
                })?;
            }
            Clause::Call(c) => self.call_procedure(c)?,
            Clause::CallSubquery(c) => {
                let columns = self.query(&c.query, QueryKind::CallSubquery)?;
                for col in columns {
                    if self.lookup(&col).is_some() && self.current_has(&col) {
                        return Err(self.err(
                            c.span,
                            "VariableAlreadyBound",
                            format!("variable `{col}` already declared in outer scope"),
                        ));
                    }
                    self.bind(&col, Type::Any, c.span);
                }
            }
            Clause::With(p) => {
                self.projection(p, true)?;
            }
            Clause::Return(p) => {
                self.projection(p, false)?;
            }
        }
        Ok(())
    }

    pub(crate) fn current_has(&self, name: &str) -> bool {
        self.lookup(name).is_some()
    }

    pub(crate) fn already_bound(&self, v: &Ident) -> rhizome_common::Error {
        self.err(
            v.span,
            "VariableAlreadyBound",
            format!("variable `{}` already declared", v.name),
        )
    }

    /// A variable that must be bound to a node (or relationship when `allow_rel`).
    fn entity_variable(&mut self, v: &Ident, allow_rel: bool) -> Result<Type> {
        let Some(i) = self.lookup(&v.name) else {
            return Err(self.err(
                v.span,
                "UndefinedVariable",
                format!("variable `{}` not defined", v.name),
            ));
        };
        self.references.push((v.span, i));
        let ty = self.ty_of(i);
        let ok = ty.may_be_node() || (allow_rel && ty.may_be_relationship());
        if !ok {
            return Err(self.err(
                v.span,
                "InvalidArgumentType",
                format!("expected a node but `{}` is {ty}", v.name),
            ));
        }
        Ok(ty)
    }

    fn set_items(&mut self, items: &[SetItem]) -> Result<()> {
        for item in items {
            match item {
                SetItem::Property { target, value, .. } => {
                    self.expr(target, Ctx::plain())?;
                    self.expr(value, Ctx::plain())?;
                }
                SetItem::Replace {
                    variable, value, ..
                }
                | SetItem::Merge {
                    variable, value, ..
                } => {
                    self.entity_variable(variable, true)?;
                    let ty = self.expr(value, Ctx::plain())?;
                    if !matches!(
                        ty,
                        Type::Any | Type::Null | Type::Map | Type::Node | Type::Relationship
                    ) {
                        return Err(self.err(
                            value.span,
                            "InvalidArgumentType",
                            format!("expected a map of properties but got {ty}"),
                        ));
                    }
                }
                SetItem::Labels { variable, .. } => {
                    self.entity_variable(variable, false)?;
                }
            }
        }
        Ok(())
    }

    fn find_procedure(&self, c: &CallProcedure) -> Result<Option<super::ProcedureSignature>> {
        let Some(procs) = &self.opts.procedures else {
            return Ok(None);
        };
        let name = c.qualified_name();
        match procs.iter().find(|p| p.name == name) {
            Some(p) => Ok(Some(p.clone())),
            None => Err(self.err_kind(
                c.span,
                ErrorKind::ProcedureError,
                "ProcedureNotFound",
                format!("there is no procedure with the name `{name}` registered"),
            )),
        }
    }

    fn standalone_columns(&self, c: &CallProcedure) -> Vec<String> {
        if let Some(y) = &c.yield_ {
            return y.items.iter().map(|i| i.variable().name.clone()).collect();
        }
        self.opts
            .procedures
            .as_ref()
            .and_then(|ps| ps.iter().find(|p| p.name == c.qualified_name()))
            .map(|p| p.outputs.iter().map(|(n, _)| n.clone()).collect())
            .unwrap_or_default()
    }

    fn call_procedure(&mut self, c: &CallProcedure) -> Result<()> {
        let sig = self.find_procedure(c)?;
        match &c.args {
            Some(args) => {
                for a in args {
                    self.expr(a, Ctx::plain())?;
                }
                if let Some(sig) = &sig {
                    for (a, (_, want)) in args.iter().zip(&sig.inputs) {
                        let got = self.expr(a, Ctx::plain())?;
                        let ok = match (want, &got) {
                            (Type::Any, _) | (_, Type::Any | Type::Null) => true,
                            (Type::Float, Type::Integer) => true,
                            (w, g) => w == g,
                        };
                        if !ok {
                            return Err(self.err(
                                a.span,
                                "InvalidArgumentType",
                                format!("procedure `{}` expects {want} but got {got}", sig.name),
                            ));
                        }
                    }
                    let all = sig.inputs.len();
                    let required = all.saturating_sub(sig.optional);
                    if args.len() < required || args.len() > all {
                        let expected = if required == all {
                            all.to_string()
                        } else {
                            format!("{required} to {all}")
                        };
                        return Err(self.err(
                            c.span,
                            "InvalidNumberOfArguments",
                            format!(
                                "procedure `{}` takes {expected} argument(s) but {} were given",
                                sig.name,
                                args.len()
                            ),
                        ));
                    }
                }
            }
            None => {
                if let Some(sig) = &sig {
                    if !sig.inputs.is_empty() {
                        let standalone = self.frames.len() <= 2 && self.current_names().is_empty();
                        if !standalone || c.yield_.is_some() {
                            return Err(self.err(
                                c.span,
                                "InvalidArgumentPassingMode",
                                format!("procedure `{}` needs explicit arguments when called inside a query", sig.name),
                            ));
                        }
                        if let Some(params) = &self.opts.parameters {
                            if let Some((missing, _)) =
                                sig.inputs.iter().find(|(n, _)| !params.contains(n))
                            {
                                return Err(self.err_kind(
                                    c.span,
                                    ErrorKind::ParameterMissing,
                                    "MissingParameter",
                                    format!("expected parameter `${missing}` for the implicit arguments of `{}`", sig.name),
                                ));
                            }
                        }
                    }
                }
            }
        }
        if let Some(y) = &c.yield_ {
            let mut cols = Vec::new();
            if y.star {
                if let Some(sig) = &sig {
                    for (name, ty) in &sig.outputs {
                        self.bind(name, ty.clone(), y.span);
                        cols.push(name.clone());
                    }
                }
            }
            for item in &y.items {
                let ty = match &sig {
                    Some(sig) => match sig.outputs.iter().find(|(n, _)| *n == item.field.name) {
                        Some((_, ty)) => ty.clone(),
                        None => {
                            return Err(self.err(
                                item.field.span,
                                "UndefinedVariable",
                                format!(
                                    "procedure `{}` has no output field `{}`",
                                    sig.name, item.field.name
                                ),
                            ))
                        }
                    },
                    None => Type::Any,
                };
                let v = item.variable();
                if self.current_has(&v.name) {
                    return Err(self.already_bound(v));
                }
                self.bind(&v.name, ty, v.span);
                cols.push(v.name.clone());
            }
            if let Some(w) = &y.where_ {
                self.predicate(w)?;
            }
            self.projections.push(ProjectionInfo {
                span: y.span,
                columns: cols,
                aggregating: false,
            });
        }
        Ok(())
    }
}
