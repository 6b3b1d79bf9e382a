//! Lowering AST expressions to the plan's slot-based [`Expr`].
//!
//! Variables become slots through the [`Scope`]; comprehension variables get
//! fresh slots of their own; comparison chains become `AND`s; function names
//! are lower-cased and qualified; aggregate calls are only legal where the
//! projection planner has already computed them into slots (`agg_map`);
//! pattern expressions become [`Expr::Subquery`] plans starting at `Argument`.

use crate::logical::{Planner, Scope, VarKind};
use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_cypher::ast::{self, ExprKind};
use rhizome_plan::{BinaryOp, Expr, MapProjectionItem, SubqueryKind};

/// The literal as a value.
pub(crate) fn literal(l: &ast::Literal) -> Value {
    match l {
        ast::Literal::Null => Value::Null,
        ast::Literal::Bool(b) => Value::Bool(*b),
        ast::Literal::Integer(i) => Value::Int(*i),
        ast::Literal::Float(f) => Value::Float(*f),
        ast::Literal::String(s) => Value::String(s.clone()),
    }
}

/// The qualified, lower-cased function name.
pub(crate) fn function_name(name: &[ast::Ident]) -> String {
    ast::join_names(name).to_ascii_lowercase()
}

/// Whether `e` is an aggregate call (`count(*)` included).
pub(crate) fn is_aggregate_call(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::CountStar => true,
        ExprKind::FunctionCall { name, .. } => {
            rhizome_cypher::functions::is_aggregate(&ast::join_names(name))
        }
        _ => false,
    }
}

/// Collects the aggregate calls in `e` (outermost ones; not inside nested
/// subqueries), without duplicates.
pub(crate) fn collect_aggregates(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    if is_aggregate_call(e) {
        if !out.contains(e) {
            out.push(e.clone());
        }
        return;
    }
    for child in children(e) {
        collect_aggregates(child, out);
    }
}

/// True if `e` holds an expression subquery anywhere.
pub(crate) fn has_subquery(e: &Expr) -> bool {
    let mut found = false;
    e.visit(&mut |x| found |= matches!(x, Expr::Subquery(..)));
    found
}

/// Whether `e` contains an aggregate call.
pub(crate) fn contains_aggregate(e: &ast::Expr) -> bool {
    let mut v = Vec::new();
    collect_aggregates(e, &mut v);
    !v.is_empty()
}

/// Direct sub-expressions of `e` evaluated in the same row context
/// (pattern subqueries are not entered).
fn children(e: &ast::Expr) -> Vec<&ast::Expr> {
    match &e.kind {
        ExprKind::Literal(_)
        | ExprKind::Parameter(_)
        | ExprKind::Variable(_)
        | ExprKind::CountStar
        | ExprKind::PatternComprehension { .. }
        | ExprKind::PatternPredicate(_)
        | ExprKind::Exists(_)
        | ExprKind::CountSubquery(_) => Vec::new(),
        ExprKind::List(items) => items.iter().collect(),
        ExprKind::Map(items) => items.iter().map(|(_, x)| x).collect(),
        ExprKind::Property(b, _) | ExprKind::HasLabels(b, _) => vec![b],
        ExprKind::Index(a, b) => vec![a, b],
        ExprKind::Slice(a, b, c) => {
            let mut v: Vec<&ast::Expr> = vec![a];
            v.extend(b.iter().map(|x| &**x));
            v.extend(c.iter().map(|x| &**x));
            v
        }
        ExprKind::Unary(_, x) | ExprKind::IsNull(x, _) => vec![x],
        ExprKind::Binary(_, a, b) => vec![a, b],
        ExprKind::Comparison(a, rest) => {
            let mut v: Vec<&ast::Expr> = vec![a];
            v.extend(rest.iter().map(|(_, x)| x));
            v
        }
        ExprKind::Case {
            operand,
            whens,
            else_,
        } => {
            let mut v: Vec<&ast::Expr> = Vec::new();
            v.extend(operand.iter().map(|x| &**x));
            for (w, t) in whens {
                v.push(w);
                v.push(t);
            }
            v.extend(else_.iter().map(|x| &**x));
            v
        }
        ExprKind::FunctionCall { args, .. } => args.iter().collect(),
        ExprKind::ListComprehension {
            list,
            predicate,
            projection,
            ..
        } => {
            let mut v: Vec<&ast::Expr> = vec![list];
            v.extend(predicate.iter().map(|x| &**x));
            v.extend(projection.iter().map(|x| &**x));
            v
        }
        ExprKind::Reduce {
            init, list, expr, ..
        } => vec![init, list, expr],
        ExprKind::Quantified {
            list, predicate, ..
        } => {
            let mut v: Vec<&ast::Expr> = vec![list];
            v.extend(predicate.iter().map(|x| &**x));
            v
        }
        ExprKind::MapProjection(_, items) => items
            .iter()
            .filter_map(|i| match i {
                ast::MapProjectionItem::Literal(_, x) => Some(x),
                _ => None,
            })
            .collect(),
    }
}

