//! Prints an AST back to Cypher text.
//!
//! Contract: for every statement `s` produced by [`crate::parse`],
//! `parse(&print_statement(&s)) == Ok(s)` (spans are ignored by equality).
//! Parentheses are inserted by precedence, names are backtick-quoted when
//! they are not plain identifiers or are keywords, strings are re-escaped.
//! Unaliased projection items are printed as their source text, because that
//! text is the column name.

use crate::ast::*;
use crate::error::{with_stack_fallback, StackGuard};
use crate::parser::expressions_bp as bp;
use std::fmt::Write;

/// Runs `f` with a printer, on a big-stack helper thread if the tree is too
/// deep for the caller's stack.
fn run(f: impl Fn(&mut Printer) + Sync) -> String {
    with_stack_fallback(|budget| {
        let mut p = Printer {
            out: String::new(),
            guard: StackGuard::new(budget),
        };
        f(&mut p);
        let tripped = p.guard.tripped.get();
        (p.out, tripped)
    })
}

/// Prints a statement as one line of Cypher.
pub fn print_statement(s: &Statement) -> String {
    run(|p| p.statement(s))
}

/// Prints a query.
pub fn print_query(q: &Query) -> String {
    run(|p| p.query(q))
}

/// Prints an expression.
pub fn print_expr(e: &Expr) -> String {
    run(|p| p.expr(e, 0))
}

/// Words that are always quoted when used as names.
const KEYWORDS: &[&str] = &[
    "MATCH",
    "OPTIONAL",
    "WHERE",
    "WITH",
    "RETURN",
    "UNWIND",
    "CREATE",
    "MERGE",
    "SET",
    "REMOVE",
    "DELETE",
    "DETACH",
    "FOREACH",
    "CALL",
    "YIELD",
    "UNION",
    "ORDER",
    "SKIP",
    "LIMIT",
    "AS",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IN",
    "IS",
    "STARTS",
    "ENDS",
    "CONTAINS",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "NULL",
    "TRUE",
    "FALSE",
    "DISTINCT",
    "ON",
    "ASC",
    "DESC",
    "ASCENDING",
    "DESCENDING",
    "BY",
    "EXISTS",
    "COUNT",
    "ALL",
    "ANY",
    "NONE",
    "SINGLE",
    "REDUCE",
    "SHORTESTPATH",
    "ALLSHORTESTPATHS",
    "EXPLAIN",
    "PROFILE",
    "SHOW",
    "DROP",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "TERMINATE",
    "FOR",
    "IF",
    "REQUIRE",
    "INDEX",
    "CONSTRAINT",
];

fn is_plain(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(name))
}

/// A name, backtick-quoted when needed.
pub fn quote_name(name: &str) -> String {
    if is_plain(name) {
        name.to_string()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

/// A label, type, property key or namespace part: quoted only when not a
/// plain identifier (keywords are fine after `:` and `.`).
pub fn quote_symbol(name: &str) -> String {
    let mut chars = name.chars();
    let plain = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

/// A function name part: quoted when it could be mistaken for syntax.
fn quote_function(name: &str) -> String {
    const SPECIAL: &[&str] = &[
        "TRUE", "FALSE", "NULL", "CASE", "ALL", "ANY", "NONE", "SINGLE", "REDUCE", "NOT",
    ];
    if SPECIAL.iter().any(|k| k.eq_ignore_ascii_case(name)) {
        format!("`{}`", name.replace('`', "``"))
    } else {
        quote_symbol(name)
    }
}

/// A string literal with single quotes and escapes.
pub fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Whether `e` prints starting with a numeric literal (through postfix operators).
fn starts_with_number(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Literal(Literal::Integer(_) | Literal::Float(_)) => true,
        ExprKind::Property(b, _)
        | ExprKind::Index(b, _)
        | ExprKind::Slice(b, ..)
        | ExprKind::HasLabels(b, _) => starts_with_number(b),
        _ => false,
    }
}

/// The first character `e` prints as when printed with minimum binding power `min`.
fn leftmost_char(e: &Expr, min: u8) -> char {
    if precedence(e) < min || (min > 0 && matches!(e.kind, ExprKind::PatternPredicate(_))) {
        return '(';
    }
    match &e.kind {
        ExprKind::Literal(Literal::Integer(i)) if *i < 0 => '-',
        ExprKind::Literal(Literal::Float(f)) if f.is_sign_negative() => '-',
        ExprKind::Unary(UnaryOp::Neg, _) => '-',
        ExprKind::Unary(UnaryOp::Plus, _) => '+',
        ExprKind::List(_)
        | ExprKind::ListComprehension { .. }
        | ExprKind::PatternComprehension { .. } => '[',
        ExprKind::Binary(_, l, _) => leftmost_char(l, precedence(e)),
        ExprKind::Comparison(f, _) | ExprKind::IsNull(f, _) => leftmost_char(f, bp::PRED),
        ExprKind::Property(b, _)
        | ExprKind::Index(b, _)
        | ExprKind::Slice(b, ..)
        | ExprKind::HasLabels(b, _) => leftmost_char(b, BP_POSTFIX),
        _ => 'x',
    }
}

/// Whether `e` prints as `name IN ...` (through leftmost infix operands).
fn starts_with_variable_in(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Binary(BinaryOp::In, l, _) if matches!(l.kind, ExprKind::Variable(_)) => true,
        ExprKind::Binary(_, l, _) => starts_with_variable_in(l),
        ExprKind::Comparison(f, _) | ExprKind::IsNull(f, _) => starts_with_variable_in(f),
        _ => false,
    }
}

const BP_POSTFIX: u8 = 11;
const BP_ATOM: u8 = 12;

fn precedence(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Binary(op, ..) => match op {
            BinaryOp::Or => bp::OR,
            BinaryOp::Xor => bp::XOR,
            BinaryOp::And => bp::AND,
            BinaryOp::Add | BinaryOp::Sub => bp::ADD,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => bp::MUL,
            BinaryOp::Pow => bp::POW,
            _ => bp::PRED,
        },
        ExprKind::Comparison(..) => bp::CMP,
        ExprKind::IsNull(..) => bp::PRED,
        ExprKind::Unary(UnaryOp::Not, _) => bp::NOT,
        ExprKind::Unary(..) => bp::UNARY,
        ExprKind::Property(..)
        | ExprKind::Index(..)
        | ExprKind::Slice(..)
        | ExprKind::HasLabels(..) => BP_POSTFIX,
        _ => BP_ATOM,
    }
}

