//! `WITH` / `RETURN`: projection, `DISTINCT`, aggregation with implicit
//! grouping keys, `ORDER BY`, `SKIP` / `LIMIT` and `WITH ... WHERE`.
//!
//! Order of operators: (Aggregate, then a Project of expressions mixing
//! aggregates with other parts) or a Project of the items; Distinct; a
//! Project of sort keys that are not items; Sort; Skip; Limit; Filter of
//! `WHERE`. Plain variables pass through in their slots (no copy). Sort keys
//! equal to an item reuse its slot; otherwise they see the projected
//! columns and, for non-aggregating non-distinct projections, the
//! variables in scope before the projection.

use super::{over, Planner, Scope, VarKind};
use crate::expr::{collect_aggregates, function_name, is_aggregate_call};
use rhizome_common::{Error, Result};
use rhizome_cypher::ast::{self, ExprKind};
use rhizome_plan::{AggregateItem, AggregateKind, Expr, OpKind, PlanNode, Slot, SortKey};

/// The plan after a projection, its scope and its columns in order.
pub(crate) struct Projected {
    pub plan: PlanNode,
    pub scope: Scope,
    pub columns: Vec<(String, Slot)>,
}

/// One projected column: its AST expression (for matching sort keys), name and slot.
struct Item {
    expr: ast::Expr,
    name: String,
    slot: Slot,
    kind: VarKind,
}

fn aggregate_function(e: &ast::Expr) -> Option<(AggregateKind, bool, &[ast::Expr])> {
    match &e.kind {
        ExprKind::CountStar => Some((AggregateKind::CountStar, false, &[])),
        ExprKind::FunctionCall {
            name,
            distinct,
            args,
        } => {
            let f = AggregateKind::from_name(&function_name(name))?;
            Some((f, *distinct, args))
        }
        _ => None,
    }
}

fn variable_of(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Variable(v) => Some(v),
        _ => None,
    }
}

