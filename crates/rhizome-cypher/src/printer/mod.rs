//! Prints an AST back to Cypher text.
//!
//! Contract: for every statement `s` produced by [`crate::parse`],
//! `parse(&print_statement(&s)) == Ok(s)` (spans are ignored by equality).
//! Parentheses are inserted by precedence, names are backtick-quoted when
//! they are not plain identifiers or are keywords, strings are re-escaped.
//! Unaliased projection items are printed as their source text, because that
//! text is the column name.

mod clauses;
mod expressions;

use crate::ast::*;
use crate::error::{with_stack_fallback, StackGuard};
use crate::parser::expressions_bp as bp;
use crate::parser::is_reserved;
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

/// Words quoted when used as names besides the parser's reserved words
/// ([`is_reserved`]): names of constructs and commands that would read as
/// such where a name stands.
const ALSO_QUOTED: &[&str] = &[
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
        && !is_reserved(name)
        && !ALSO_QUOTED.iter().any(|k| k.eq_ignore_ascii_case(name))
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

pub(crate) struct Printer {
    pub(crate) out: String,
    pub(crate) guard: StackGuard,
}

impl Printer {
    fn w(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn name(&mut self, i: &Ident) {
        let q = quote_name(&i.name);
        self.w(&q);
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

    fn labels(&mut self, labels: &[Ident]) {
        for l in labels {
            self.w(":");
            self.sym(l);
        }
    }
}