struct Printer {
    out: String,
    guard: StackGuard,
}

impl Printer {
    fn w(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn name(&mut self, i: &Ident) {
        let q = quote_name(&i.name);
        self.w(&q);
    }

    fn statement(&mut self, s: &Statement) {
        match s.prefix {
            Some(QueryPrefix::Explain) => self.w("EXPLAIN "),
            Some(QueryPrefix::Profile) => self.w("PROFILE "),
            None => {}
        }
        match &s.kind {
            StatementKind::Query(q) => self.query(q),
            StatementKind::CreateIndex(ix) => {
                self.w("CREATE INDEX ");
                match &ix.variable {
                    None => {
                        self.w("ON :");
                        self.name(&ix.label);
                        self.w("(");
                        self.names(&ix.properties, ", ");
                        self.w(")");
                    }
                    Some(v) => {
                        self.schema_head(&ix.name, ix.if_not_exists);
                        self.w("FOR ");
                        if ix.relationship {
                            self.w("()-[");
                            self.name(v);
                            self.w(":");
                            self.name(&ix.label);
                            self.w("]-()");
                        } else {
                            self.w("(");
                            self.name(v);
                            self.w(":");
                            self.name(&ix.label);
                            self.w(")");
                        }
                        self.w(" ON (");
                        self.props_of(v, &ix.properties);
                        self.w(")");
                    }
                }
            }
            StatementKind::CreateConstraint(c) => {
                self.w("CREATE CONSTRAINT ");
                self.schema_head(&c.name, c.if_not_exists);
                self.w("FOR (");
                self.name(&c.variable);
                self.w(":");
                self.name(&c.label);
                self.w(") REQUIRE (");
                self.props_of(&c.variable, &c.properties);
                self.w(match c.kind {
                    ConstraintKind::Unique => ") IS UNIQUE",
                    ConstraintKind::NotNull => ") IS NOT NULL",
                    ConstraintKind::NodeKey => ") IS NODE KEY",
                });
            }
            StatementKind::DropIndex(t) => {
                self.w("DROP INDEX ");
                self.drop_target(t);
            }
            StatementKind::DropConstraint(t) => {
                self.w("DROP CONSTRAINT ");
                self.drop_target(t);
            }
            StatementKind::ShowIndexes => self.w("SHOW INDEXES"),
            StatementKind::ShowConstraints => self.w("SHOW CONSTRAINTS"),
            StatementKind::ShowTransactions => self.w("SHOW TRANSACTIONS"),
            StatementKind::TerminateTransactions(ids) => {
                self.w("TERMINATE TRANSACTIONS ");
                self.exprs(ids);
            }
            StatementKind::Begin => self.w("BEGIN"),
            StatementKind::Commit => self.w("COMMIT"),
            StatementKind::Rollback => self.w("ROLLBACK"),
        }
    }

    fn schema_head(&mut self, name: &Option<Ident>, if_not_exists: bool) {
        if let Some(n) = name {
            self.name(n);
            self.w(" ");
        }
        if if_not_exists {
            self.w("IF NOT EXISTS ");
        }
    }

    fn props_of(&mut self, v: &Ident, props: &[Ident]) {
        for (i, p) in props.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.name(v);
            self.w(".");
            self.name(p);
        }
    }

