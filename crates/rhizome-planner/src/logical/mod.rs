//! Clause-by-clause construction of the plan from the analysed AST.
//!
//! The planner walks the clauses of a query in order, threading the plan
//! built so far and a [`Scope`] (which variable lives in which slot).
//! Each clause extends the plan: `MATCH` with scans and expands
//! ([`r#match`]), `WITH`/`RETURN` with projections, aggregation and sorting
//! ([`projection`]), subqueries and pattern expressions ([`subquery`]),
//! `UNION` ([`union`]), procedure calls ([`call`]). Choices that depend on
//! statistics (where a pattern starts, the order of expansions) are made
//! here with [`crate::cost`]; local rewrites are left to [`crate::rules`].

pub(crate) mod call;
#[path = "match.rs"]
pub(crate) mod r#match;
pub(crate) mod projection;
pub(crate) mod subquery;
pub(crate) mod union;
pub(crate) mod update;

use crate::context::PlannerContext;
use crate::slots::Slots;
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_cypher::ast;
use rhizome_plan::{OpKind, PlanNode, Slot};

/// What a variable holds, as far as the planner knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VarKind {
    /// A node.
    Node,
    /// A single relationship.
    Rel,
    /// A list of relationships (variable-length pattern).
    RelList,
    /// A path.
    Path,
    /// Any other value.
    Value,
}

/// One visible variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Var {
    pub name: String,
    pub slot: Slot,
    pub kind: VarKind,
}

/// The variables visible at a point of the query, later bindings shadowing earlier ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scope {
    vars: Vec<Var>,
}

impl Scope {
    /// Looks a variable up.
    pub fn get(&self, name: &str) -> Option<&Var> {
        self.vars.iter().rev().find(|v| v.name == name)
    }

    /// Binds (or rebinds) a variable.
    pub fn bind(&mut self, name: &str, slot: Slot, kind: VarKind) {
        self.vars.push(Var {
            name: name.to_string(),
            slot,
            kind,
        });
    }

    /// Visible variables, each name once (its latest binding), in binding order.
    pub fn visible(&self) -> Vec<Var> {
        let mut out: Vec<Var> = Vec::new();
        for v in &self.vars {
            if let Some(e) = out.iter_mut().find(|e| e.name == v.name) {
                *e = v.clone();
            } else {
                out.push(v.clone());
            }
        }
        out
    }
}

/// The planner's state for one statement.
pub(crate) struct Planner<'a> {
    pub ctx: &'a dyn PlannerContext,
    pub slots: Slots,
    /// Aggregate calls already computed into slots (active while lowering
    /// expressions evaluated after an `Aggregate`).
    pub agg_map: Vec<(ast::Expr, Slot)>,
    /// Result columns of the statement as analysed (standalone calls).
    pub analyzed_columns: Vec<String>,
}

/// A `SemanticError` for constructs the planner does not handle yet.
pub(crate) fn unsupported(what: &str) -> Error {
    Error::new(
        ErrorKind::SemanticError,
        format!("{what} is not supported yet"),
    )
}

/// An `Argument` leaf.
pub(crate) fn argument() -> PlanNode {
    PlanNode::new(OpKind::Argument, vec![], 1.0)
}

/// `kind` over `input`.
pub(crate) fn over(kind: OpKind, input: PlanNode) -> PlanNode {
    PlanNode::new(kind, vec![input], 0.0)
}

/// The result of planning a query: its plan, result columns and the scope after it.
pub(crate) struct Planned {
    pub plan: PlanNode,
    pub columns: Vec<(String, Slot)>,
    pub scope: Scope,
    pub ordered: bool,
}

impl<'a> Planner<'a> {
    pub fn new(ctx: &'a dyn PlannerContext) -> Planner<'a> {
        Planner {
            ctx,
            slots: Slots::new(),
            agg_map: Vec::new(),
            analyzed_columns: Vec::new(),
        }
    }

    /// Plans a (union) query on top of `input`, with `scope` visible
    /// (`importing`: the `CALL { }` rule, only a leading `WITH` sees it).
    pub fn query(
        &mut self,
        q: &ast::Query,
        input: PlanNode,
        scope: &Scope,
        importing: bool,
    ) -> Result<Planned> {
        if q.unions.is_empty() {
            let s = if importing {
                subquery::import_scope(&q.first, scope)
            } else {
                scope.clone()
            };
            self.single_query(&q.first, input, s)
        } else {
            self.union(q, input, scope, importing)
        }
    }

    /// Plans the clauses of one single query in order.
    pub fn single_query(
        &mut self,
        q: &ast::SingleQuery,
        input: PlanNode,
        mut scope: Scope,
    ) -> Result<Planned> {
        let mut plan = input;
        let mut columns = Vec::new();
        let mut ordered = false;
        let standalone_call = q.clauses.len() == 1;
        for clause in &q.clauses {
            let updating = matches!(
                clause,
                ast::Clause::Create(_)
                    | ast::Clause::Merge(_)
                    | ast::Clause::Set(_)
                    | ast::Clause::Remove(_)
                    | ast::Clause::Delete(_)
                    | ast::Clause::Foreach(_)
            );
            if !updating {
                // Reads after a write see all of it: a barrier between them.
                plan = Self::barrier(plan);
            }
            match clause {
                ast::Clause::Match(m) => {
                    let (p, s) = self.match_clause(m, plan, &scope)?;
                    plan = p;
                    scope = s;
                }
                ast::Clause::Unwind(u) => {
                    let list = self.lower(&u.expr, &scope)?;
                    let out = self.slots.named(&u.variable.name);
                    plan = over(OpKind::Unwind { list, out }, plan);
                    scope.bind(&u.variable.name, out, VarKind::Value);
                }
                ast::Clause::With(p) => {
                    let r = self.projection(p, plan, &scope)?;
                    plan = r.plan;
                    scope = r.scope;
                }
                ast::Clause::Return(p) => {
                    let r = self.projection(p, plan, &scope)?;
                    plan = r.plan;
                    scope = r.scope;
                    columns = r.columns;
                    ordered = !p.order_by.is_empty();
                }
                ast::Clause::Call(c) => {
                    let r = self.call_procedure(c, plan, &scope, standalone_call)?;
                    plan = r.plan;
                    scope = r.scope;
                    columns = r.columns;
                }
                ast::Clause::CallSubquery(c) => {
                    let (p, s) = self.call_subquery(c, plan, &scope)?;
                    plan = p;
                    scope = s;
                }
                ast::Clause::Create(_)
                | ast::Clause::Merge(_)
                | ast::Clause::Set(_)
                | ast::Clause::Remove(_)
                | ast::Clause::Delete(_)
                | ast::Clause::Foreach(_) => {
                    let (p, s) = self.update_clause(clause, plan, &scope)?;
                    plan = p;
                    scope = s;
                }
            }
        }
        Ok(Planned {
            plan,
            columns,
            scope,
            ordered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_shadows_and_dedups() {
        let mut s = Scope::default();
        s.bind("a", 0, VarKind::Node);
        s.bind("b", 1, VarKind::Value);
        s.bind("a", 2, VarKind::Value);
        assert_eq!(s.get("a").unwrap().slot, 2);
        let names: Vec<_> = s.visible().into_iter().map(|v| (v.name, v.slot)).collect();
        assert_eq!(names, vec![("a".into(), 2), ("b".into(), 1)]);
    }
}
