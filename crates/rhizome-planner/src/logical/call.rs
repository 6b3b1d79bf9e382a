//! `CALL proc(args) [YIELD ...]`: a `ProcedureCall` per input row.
//!
//! A standalone call (the whole query) without `YIELD` returns every output
//! of the procedure; its fields come from the context's signature, else from
//! the analysed result columns. Implicit arguments (`CALL p` without
//! parentheses) are the parameters named like the procedure's inputs, so
//! they need a known signature.

use super::{over, Planned, Planner, Scope, VarKind};
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_cypher::ast;
use rhizome_plan::{Expr, OpKind, PlanNode};

impl Planner<'_> {
    /// Plans a procedure call over `plan`.
    pub(crate) fn call_procedure(
        &mut self,
        c: &ast::CallProcedure,
        plan: PlanNode,
        scope: &Scope,
        standalone: bool,
    ) -> Result<Planned> {
        let name = c.qualified_name();
        let info = self.ctx.procedure(&name);
        let args = match &c.args {
            Some(args) => args
                .iter()
                .map(|a| self.lower(a, scope))
                .collect::<Result<Vec<_>>>()?,
            None => match &info {
                Some(info) => info.inputs.iter().map(|i| Expr::Parameter(i.clone())).collect(),
                None => {
                    return Err(Error::new(
                        ErrorKind::ProcedureError,
                        format!("implicit arguments of `{name}` need the procedure's signature, which is not known"),
                    )
                    .with_code("ProcedureNotFound"))
                }
            },
        };
        let mut out_scope = scope.clone();
        let mut yields = Vec::new();
        let mut columns = Vec::new();
        match &c.yield_ {
            Some(y) => {
                if y.star {
                    let fields = match &info {
                        Some(info) => info.outputs.clone(),
                        None => self.analyzed_columns.clone(),
                    };
                    for f in fields {
                        let slot = self.slots.named(&f);
                        yields.push((f.clone(), slot));
                    }
                }
                for item in &y.items {
                    let var = item.variable();
                    let slot = self.slots.named(&var.name);
                    yields.push((item.field.name.clone(), slot));
                }
                for (field, slot) in &yields {
                    let var = y
                        .items
                        .iter()
                        .find(|i| i.field.name == *field)
                        .map_or(field.clone(), |i| i.variable().name.clone());
                    out_scope.bind(&var, *slot, VarKind::Value);
                    columns.push((var, *slot));
                }
            }
            None if standalone => {
                let fields = match &info {
                    Some(info) => info.outputs.clone(),
                    None => self.analyzed_columns.clone(),
                };
                for f in fields {
                    let slot = self.slots.named(&f);
                    yields.push((f.clone(), slot));
                    out_scope.bind(&f, slot, VarKind::Value);
                    columns.push((f, slot));
                }
            }
            None => {}
        }
        let mut plan = over(OpKind::ProcedureCall { name, args, yields }, plan);
        if let Some(w) = c.yield_.as_ref().and_then(|y| y.where_.as_ref()) {
            let predicate = self.lower(w, &out_scope)?;
            plan = over(OpKind::Filter { predicate }, plan);
        }
        Ok(Planned {
            plan,
            columns,
            scope: out_scope,
            ordered: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_util::plan_with;
    use crate::{PlannerContext, ProcedureInfo};

    struct Procs;
    impl PlannerContext for Procs {
        fn label_count(&self, _: &str) -> Option<u64> {
            None
        }
        fn node_count(&self) -> u64 {
            0
        }
        fn rel_count(&self, _: Option<&str>) -> u64 {
            0
        }
        fn triple_count(&self, _: Option<&str>, _: Option<&str>, _: Option<&str>) -> u64 {
            0
        }
        fn has_index(&self, _: &str, _: &str) -> bool {
            false
        }
        fn distinct_values(&self, _: &str, _: &str) -> Option<u64> {
            None
        }
        fn procedure(&self, name: &str) -> Option<ProcedureInfo> {
            (name == "test.proc").then(|| ProcedureInfo {
                inputs: vec!["x".into()],
                outputs: vec!["a".into(), "b".into()],
            })
        }
    }

    #[test]
    fn standalone_calls_yield_everything_and_take_implicit_arguments() {
        let analyzed = rhizome_cypher::compile("CALL test.proc").unwrap();
        let planned = crate::plan_statement(&analyzed, &Procs).unwrap();
        let cols: Vec<&str> = planned
            .plan
            .columns
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(cols, ["a", "b"]);
        match &planned.plan.root.kind {
            rhizome_plan::OpKind::ProcedureCall { args, yields, .. } => {
                assert_eq!(args, &[rhizome_plan::Expr::Parameter("x".into())]);
                assert_eq!(yields.len(), 2);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn yield_aliases_and_where() {
        assert_eq!(
            plan_with(
                "CALL test.proc(1) YIELD b AS c WHERE c > 1 RETURN c",
                None,
                &Procs
            ),
            "Filter (c > 1)\n└─ ProcedureCall test.proc\n   └─ Argument"
        );
    }
}