    fn drop_target(&mut self, t: &DropTarget) {
        match t {
            DropTarget::Named { name, if_exists } => {
                self.name(name);
                if *if_exists {
                    self.w(" IF EXISTS");
                }
            }
            DropTarget::On { label, properties } => {
                self.w("ON :");
                self.name(label);
                self.w("(");
                self.names(properties, ", ");
                self.w(")");
            }
        }
    }

    fn sym(&mut self, i: &Ident) {
        let q = quote_symbol(&i.name);
        self.w(&q);
    }

    fn syms(&mut self, names: &[Ident], sep: &str) {
        for (i, n) in names.iter().enumerate() {
            if i > 0 {
                self.w(sep);
            }
            self.sym(n);
        }
    }

    fn names(&mut self, names: &[Ident], sep: &str) {
        for (i, n) in names.iter().enumerate() {
            if i > 0 {
                self.w(sep);
            }
            self.name(n);
        }
    }

    fn query(&mut self, q: &Query) {
        self.single(&q.first);
        for u in &q.unions {
            self.w(if u.all { " UNION ALL " } else { " UNION " });
            self.single(&u.query);
        }
    }

    fn single(&mut self, q: &SingleQuery) {
        for (i, c) in q.clauses.iter().enumerate() {
            if i > 0 {
                self.w(" ");
            }
            self.clause(c);
        }
    }

    fn clause(&mut self, c: &Clause) {
        match c {
            Clause::Match(m) => {
                self.w(if m.optional {
                    "OPTIONAL MATCH "
                } else {
                    "MATCH "
                });
                self.pattern(&m.pattern);
                self.where_(&m.where_);
            }
            Clause::Unwind(u) => {
                self.w("UNWIND ");
                self.expr(&u.expr, 0);
                self.w(" AS ");
                self.name(&u.variable);
            }
            Clause::With(p) => {
                self.w("WITH ");
                self.projection(p);
                self.where_(&p.where_);
            }
            Clause::Return(p) => {
                self.w("RETURN ");
                self.projection(p);
            }
            Clause::Create(c) => {
                self.w("CREATE ");
                self.pattern(&c.pattern);
            }
            Clause::Merge(m) => {
                self.w("MERGE ");
                self.pattern_part(&m.pattern);
                for a in &m.actions {
                    self.w(if a.on_create {
                        " ON CREATE SET "
                    } else {
                        " ON MATCH SET "
                    });
                    self.set_items(&a.items);
                }
            }
            Clause::Set(s) => {
                self.w("SET ");
                self.set_items(&s.items);
            }
            Clause::Remove(r) => {
                self.w("REMOVE ");
                for (i, item) in r.items.iter().enumerate() {
                    if i > 0 {
                        self.w(", ");
                    }
                    match item {
                        RemoveItem::Property(e) => self.expr(e, bp::PRED),
                        RemoveItem::Labels {
                            variable, labels, ..
                        } => {
                            self.name(variable);
                            self.labels(labels);
                        }
                    }
                }
            }
            Clause::Delete(d) => {
                self.w(if d.detach {
                    "DETACH DELETE "
                } else {
                    "DELETE "
                });
                self.exprs(&d.exprs);
            }
            Clause::Foreach(f) => {
                self.w("FOREACH (");
                self.name(&f.variable);
                self.w(" IN ");
                self.expr(&f.list, 0);
                self.w(" | ");
                for (i, c) in f.clauses.iter().enumerate() {
                    if i > 0 {
                        self.w(" ");
                    }
                    self.clause(c);
                }
                self.w(")");
            }
            Clause::Call(c) => {
                self.w("CALL ");
                self.syms(&c.name, ".");
                if let Some(args) = &c.args {
                    self.w("(");
                    self.exprs(args);
                    self.w(")");
                }
                if let Some(y) = &c.yield_ {
                    self.w(" YIELD ");
                    if y.star {
                        self.w("*");
                    }
                    for (i, item) in y.items.iter().enumerate() {
                        if i > 0 {
                            self.w(", ");
                        }
                        self.sym(&item.field);
                        if let Some(a) = &item.alias {
                            self.w(" AS ");
                            self.name(a);
                        }
                    }
                    self.where_(&y.where_);
                }
            }
            Clause::CallSubquery(c) => {
                self.w("CALL { ");
                self.query(&c.query);
                self.w(" }");
            }
        }
    }

