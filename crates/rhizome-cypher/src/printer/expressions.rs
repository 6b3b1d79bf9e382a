//! Printing expressions with precedence-driven parentheses.

use super::*;

impl Printer {
    pub(super) fn exprs(&mut self, es: &[Expr]) {
        for (i, e) in es.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.expr(e, 0);
        }
    }

    pub(super) fn expr(&mut self, e: &Expr, min: u8) {
        if self.guard.exhausted() {
            // Abandon; `run` prints again on a thread with a big stack.
            return;
        }
        // A pattern predicate followed by `<` or `-` would continue the
        // pattern, so it is parenthesized wherever an operator may follow.
        let paren =
            precedence(e) < min || (min > 0 && matches!(e.kind, ExprKind::PatternPredicate(_)));
        if paren {
            self.w("(");
        }
        self.expr_inner(e);
        if paren {
            self.w(")");
        }
    }

    pub(super) fn subquery_body(&mut self, b: &SubqueryBody) {
        self.w(" { ");
        match b {
            SubqueryBody::Pattern { pattern, where_ } => {
                self.pattern(pattern);
                if let Some(w) = where_ {
                    self.w(" WHERE ");
                    self.expr(w, 0);
                }
            }
            SubqueryBody::Query(q) => self.query(q),
        }
        self.w(" }");
    }

    pub(super) fn expr_inner(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Literal(l) => match l {
                Literal::Null => self.w("null"),
                Literal::Bool(b) => self.w(if *b { "true" } else { "false" }),
                Literal::Integer(i) => {
                    let _ = write!(self.out, "{i}");
                }
                Literal::Float(f) => {
                    let _ = write!(self.out, "{f:?}");
                }
                Literal::String(s) => {
                    let q = quote_string(s);
                    self.w(&q);
                }
            },
            ExprKind::Parameter(p) => {
                self.w("$");
                if !p.is_empty()
                    && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !p.starts_with('_')
                {
                    self.w(p);
                } else {
                    let q = format!("`{}`", p.replace('`', "``"));
                    self.w(&q);
                }
            }
            ExprKind::Variable(v) => {
                let q = quote_name(v);
                self.w(&q);
            }
            ExprKind::List(items) => {
                self.w("[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.w(", ");
                    }
                    // `[x IN list]` would read as a list comprehension.
                    if i == 0 && starts_with_variable_in(item) {
                        self.w("(");
                        self.expr(item, 0);
                        self.w(")");
                    } else {
                        self.expr(item, 0);
                    }
                }
                self.w("]");
            }
            ExprKind::Map(entries) => self.map(entries),
            ExprKind::Property(base, key) => {
                self.expr(base, BP_POSTFIX);
                self.w(".");
                self.sym(key);
            }
            ExprKind::Index(base, index) => {
                self.expr(base, BP_POSTFIX);
                self.w("[");
                self.expr(index, 0);
                self.w("]");
            }
            ExprKind::Slice(base, from, to) => {
                self.expr(base, BP_POSTFIX);
                self.w("[");
                if let Some(f) = from {
                    self.expr(f, 0);
                }
                self.w("..");
                if let Some(t) = to {
                    self.expr(t, 0);
                }
                self.w("]");
            }
            ExprKind::Unary(op, operand) => match op {
                UnaryOp::Not => {
                    self.w("NOT ");
                    self.expr(operand, bp::NOT);
                }
                UnaryOp::Neg | UnaryOp::Plus => {
                    self.w(if *op == UnaryOp::Neg { "-" } else { "+" });
                    // `-1` and `-1.x` would re-parse as a negative literal.
                    let numeric = starts_with_number(operand);
                    if numeric {
                        self.w("(");
                        self.expr(operand, 0);
                        self.w(")");
                    } else {
                        self.expr(operand, bp::UNARY);
                    }
                }
            },
            ExprKind::Binary(op, l, r) => {
                let p = precedence(e);
                self.expr(l, p);
                self.w(match op {
                    BinaryOp::Or => " OR ",
                    BinaryOp::Xor => " XOR ",
                    BinaryOp::And => " AND ",
                    BinaryOp::Add => " + ",
                    BinaryOp::Sub => " - ",
                    BinaryOp::Mul => " * ",
                    BinaryOp::Div => " / ",
                    BinaryOp::Mod => " % ",
                    BinaryOp::Pow => " ^ ",
                    BinaryOp::StartsWith => " STARTS WITH ",
                    BinaryOp::EndsWith => " ENDS WITH ",
                    BinaryOp::Contains => " CONTAINS ",
                    BinaryOp::RegexMatch => " =~ ",
                    BinaryOp::In => " IN ",
                });
                // `(a) - -1` and `(a) - [1]` would read as relationship patterns.
                if *op == BinaryOp::Sub && matches!(leftmost_char(r, p + 1), '-' | '[') {
                    self.w("(");
                    self.expr(r, 0);
                    self.w(")");
                } else {
                    self.expr(r, p + 1);
                }
            }
            ExprKind::Comparison(first, rest) => {
                self.expr(first, bp::PRED);
                for (op, operand) in rest {
                    self.w(match op {
                        CompareOp::Eq => " = ",
                        CompareOp::Ne => " <> ",
                        CompareOp::Lt => " < ",
                        CompareOp::Gt => " > ",
                        CompareOp::Le => " <= ",
                        CompareOp::Ge => " >= ",
                    });
                    if *op == CompareOp::Lt && leftmost_char(operand, bp::PRED) == '-' {
                        // `(a) < -1` would read as `(a)<-...`.
                        self.w("(");
                        self.expr(operand, 0);
                        self.w(")");
                    } else {
                        self.expr(operand, bp::PRED);
                    }
                }
            }
            ExprKind::IsNull(operand, negated) => {
                self.expr(operand, bp::PRED);
                self.w(if *negated { " IS NOT NULL" } else { " IS NULL" });
            }
            ExprKind::HasLabels(operand, labels) => {
                let min = if matches!(operand.kind, ExprKind::HasLabels(..)) {
                    BP_ATOM
                } else {
                    BP_POSTFIX
                };
                self.expr(operand, min);
                self.labels(labels);
            }
            ExprKind::Case {
                operand,
                whens,
                else_,
            } => {
                self.w("CASE");
                if let Some(o) = operand {
                    self.w(" ");
                    self.expr(o, 0);
                }
                for (c, v) in whens {
                    self.w(" WHEN ");
                    self.expr(c, 0);
                    self.w(" THEN ");
                    self.expr(v, 0);
                }
                if let Some(e) = else_ {
                    self.w(" ELSE ");
                    self.expr(e, 0);
                }
                self.w(" END");
            }
            ExprKind::FunctionCall {
                name,
                distinct,
                args,
            } => {
                for (i, part) in name.iter().enumerate() {
                    if i > 0 {
                        self.w(".");
                    }
                    let q = quote_function(&part.name);
                    self.w(&q);
                }
                self.w("(");
                if *distinct {
                    self.w("DISTINCT ");
                }
                self.exprs(args);
                self.w(")");
            }
            ExprKind::CountStar => self.w("count(*)"),
            ExprKind::ListComprehension {
                variable,
                list,
                predicate,
                projection,
            } => {
                self.w("[");
                self.name(variable);
                self.w(" IN ");
                self.expr(list, 0);
                if let Some(p) = predicate {
                    self.w(" WHERE ");
                    self.expr(p, 0);
                }
                if let Some(p) = projection {
                    self.w(" | ");
                    self.expr(p, 0);
                }
                self.w("]");
            }
            ExprKind::PatternComprehension {
                variable,
                pattern,
                predicate,
                projection,
            } => {
                self.w("[");
                if let Some(v) = variable {
                    self.name(v);
                    self.w(" = ");
                }
                self.element(pattern);
                if let Some(p) = predicate {
                    self.w(" WHERE ");
                    self.expr(p, 0);
                }
                self.w(" | ");
                self.expr(projection, 0);
                self.w("]");
            }
            ExprKind::Reduce {
                accumulator,
                init,
                variable,
                list,
                expr,
            } => {
                self.w("reduce(");
                self.name(accumulator);
                self.w(" = ");
                self.expr(init, 0);
                self.w(", ");
                self.name(variable);
                self.w(" IN ");
                self.expr(list, 0);
                self.w(" | ");
                self.expr(expr, 0);
                self.w(")");
            }
            ExprKind::Quantified {
                quantifier,
                variable,
                list,
                predicate,
            } => {
                self.w(match quantifier {
                    Quantifier::All => "all(",
                    Quantifier::Any => "any(",
                    Quantifier::None => "none(",
                    Quantifier::Single => "single(",
                });
                self.name(variable);
                self.w(" IN ");
                self.expr(list, 0);
                if let Some(p) = predicate {
                    self.w(" WHERE ");
                    self.expr(p, 0);
                }
                self.w(")");
            }
            ExprKind::PatternPredicate(p) => self.element(p),
            ExprKind::Exists(b) => {
                self.w("EXISTS");
                self.subquery_body(b);
            }
            ExprKind::CountSubquery(b) => {
                self.w("COUNT");
                self.subquery_body(b);
            }
            ExprKind::MapProjection(v, items) => {
                self.name(v);
                self.w(" {");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.w(", ");
                    }
                    match item {
                        MapProjectionItem::Property(k) => {
                            self.w(".");
                            self.sym(k);
                        }
                        MapProjectionItem::AllProperties => self.w(".*"),
                        MapProjectionItem::Literal(k, v) => {
                            self.sym(k);
                            self.w(": ");
                            self.expr(v, 0);
                        }
                        MapProjectionItem::Variable(k) => self.name(k),
                    }
                }
                self.w("}");
            }
        }
    }

    pub(super) fn map(&mut self, entries: &[(Ident, Expr)]) {
        self.w("{");
        for (i, (k, v)) in entries.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.sym(k);
            self.w(": ");
            self.expr(v, 0);
        }
        self.w("}");
    }
}
