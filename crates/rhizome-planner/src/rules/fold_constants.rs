//! `fold_constants`: evaluates operators whose operands are all literals
//! (integer arithmetic without overflow, float arithmetic, boolean logic
//! including the three-valued cases that do not depend on the other side,
//! negation, literal lists) and removes filters that are always true.
//! Anything that could raise an error at run time (overflow, division by
//! zero, type errors) is left alone so the runtime reports it.

use super::{mark, OptimizerRule, RuleContext};
use rhizome_common::Value;
use rhizome_plan::{BinaryOp, Expr, OpKind, PlanNode, UnaryOp};

/// See the module documentation.
pub struct FoldConstants;

/// The folded value of `e` if its operands are literals and folding cannot fail.
pub(crate) fn fold(e: &Expr) -> Option<Value> {
    use Value::*;
    match e {
        Expr::Unary(UnaryOp::Not, x) => match &**x {
            Expr::Literal(Bool(b)) => Some(Bool(!b)),
            Expr::Literal(Null) => Some(Null),
            _ => None,
        },
        Expr::Unary(UnaryOp::Neg, x) => match &**x {
            Expr::Literal(Int(i)) => i.checked_neg().map(Int),
            Expr::Literal(Float(f)) => Some(Float(-f)),
            _ => None,
        },
        Expr::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for i in items {
                match i {
                    Expr::Literal(v) => out.push(v.clone()),
                    _ => return None,
                }
            }
            Some(List(out))
        }
        Expr::Binary(op, a, b) => {
            let (Expr::Literal(x), Expr::Literal(y)) = (&**a, &**b) else {
                // One literal side can decide AND / OR whatever the other is.
                return match (op, &**a, &**b) {
                    (BinaryOp::And, Expr::Literal(Bool(false)), _)
                    | (BinaryOp::And, _, Expr::Literal(Bool(false))) => Some(Bool(false)),
                    (BinaryOp::Or, Expr::Literal(Bool(true)), _)
                    | (BinaryOp::Or, _, Expr::Literal(Bool(true))) => Some(Bool(true)),
                    _ => None,
                };
            };
            match (op, x, y) {
                (BinaryOp::And, Bool(false), _) | (BinaryOp::And, _, Bool(false)) => {
                    Some(Bool(false))
                }
                (BinaryOp::And, Bool(true), Bool(true)) => Some(Bool(true)),
                (BinaryOp::And, Bool(true) | Null, Null) | (BinaryOp::And, Null, Bool(true)) => {
                    Some(Null)
                }
                (BinaryOp::Or, Bool(true), _) | (BinaryOp::Or, _, Bool(true)) => Some(Bool(true)),
                (BinaryOp::Or, Bool(false), Bool(false)) => Some(Bool(false)),
                (BinaryOp::Or, Bool(false) | Null, Null) | (BinaryOp::Or, Null, Bool(false)) => {
                    Some(Null)
                }
                (BinaryOp::Add, Int(p), Int(q)) => p.checked_add(*q).map(Int),
                (BinaryOp::Sub, Int(p), Int(q)) => p.checked_sub(*q).map(Int),
                (BinaryOp::Mul, Int(p), Int(q)) => p.checked_mul(*q).map(Int),
                (BinaryOp::Add, Float(p), Float(q)) => Some(Float(p + q)),
                (BinaryOp::Sub, Float(p), Float(q)) => Some(Float(p - q)),
                (BinaryOp::Mul, Float(p), Float(q)) => Some(Float(p * q)),
                (BinaryOp::Add, String(p), String(q)) => Some(String(format!("{p}{q}"))),
                (BinaryOp::Eq, Int(p), Int(q)) => Some(Bool(p == q)),
                (BinaryOp::Ne, Int(p), Int(q)) => Some(Bool(p != q)),
                (BinaryOp::Lt, Int(p), Int(q)) => Some(Bool(p < q)),
                (BinaryOp::Le, Int(p), Int(q)) => Some(Bool(p <= q)),
                (BinaryOp::Gt, Int(p), Int(q)) => Some(Bool(p > q)),
                (BinaryOp::Ge, Int(p), Int(q)) => Some(Bool(p >= q)),
                (BinaryOp::Eq, String(p), String(q)) => Some(Bool(p == q)),
                (BinaryOp::Ne, String(p), String(q)) => Some(Bool(p != q)),
                (BinaryOp::Eq, Bool(p), Bool(q)) => Some(Bool(p == q)),
                (BinaryOp::Ne, Bool(p), Bool(q)) => Some(Bool(p != q)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn fold_expr(e: &mut Expr) -> bool {
    let mut changed = false;
    e.visit_mut(&mut |x| {
        if let Some(v) = fold(x) {
            *x = Expr::Literal(v);
            changed = true;
        }
    });
    changed
}

impl OptimizerRule for FoldConstants {
    fn name(&self) -> &'static str {
        "fold_constants"
    }

    fn rewrite(&self, mut n: PlanNode, _ctx: &mut RuleContext<'_>) -> PlanNode {
        if let OpKind::Filter {
            predicate: Expr::Literal(Value::Bool(true)),
        } = &n.kind
        {
            if n.inputs.len() == 1 {
                return n.inputs.pop().unwrap_or_else(crate::logical::argument);
            }
        }
        let mut changed = false;
        for e in n.kind.exprs_mut() {
            changed |= fold_expr(e);
        }
        if changed {
            mark(n, self.name())
        } else {
            n
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(v: Value) -> Box<Expr> {
        Box::new(Expr::Literal(v))
    }

    #[test]
    fn folds_safe_arithmetic_only() {
        let mut e = Expr::Binary(BinaryOp::Add, lit(Value::Int(1)), lit(Value::Int(2)));
        assert!(fold_expr(&mut e));
        assert_eq!(e, Expr::Literal(Value::Int(3)));
        let mut overflow =
            Expr::Binary(BinaryOp::Add, lit(Value::Int(i64::MAX)), lit(Value::Int(1)));
        assert!(!fold_expr(&mut overflow));
        let mut div = Expr::Binary(BinaryOp::Div, lit(Value::Int(1)), lit(Value::Int(0)));
        assert!(!fold_expr(&mut div));
        let mut logic = Expr::Binary(BinaryOp::And, lit(Value::Null), lit(Value::Bool(false)));
        assert!(fold_expr(&mut logic));
        assert_eq!(logic, Expr::Literal(Value::Bool(false)));
    }
}

#[cfg(test)]
mod plan_tests {
    use super::*;
    use crate::rules::test_util::plan_empty;

    #[test]
    fn true_filters_disappear() {
        assert_eq!(
            plan_empty(
                "MATCH (n) WHERE 1 + 1 = 2 OR true RETURN n",
                Some(Box::new(FoldConstants))
            ),
            "AllNodesScan (n)\n└─ Argument"
        );
    }
}