fn binary(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(b))
}

fn compare_op(op: ast::CompareOp) -> BinaryOp {
    match op {
        ast::CompareOp::Eq => BinaryOp::Eq,
        ast::CompareOp::Ne => BinaryOp::Ne,
        ast::CompareOp::Lt => BinaryOp::Lt,
        ast::CompareOp::Gt => BinaryOp::Gt,
        ast::CompareOp::Le => BinaryOp::Le,
        ast::CompareOp::Ge => BinaryOp::Ge,
    }
}

fn binary_op(op: ast::BinaryOp) -> BinaryOp {
    match op {
        ast::BinaryOp::Or => BinaryOp::Or,
        ast::BinaryOp::Xor => BinaryOp::Xor,
        ast::BinaryOp::And => BinaryOp::And,
        ast::BinaryOp::Add => BinaryOp::Add,
        ast::BinaryOp::Sub => BinaryOp::Sub,
        ast::BinaryOp::Mul => BinaryOp::Mul,
        ast::BinaryOp::Div => BinaryOp::Div,
        ast::BinaryOp::Mod => BinaryOp::Mod,
        ast::BinaryOp::Pow => BinaryOp::Pow,
        ast::BinaryOp::StartsWith => BinaryOp::StartsWith,
        ast::BinaryOp::EndsWith => BinaryOp::EndsWith,
        ast::BinaryOp::Contains => BinaryOp::Contains,
        ast::BinaryOp::RegexMatch => BinaryOp::RegexMatch,
        ast::BinaryOp::In => BinaryOp::In,
    }
}

/// An error for a variable the analysis should have rejected.
pub(crate) fn unknown_variable(name: &str) -> Error {
    Error::new(
        ErrorKind::SemanticError,
        format!("variable `{name}` is not defined here"),
    )
    .with_code("UndefinedVariable")
}

