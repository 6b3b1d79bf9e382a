//! `UNION` / `UNION ALL`: every branch is planned from `Argument` and ends
//! in a projection into the shared output slots, one per column.

use super::{argument, over, subquery::import_scope, Planned, Planner, Scope};
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_cypher::ast;
use rhizome_plan::{Expr, OpKind, PlanNode, Slot};

impl Planner<'_> {
    /// Plans a query with `UNION` parts; `importing` applies the `CALL { }` import rule per branch.
    pub(crate) fn union(
        &mut self,
        q: &ast::Query,
        input: PlanNode,
        scope: &Scope,
        importing: bool,
    ) -> Result<Planned> {
        let distinct = q.unions.first().is_some_and(|u| !u.all);
        let branches: Vec<&ast::SingleQuery> = std::iter::once(&q.first)
            .chain(q.unions.iter().map(|u| &u.query))
            .collect();
        let mut out_slots: Vec<(String, Slot)> = Vec::new();
        let mut plans = Vec::with_capacity(branches.len());
        for (i, b) in branches.into_iter().enumerate() {
            let s = if importing {
                import_scope(b, scope)
            } else {
                scope.clone()
            };
            let planned = self.single_query(b, argument(), s)?;
            if i == 0 {
                out_slots = planned
                    .columns
                    .iter()
                    .map(|(n, _)| (n.clone(), self.slots.named(n)))
                    .collect();
            }
            if planned.columns.len() != out_slots.len() {
                return Err(Error::new(
                    ErrorKind::SyntaxError,
                    "all sub queries in a UNION must have the same return column names",
                )
                .with_code("DifferentColumnsInUnion"));
            }
            let items = out_slots
                .iter()
                .map(|(name, out)| {
                    let src = planned
                        .columns
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|(_, s)| *s)
                        .ok_or_else(|| {
                            Error::new(
                                ErrorKind::SyntaxError,
                                "UNION branches return different columns",
                            )
                            .with_code("DifferentColumnsInUnion")
                        })?;
                    Ok((*out, Expr::Slot(src)))
                })
                .collect::<Result<Vec<_>>>()?;
            plans.push(over(OpKind::Project { items }, planned.plan));
        }
        let union = PlanNode::new(
            OpKind::Union {
                distinct,
                slots: out_slots.iter().map(|(_, s)| *s).collect(),
            },
            plans,
            0.0,
        );
        // A union inside a larger plan (CALL { }) runs per input row.
        let plan = if matches!(input.kind, OpKind::Argument) {
            union
        } else {
            PlanNode::new(
                OpKind::Apply {
                    scope: Default::default(),
                },
                vec![input, union],
                0.0,
            )
        };
        let mut out_scope = scope.clone();
        for (n, s) in &out_slots {
            out_scope.bind(n, *s, super::VarKind::Value);
        }
        Ok(Planned {
            plan,
            columns: out_slots,
            scope: out_scope,
            ordered: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_util::plan_empty;

    #[test]
    fn branches_project_into_shared_slots() {
        assert_eq!(
            plan_empty("RETURN 1 AS x UNION ALL RETURN 2 AS x", None),
            "Union all\n├─ Projection x AS x\n│  └─ Projection 1 AS x\n│     └─ Argument\n└─ Projection x AS x\n   └─ Projection 2 AS x\n      └─ Argument"
        );
    }
}
