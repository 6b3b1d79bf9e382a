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