impl Planner<'_> {
    /// Lowers `e` evaluated in `scope`.
    pub(crate) fn lower(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Expr> {
        if !self.agg_map.is_empty() {
            if let Some((_, slot)) = self.agg_map.iter().find(|(x, _)| x == e) {
                return Ok(Expr::Slot(*slot));
            }
        }
        if is_aggregate_call(e) {
            return match self.agg_map.iter().find(|(x, _)| x == e) {
                Some((_, slot)) => Ok(Expr::Slot(*slot)),
                None => Err(Error::new(
                    ErrorKind::SyntaxError,
                    "aggregate functions are only allowed in WITH, RETURN and ORDER BY of an aggregating projection",
                )
                .with_code("InvalidAggregation")),
            };
        }
        Ok(match &e.kind {
            ExprKind::Literal(l) => Expr::Literal(literal(l)),
            ExprKind::Parameter(p) => Expr::Parameter(p.clone()),
            ExprKind::Variable(v) => match scope.get(v) {
                Some(var) => Expr::Slot(var.slot),
                None => return Err(unknown_variable(v)),
            },
            ExprKind::List(items) => Expr::List(
                items
                    .iter()
                    .map(|x| self.lower(x, scope))
                    .collect::<Result<_>>()?,
            ),
            ExprKind::Map(items) => Expr::Map(
                items
                    .iter()
                    .map(|(k, x)| Ok((k.name.clone(), self.lower(x, scope)?)))
                    .collect::<Result<_>>()?,
            ),
            ExprKind::Property(b, k) => {
                Expr::Property(Box::new(self.lower(b, scope)?), k.name.clone())
            }
            ExprKind::Index(a, b) => Expr::Index(
                Box::new(self.lower(a, scope)?),
                Box::new(self.lower(b, scope)?),
            ),
            ExprKind::Slice(a, b, c) => Expr::Slice(
                Box::new(self.lower(a, scope)?),
                match b {
                    Some(b) => Some(Box::new(self.lower(b, scope)?)),
                    None => None,
                },
                match c {
                    Some(c) => Some(Box::new(self.lower(c, scope)?)),
                    None => None,
                },
            ),
            ExprKind::Unary(op, x) => Expr::Unary(*op, Box::new(self.lower(x, scope)?)),
            ExprKind::Binary(op, a, b) => {
                binary(binary_op(*op), self.lower(a, scope)?, self.lower(b, scope)?)
            }
            ExprKind::Comparison(first, rest) => {
                let mut left = self.lower(first, scope)?;
                let mut parts = Vec::new();
                for (op, right) in rest {
                    let r = self.lower(right, scope)?;
                    parts.push(binary(compare_op(*op), left, r.clone()));
                    left = r;
                }
                crate::usage::and_all(parts).unwrap_or(Expr::Literal(Value::Bool(true)))
            }
            ExprKind::IsNull(x, negated) => Expr::IsNull(Box::new(self.lower(x, scope)?), *negated),
            ExprKind::HasLabels(x, labels) => Expr::HasLabels(
                Box::new(self.lower(x, scope)?),
                labels.iter().map(|l| l.name.clone()).collect(),
            ),
            ExprKind::Case {
                operand,
                whens,
                else_,
            } => Expr::Case {
                operand: match operand {
                    Some(o) => Some(Box::new(self.lower(o, scope)?)),
                    None => None,
                },
                whens: whens
                    .iter()
                    .map(|(w, t)| Ok((self.lower(w, scope)?, self.lower(t, scope)?)))
                    .collect::<Result<_>>()?,
                else_: match else_ {
                    Some(x) => Some(Box::new(self.lower(x, scope)?)),
                    None => None,
                },
            },
            ExprKind::FunctionCall { name, args, .. }
                if function_name(name) == "exists" && args.len() == 1 =>
            {
                // Legacy `exists(pattern)` / `exists(n.prop)`.
                match &args[0].kind {
                    ExprKind::PatternPredicate(_) | ExprKind::Exists(_) => {
                        self.lower(&args[0], scope)?
                    }
                    _ => Expr::IsNull(Box::new(self.lower(&args[0], scope)?), true),
                }
            }
            ExprKind::FunctionCall { name, args, .. } => Expr::Function(
                function_name(name),
                args.iter()
                    .map(|x| self.lower(x, scope))
                    .collect::<Result<_>>()?,
            ),
            ExprKind::CountStar => unreachable_aggregate()?,
            ExprKind::ListComprehension {
                variable,
                list,
                predicate,
                projection,
            } => {
                let list = self.lower(list, scope)?;
                let slot = self.slots.named(&variable.name);
                let mut inner = scope.clone();
                inner.bind(&variable.name, slot, VarKind::Value);
                Expr::ListComprehension {
                    variable: slot,
                    list: Box::new(list),
                    predicate: match predicate {
                        Some(p) => Some(Box::new(self.lower(p, &inner)?)),
                        None => None,
                    },
                    projection: match projection {
                        Some(p) => Some(Box::new(self.lower(p, &inner)?)),
                        None => None,
                    },
                }
            }
            ExprKind::Reduce {
                accumulator,
                init,
                variable,
                list,
                expr,
            } => {
                let init = self.lower(init, scope)?;
                let list = self.lower(list, scope)?;
                let acc = self.slots.named(&accumulator.name);
                let var = self.slots.named(&variable.name);
                let mut inner = scope.clone();
                inner.bind(&accumulator.name, acc, VarKind::Value);
                inner.bind(&variable.name, var, VarKind::Value);
                Expr::Reduce {
                    accumulator: acc,
                    init: Box::new(init),
                    variable: var,
                    list: Box::new(list),
                    expr: Box::new(self.lower(expr, &inner)?),
                }
            }
            ExprKind::Quantified {
                quantifier: q,
                variable,
                list,
                predicate,
            } => {
                let list = self.lower(list, scope)?;
                let slot = self.slots.named(&variable.name);
                let mut inner = scope.clone();
                inner.bind(&variable.name, slot, VarKind::Value);
                let predicate = match predicate {
                    Some(p) => self.lower(p, &inner)?,
                    None => Expr::Slot(slot),
                };
                Expr::Quantified {
                    quantifier: *q,
                    variable: slot,
                    list: Box::new(list),
                    predicate: Box::new(predicate),
                }
            }
            ExprKind::MapProjection(base, items) => {
                let Some(var) = scope.get(&base.name) else {
                    return Err(unknown_variable(&base.name));
                };
                let base = Expr::Slot(var.slot);
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(match item {
                        ast::MapProjectionItem::Property(k) => {
                            MapProjectionItem::Property(k.name.clone())
                        }
                        ast::MapProjectionItem::AllProperties => MapProjectionItem::AllProperties,
                        ast::MapProjectionItem::Literal(k, x) => {
                            MapProjectionItem::Entry(k.name.clone(), self.lower(x, scope)?)
                        }
                        ast::MapProjectionItem::Variable(v) => match scope.get(&v.name) {
                            Some(var) => {
                                MapProjectionItem::Entry(v.name.clone(), Expr::Slot(var.slot))
                            }
                            None => return Err(unknown_variable(&v.name)),
                        },
                    });
                }
                Expr::MapProjection(Box::new(base), out)
            }
            ExprKind::PatternPredicate(element) => {
                let part = ast::PatternPart {
                    variable: None,
                    shortest: None,
                    element: element.clone(),
                    span: element.span,
                };
                let plan = self.pattern_subquery(std::slice::from_ref(&part), None, scope)?;
                Expr::Subquery(Box::new(plan.0), SubqueryKind::Exists)
            }
            ExprKind::PatternComprehension {
                variable,
                pattern,
                predicate,
                projection,
            } => {
                let part = ast::PatternPart {
                    variable: variable.clone(),
                    shortest: None,
                    element: pattern.clone(),
                    span: pattern.span,
                };
                let (plan, inner) = self.pattern_subquery(
                    std::slice::from_ref(&part),
                    predicate.as_deref(),
                    scope,
                )?;
                let value = self.lower(projection, &inner)?;
                Expr::Subquery(Box::new(plan), SubqueryKind::Collect(Box::new(value)))
            }
            ExprKind::Exists(body) => Expr::Subquery(
                Box::new(self.subquery_body(body, scope)?),
                SubqueryKind::Exists,
            ),
            ExprKind::CountSubquery(body) => Expr::Subquery(
                Box::new(self.subquery_body(body, scope)?),
                SubqueryKind::Count,
            ),
        })
    }
}

