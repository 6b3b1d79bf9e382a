//! Subqueries: `CALL { }` (an `Apply` whose inner plan starts at
//! `Argument`), and the plans of expression subqueries (`EXISTS { }`,
//! `COUNT { }`, pattern predicates and comprehensions), which
//! [`crate::expr`] wraps in `Expr::Subquery`.
//!
//! Expression subqueries see the whole outer scope. A `CALL { }` body sees
//! only what its leading `WITH` imports: when the body starts with `WITH`,
//! that projection is planned in the outer scope (and narrows it);
//! otherwise the body starts with an empty scope.

use super::{argument, Planner, Scope};
use rhizome_common::Result;
use rhizome_cypher::ast;
use rhizome_plan::{OpKind, PlanNode};

/// The scope a `CALL { }` body (one union branch) starts with.
pub(crate) fn import_scope(q: &ast::SingleQuery, outer: &Scope) -> Scope {
    match q.clauses.first() {
        Some(ast::Clause::With(_)) => outer.clone(),
        _ => Scope::default(),
    }
}

impl Planner<'_> {
    /// The plan of a pattern with an optional `WHERE`, from `Argument`, and
    /// the scope inside it (outer variables plus the pattern's).
    pub(crate) fn pattern_subquery(
        &mut self,
        parts: &[ast::PatternPart],
        where_: Option<&ast::Expr>,
        scope: &Scope,
    ) -> Result<(PlanNode, Scope)> {
        self.pattern(parts, where_, argument(), scope)
    }

    /// The plan of an `EXISTS { }` / `COUNT { }` body, from `Argument`.
    pub(crate) fn subquery_body(
        &mut self,
        body: &ast::SubqueryBody,
        scope: &Scope,
    ) -> Result<PlanNode> {
        match body {
            ast::SubqueryBody::Pattern { pattern, where_ } => {
                Ok(self.pattern_subquery(pattern, where_.as_deref(), scope)?.0)
            }
            ast::SubqueryBody::Query(q) => Ok(self.query(q, argument(), scope, false)?.plan),
        }
    }

    /// `CALL { }`: `Apply` of the body to every row; the body's columns join the scope.
    ///
    /// A body with updating clauses runs once per input row, in order, each
    /// run seeing the writes of the runs before it (the updating runtime
    /// applies it row by row); the `Apply` then acts as a write, so an
    /// `Eager` barrier sits above it and later reads see all its writes. A
    /// body without `RETURN` (a *unit* subquery) passes every input row
    /// through once; its plan is marked by an `Eager` on top (a returning
    /// body never ends in one).
    pub(crate) fn call_subquery(
        &mut self,
        c: &ast::CallSubquery,
        plan: PlanNode,
        scope: &Scope,
    ) -> Result<(PlanNode, Scope)> {
        let inner = self.query(&c.query, argument(), scope, true)?;
        let updating = inner.plan.has_updates();
        if updating && !c.query.unions.is_empty() {
            return Err(super::unsupported("UNION inside an updating CALL { }"));
        }
        let mut out = scope.clone();
        for (name, slot) in &inner.columns {
            out.bind(name, *slot, super::VarKind::Value);
        }
        let body = match (updating, inner.columns.is_empty()) {
            (true, true) => super::over(OpKind::Eager, inner.plan),
            // A returning body whose RETURN projected nothing new ends in
            // the barrier before it: an empty projection keeps it apart
            // from the unit marker.
            (true, false) if matches!(inner.plan.kind, OpKind::Eager) => {
                super::over(OpKind::Project { items: Vec::new() }, inner.plan)
            }
            _ => inner.plan,
        };
        let apply = PlanNode::new(
            OpKind::Apply {
                scope: Default::default(),
            },
            vec![plan, body],
            0.0,
        );
        Ok((
            if updating {
                super::over(OpKind::Eager, apply)
            } else {
                apply
            },
            out,
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_util::plan_empty;

    #[test]
    fn call_subquery_imports_only_through_with() {
        // `n` inside the uncorrelated subquery is a new variable: scanned, not reused.
        assert_eq!(
            plan_empty("MATCH (n) CALL { MATCH (n) RETURN n AS m } RETURN m", None),
            "Apply\n├─ AllNodesScan (n)\n│  └─ Argument\n└─ AllNodesScan (n)\n   └─ Argument"
        );
        assert_eq!(
            plan_empty("MATCH (n) CALL { WITH n MATCH (n)-->(x) RETURN x } RETURN x", None),
            "Apply\n├─ AllNodesScan (n)\n│  └─ Argument\n└─ Expand (n)-[  anon_0]->(x)\n   └─ Argument"
        );
    }
}