    fn where_(&mut self, w: &Option<Expr>) {
        if let Some(e) = w {
            self.w(" WHERE ");
            self.expr(e, 0);
        }
    }

    fn projection(&mut self, p: &Projection) {
        if p.distinct {
            self.w("DISTINCT ");
        }
        if p.star {
            self.w("*");
            if !p.items.is_empty() {
                self.w(", ");
            }
        }
        for (i, item) in p.items.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            match &item.alias {
                Some(a) => {
                    self.expr(&item.expr, 0);
                    self.w(" AS ");
                    self.name(a);
                }
                None => self.w(&item.text),
            }
        }
        if !p.order_by.is_empty() {
            self.w(" ORDER BY ");
            for (i, s) in p.order_by.iter().enumerate() {
                if i > 0 {
                    self.w(", ");
                }
                self.expr(&s.expr, 0);
                if s.descending {
                    self.w(" DESC");
                }
            }
        }
        if let Some(e) = &p.skip {
            self.w(" SKIP ");
            self.expr(e, 0);
        }
        if let Some(e) = &p.limit {
            self.w(" LIMIT ");
            self.expr(e, 0);
        }
    }

    fn set_items(&mut self, items: &[SetItem]) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            match item {
                SetItem::Property { target, value, .. } => {
                    self.expr(target, bp::PRED);
                    self.w(" = ");
                    self.expr(value, 0);
                }
                SetItem::Replace {
                    variable, value, ..
                } => {
                    self.name(variable);
                    self.w(" = ");
                    self.expr(value, 0);
                }
                SetItem::Merge {
                    variable, value, ..
                } => {
                    self.name(variable);
                    self.w(" += ");
                    self.expr(value, 0);
                }
                SetItem::Labels {
                    variable, labels, ..
                } => {
                    self.name(variable);
                    self.labels(labels);
                }
            }
        }
    }

    fn labels(&mut self, labels: &[Ident]) {
        for l in labels {
            self.w(":");
            self.sym(l);
        }
    }

    fn pattern(&mut self, parts: &[PatternPart]) {
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.pattern_part(p);
        }
    }

    fn pattern_part(&mut self, p: &PatternPart) {
        if let Some(v) = &p.variable {
            self.name(v);
            self.w(" = ");
        }
        match p.shortest {
            Some(ShortestKind::Shortest) => {
                self.w("shortestPath(");
                self.element(&p.element);
                self.w(")");
            }
            Some(ShortestKind::All) => {
                self.w("allShortestPaths(");
                self.element(&p.element);
                self.w(")");
            }
            None => self.element(&p.element),
        }
    }

    fn element(&mut self, e: &PatternElement) {
        self.node(&e.start);
        for (r, n) in &e.chain {
            self.rel(r);
            self.node(n);
        }
    }

    fn props(&mut self, p: &Option<Box<Expr>>) {
        if let Some(e) = p {
            self.w(" ");
            self.expr(e, BP_ATOM);
        }
    }

    fn node(&mut self, n: &NodePattern) {
        self.w("(");
        if let Some(v) = &n.variable {
            self.name(v);
        }
        self.labels(&n.labels);
        self.props(&n.properties);
        self.w(")");
    }

    fn rel(&mut self, r: &RelationshipPattern) {
        self.w(if r.direction == Direction::Incoming {
            "<-"
        } else {
            "-"
        });
        let detail = r.variable.is_some()
            || !r.types.is_empty()
            || r.length.is_some()
            || r.properties.is_some();
        if detail {
            self.w("[");
            if let Some(v) = &r.variable {
                self.name(v);
            }
            for (i, t) in r.types.iter().enumerate() {
                self.w(if i == 0 { ":" } else { "|" });
                self.sym(t);
            }
            if let Some(l) = &r.length {
                self.w("*");
                match (l.min, l.max) {
                    (Some(a), Some(b)) if l.exact && a == b => {
                        let _ = write!(self.out, "{a}");
                    }
                    (min, max) => {
                        if let Some(a) = min {
                            let _ = write!(self.out, "{a}");
                        }
                        if min.is_some() || max.is_some() {
                            self.w("..");
                        }
                        if let Some(b) = max {
                            let _ = write!(self.out, "{b}");
                        }
                    }
                }
            }
            self.props(&r.properties);
            self.w("]");
        }
        self.w(if r.direction == Direction::Outgoing {
            "->"
        } else {
            "-"
        });
    }

    fn exprs(&mut self, es: &[Expr]) {
        for (i, e) in es.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.expr(e, 0);
        }
    }

    fn expr(&mut self, e: &Expr, min: u8) {
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

    fn subquery_body(&mut self, b: &SubqueryBody) {
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

    fn expr_inner(&mut self, e: &Expr) {
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

    fn map(&mut self, entries: &[(Ident, Expr)]) {
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