impl Planner<'_> {
    /// Plans a `WITH` or `RETURN` over `plan` (they plan alike).
    pub(crate) fn projection(
        &mut self,
        p: &ast::Projection,
        mut plan: PlanNode,
        scope: &Scope,
    ) -> Result<Projected> {
        // The explicit and `*` items as (expression, column name).
        let mut raw: Vec<(ast::Expr, String)> = Vec::new();
        if p.star {
            let mut vars = scope.visible();
            vars.sort_by(|a, b| a.name.cmp(&b.name));
            for v in vars {
                let e = ast::Expr::new(ExprKind::Variable(v.name.clone()), p.span);
                raw.push((e, v.name));
            }
        }
        for item in &p.items {
            let name = item.column_name().to_string();
            raw.retain(|(_, n)| *n != name);
            raw.push((item.expr.clone(), name));
        }
        let mut aggregates = Vec::new();
        for (e, _) in &raw {
            collect_aggregates(e, &mut aggregates);
        }
        let aggregating = !aggregates.is_empty();
        let mut items: Vec<Item> = Vec::with_capacity(raw.len());
        let mut new_scope = Scope::default();

        if aggregating {
            for s in &p.order_by {
                collect_aggregates(&s.expr, &mut aggregates);
            }
            // Grouping keys: the items without aggregates.
            let mut keys = Vec::new();
            for (e, name) in &raw {
                if crate::expr::contains_aggregate(e) {
                    continue;
                }
                let (slot, kind) = match variable_of(e).and_then(|v| scope.get(v)) {
                    Some(var) => (var.slot, var.kind),
                    None => (self.slots.named(name), VarKind::Value),
                };
                keys.push((slot, self.lower(e, scope)?));
                items.push(Item {
                    expr: e.clone(),
                    name: name.clone(),
                    slot,
                    kind,
                });
            }
            // The aggregates, named after the column when an item is exactly one.
            let mut agg_items = Vec::new();
            let mut agg_map = Vec::new();
            for a in &aggregates {
                let Some((function, distinct, args)) = aggregate_function(a) else {
                    return Err(Error::internal("unknown aggregate function"));
                };
                let slot = match raw.iter().find(|(e, _)| e == a) {
                    Some((_, name)) => self.slots.named(name),
                    None => self.slots.anon(),
                };
                let args = args
                    .iter()
                    .map(|x| self.lower(x, scope))
                    .collect::<Result<Vec<_>>>()?;
                agg_items.push(AggregateItem {
                    slot,
                    function,
                    args,
                    distinct,
                });
                agg_map.push((a.clone(), slot));
            }
            // Sub-expressions equal to a grouping key read the key's slot.
            for it in &items {
                if variable_of(&it.expr).is_none() {
                    agg_map.push((it.expr.clone(), it.slot));
                }
            }
            // Keys and arguments that hold an expression subquery are
            // computed by a projection below the aggregate, whose
            // subqueries pause at the task's quantum (the aggregate would
            // run them in line, to their end).
            let mut computed_first = Vec::new();
            let expressions = keys
                .iter_mut()
                .map(|(_, e)| e)
                .chain(agg_items.iter_mut().flat_map(|a| a.args.iter_mut()));
            for e in expressions {
                if crate::expr::has_subquery(e) {
                    let slot = self.slots.anon();
                    computed_first.push((slot, std::mem::replace(e, Expr::Slot(slot))));
                }
            }
            if !computed_first.is_empty() {
                plan = over(
                    OpKind::Project {
                        items: computed_first,
                    },
                    plan,
                );
            }
            plan = over(
                OpKind::Aggregate {
                    keys,
                    aggregates: agg_items,
                },
                plan,
            );
            // After aggregation only the grouping keys are visible.
            let mut key_scope = Scope::default();
            for it in &items {
                if let Some(v) = variable_of(&it.expr) {
                    key_scope.bind(v, it.slot, it.kind);
                }
            }
            let saved = std::mem::replace(&mut self.agg_map, agg_map);
            let result = (|| -> Result<()> {
                let mut post = Vec::new();
                for (e, name) in &raw {
                    if !crate::expr::contains_aggregate(e) {
                        continue;
                    }
                    let slot = if is_aggregate_call(e) {
                        self.agg_map
                            .iter()
                            .find(|(x, _)| x == e)
                            .map(|(_, s)| *s)
                            .ok_or_else(|| Error::internal("aggregate not computed"))?
                    } else {
                        let value = self.lower(e, &key_scope)?;
                        let slot = self.slots.named(name);
                        post.push((slot, value));
                        slot
                    };
                    items.push(Item {
                        expr: e.clone(),
                        name: name.clone(),
                        slot,
                        kind: VarKind::Value,
                    });
                }
                if !post.is_empty() {
                    plan = over(
                        OpKind::Project { items: post },
                        std::mem::replace(&mut plan, super::argument()),
                    );
                }
                // Restore the column order of the projection.
                items.sort_by_key(|it| raw.iter().position(|(_, n)| *n == it.name));
                for it in &items {
                    new_scope.bind(&it.name, it.slot, it.kind);
                }
                if p.distinct {
                    let slots = items.iter().map(|it| it.slot).collect();
                    plan = over(
                        OpKind::Distinct { slots },
                        std::mem::replace(&mut plan, super::argument()),
                    );
                }
                let mut sort_scope = key_scope.clone();
                for v in new_scope.visible() {
                    sort_scope.bind(&v.name, v.slot, v.kind);
                }
                plan = self.order_skip_limit(
                    p,
                    std::mem::replace(&mut plan, super::argument()),
                    &items,
                    &sort_scope,
                )?;
                if let Some(w) = &p.where_ {
                    let predicate = self.lower(w, &sort_scope)?;
                    plan = over(
                        OpKind::Filter { predicate },
                        std::mem::replace(&mut plan, super::argument()),
                    );
                }
                Ok(())
            })();
            self.agg_map = saved;
            result?;
        } else {
            let mut project = Vec::new();
            for (e, name) in &raw {
                let (slot, kind) = match variable_of(e).and_then(|v| scope.get(v)) {
                    Some(var) => (var.slot, var.kind),
                    None => {
                        let value = self.lower(e, scope)?;
                        let slot = self.slots.named(name);
                        project.push((slot, value));
                        (slot, VarKind::Value)
                    }
                };
                items.push(Item {
                    expr: e.clone(),
                    name: name.clone(),
                    slot,
                    kind,
                });
            }
            if !project.is_empty() {
                plan = over(OpKind::Project { items: project }, plan);
            }
            for it in &items {
                new_scope.bind(&it.name, it.slot, it.kind);
            }
            let mut where_scope = scope.clone();
            for v in new_scope.visible() {
                where_scope.bind(&v.name, v.slot, v.kind);
            }
            // Filtering commutes with DISTINCT but not with SKIP / LIMIT;
            // before DISTINCT every row still has its own earlier variables.
            let early_where = p.distinct && p.skip.is_none() && p.limit.is_none();
            if early_where {
                if let Some(w) = &p.where_ {
                    let predicate = self.lower(w, &where_scope)?;
                    plan = over(OpKind::Filter { predicate }, plan);
                }
            }
            if p.distinct {
                let slots = items.iter().map(|it| it.slot).collect();
                plan = over(OpKind::Distinct { slots }, plan);
            }
            let sort_scope = if p.distinct {
                new_scope.clone()
            } else {
                let mut s = scope.clone();
                for v in new_scope.visible() {
                    s.bind(&v.name, v.slot, v.kind);
                }
                s
            };
            plan = self.order_skip_limit(p, plan, &items, &sort_scope)?;
            // `WITH ... WHERE` also sees the variables before the projection
            // (still in the rows' slots).
            if let Some(w) = p.where_.as_ref().filter(|_| !early_where) {
                let predicate = self.lower(w, &where_scope)?;
                plan = over(OpKind::Filter { predicate }, plan);
            }
        }
        let columns = items.iter().map(|it| (it.name.clone(), it.slot)).collect();
        Ok(Projected {
            plan,
            scope: new_scope,
            columns,
        })
    }

    /// `ORDER BY` (keys projected into slots first), `SKIP`, `LIMIT`.
    fn order_skip_limit(
        &mut self,
        p: &ast::Projection,
        mut plan: PlanNode,
        items: &[Item],
        sort_scope: &Scope,
    ) -> Result<PlanNode> {
        if !p.order_by.is_empty() {
            let mut keys = Vec::new();
            let mut project = Vec::new();
            for s in &p.order_by {
                let slot = match items.iter().find(|it| it.expr == s.expr) {
                    Some(it) => it.slot,
                    None => match variable_of(&s.expr).and_then(|v| sort_scope.get(v)) {
                        Some(var) => var.slot,
                        None => {
                            let value = self.lower(&s.expr, sort_scope)?;
                            let slot = self.slots.anon();
                            project.push((slot, value));
                            slot
                        }
                    },
                };
                keys.push(SortKey {
                    slot,
                    descending: s.descending,
                });
            }
            if !project.is_empty() {
                plan = over(OpKind::Project { items: project }, plan);
            }
            plan = over(OpKind::Sort { keys }, plan);
        }
        let empty = Scope::default();
        if let Some(skip) = &p.skip {
            let count = self.lower(skip, &empty)?;
            plan = over(OpKind::Skip { count }, plan);
        }
        if let Some(limit) = &p.limit {
            let count = self.lower(limit, &empty)?;
            plan = over(OpKind::Limit { count }, plan);
        }
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_util::plan_empty;

    #[test]
    fn mixed_aggregate_expressions_are_split() {
        assert_eq!(
            plan_empty("MATCH (n) RETURN n.k AS k, count(*) + 1 AS c, collect(n.x)[0] AS first", None),
            "Projection (  anon_0 + 1) AS c,   anon_1[0] AS first\n└─ Aggregate keys [n.k AS k], aggregates [CountStar() AS   anon_0, Collect(n.x) AS   anon_1]\n   └─ AllNodesScan (n)\n      └─ Argument"
        );
    }

    #[test]
    fn order_by_sees_aliases_and_previous_variables() {
        assert_eq!(
            plan_empty("MATCH (n) RETURN n.a AS a ORDER BY a, n.b DESC SKIP 1 LIMIT 2", None),
            "Limit 2\n└─ Skip 1\n   └─ Sort a,   anon_0 DESC\n      └─ Projection n.b AS   anon_0\n         └─ Projection n.a AS a\n            └─ AllNodesScan (n)\n               └─ Argument"
        );
    }

    #[test]
    fn sort_keys_after_aggregation_reuse_grouping_slots() {
        assert_eq!(
            plan_empty("MATCH (me)--(you) RETURN me.age AS age, count(you.age) AS cnt ORDER BY me.age + count(you.age)", None),
            "Sort   anon_1\n└─ Projection (age + cnt) AS   anon_1\n   └─ Aggregate keys [me.age AS age], aggregates [Count(you.age) AS cnt]\n      └─ Expand (me)-[  anon_0]-(you)\n         └─ AllNodesScan (me)\n            └─ Argument"
        );
    }

    #[test]
    fn distinct_with_where_on_earlier_variables_filters_first() {
        assert_eq!(
            plan_empty("MATCH (a) WITH DISTINCT a.x AS x WHERE a.y = 1 RETURN x", None),
            "Distinct x\n└─ Filter (a.y = 1)\n   └─ Projection a.x AS x\n      └─ AllNodesScan (a)\n         └─ Argument"
        );
    }
}