fn unreachable_aggregate() -> Result<Expr> {
    Err(Error::internal("count(*) reached expression lowering"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::EmptyContext;

    fn lower_text(text: &str) -> Expr {
        let e = rhizome_cypher::parse_expression(text).unwrap();
        let mut p = Planner::new(&EmptyContext);
        let mut scope = Scope::default();
        let a = p.slots.named("a");
        scope.bind("a", a, VarKind::Node);
        p.lower(&e, &scope).unwrap()
    }

    #[test]
    fn comparison_chain_becomes_and() {
        let e = lower_text("1 < a.x <= 3");
        assert_eq!(
            e,
            binary(
                BinaryOp::And,
                binary(
                    BinaryOp::Lt,
                    Expr::Literal(Value::Int(1)),
                    Expr::Property(Box::new(Expr::Slot(0)), "x".into())
                ),
                binary(
                    BinaryOp::Le,
                    Expr::Property(Box::new(Expr::Slot(0)), "x".into()),
                    Expr::Literal(Value::Int(3))
                )
            )
        );
    }

    #[test]
    fn functions_are_lower_cased_and_comprehensions_get_slots() {
        assert_eq!(
            lower_text("toUpper($p)"),
            Expr::Function("toupper".into(), vec![Expr::Parameter("p".into())])
        );
        match lower_text("[x IN [1] WHERE x > 0 | x]") {
            Expr::ListComprehension { variable, .. } => assert_eq!(variable, 1),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            lower_text("a.x IS NOT NULL"),
            Expr::IsNull(
                Box::new(Expr::Property(Box::new(Expr::Slot(0)), "x".into())),
                true
            )
        );
    }

    #[test]
    fn aggregates_outside_projections_are_errors() {
        let e = rhizome_cypher::parse_expression("count(*)").unwrap();
        let mut p = Planner::new(&EmptyContext);
        assert!(p.lower(&e, &Scope::default()).is_err());
    }
}
