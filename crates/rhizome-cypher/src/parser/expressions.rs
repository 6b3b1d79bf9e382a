//! Expressions: a Pratt parser over the openCypher 9 precedence levels.
//!
//! From loosest to tightest: `OR`, `XOR`, `AND`, `NOT`, comparisons (chained),
//! string/list/null predicates (`STARTS WITH`, `ENDS WITH`, `CONTAINS`, `=~`,
//! `IN`, `IS [NOT] NULL`), `+ -`, `* / %`, `^`, unary `+ -`, then postfix
//! property access, indexing/slicing and label predicates on atoms.

use super::Parser;
use crate::ast::*;
use crate::lexer::Token;
use rhizome_common::Result;

const BP_OR: u8 = 1;
const BP_XOR: u8 = 2;
const BP_AND: u8 = 3;
const BP_NOT: u8 = 4;
const BP_CMP: u8 = 5;
const BP_PRED: u8 = 6;
const BP_ADD: u8 = 7;
const BP_MUL: u8 = 8;
const BP_POW: u8 = 9;
const BP_UNARY: u8 = 10;

/// Binding powers, exported for the printer (which parenthesizes by them).
pub(crate) mod bp {
    pub const OR: u8 = super::BP_OR;
    pub const XOR: u8 = super::BP_XOR;
    pub const AND: u8 = super::BP_AND;
    pub const NOT: u8 = super::BP_NOT;
    pub const CMP: u8 = super::BP_CMP;
    pub const PRED: u8 = super::BP_PRED;
    pub const ADD: u8 = super::BP_ADD;
    pub const MUL: u8 = super::BP_MUL;
    pub const POW: u8 = super::BP_POW;
    pub const UNARY: u8 = super::BP_UNARY;
}

enum Infix {
    Binary(BinaryOp, u8),
    Compare,
    IsNull,
}

impl<'a> Parser<'a> {
    /// Any expression.
    pub(crate) fn expr(&mut self) -> Result<Expr> {
        self.expr_bp(0)
    }

    /// An expression that binds at least as tightly as the predicate level,
    /// i.e. one that stops before `=` (used for `SET n.p = ...` targets).
    pub(crate) fn expr_above_comparison(&mut self) -> Result<Expr> {
        self.expr_bp(BP_PRED)
    }

    fn expr_bp(&mut self, min: u8) -> Result<Expr> {
        self.enter()?;
        let result = self.expr_bp_inner(min);
        self.leave();
        result
    }

    fn peek_infix(&self) -> Option<Infix> {
        let op = match self.peek() {
            Token::Ident => {
                let t = self.text();
                if t.eq_ignore_ascii_case("OR") {
                    Infix::Binary(BinaryOp::Or, BP_OR)
                } else if t.eq_ignore_ascii_case("XOR") {
                    Infix::Binary(BinaryOp::Xor, BP_XOR)
                } else if t.eq_ignore_ascii_case("AND") {
                    Infix::Binary(BinaryOp::And, BP_AND)
                } else if t.eq_ignore_ascii_case("IN") {
                    Infix::Binary(BinaryOp::In, BP_PRED)
                } else if t.eq_ignore_ascii_case("CONTAINS") {
                    Infix::Binary(BinaryOp::Contains, BP_PRED)
                } else if t.eq_ignore_ascii_case("STARTS") && self.is_kw_at(1, "WITH") {
                    Infix::Binary(BinaryOp::StartsWith, BP_PRED)
                } else if t.eq_ignore_ascii_case("ENDS") && self.is_kw_at(1, "WITH") {
                    Infix::Binary(BinaryOp::EndsWith, BP_PRED)
                } else if t.eq_ignore_ascii_case("IS") {
                    Infix::IsNull
                } else {
                    return None;
                }
            }
            Token::Eq | Token::Ne | Token::Lt | Token::Gt | Token::Le | Token::Ge => Infix::Compare,
            Token::RegexMatch => Infix::Binary(BinaryOp::RegexMatch, BP_PRED),
            Token::Plus => Infix::Binary(BinaryOp::Add, BP_ADD),
            Token::Minus => Infix::Binary(BinaryOp::Sub, BP_ADD),
            Token::Star => Infix::Binary(BinaryOp::Mul, BP_MUL),
            Token::Slash => Infix::Binary(BinaryOp::Div, BP_MUL),
            Token::Percent => Infix::Binary(BinaryOp::Mod, BP_MUL),
            Token::Caret => Infix::Binary(BinaryOp::Pow, BP_POW),
            _ => return None,
        };
        Some(op)
    }

    fn compare_op(&self) -> Option<CompareOp> {
        Some(match self.peek() {
            Token::Eq => CompareOp::Eq,
            Token::Ne => CompareOp::Ne,
            Token::Lt => CompareOp::Lt,
            Token::Gt => CompareOp::Gt,
            Token::Le => CompareOp::Le,
            Token::Ge => CompareOp::Ge,
            _ => return None,
        })
    }

    fn expr_bp_inner(&mut self, min: u8) -> Result<Expr> {
        let start = self.span().start;
        let lhs = if self.at_kw("NOT") {
            self.bump();
            let operand = self.expr_bp(BP_NOT)?;
            Expr::new(
                ExprKind::Unary(UnaryOp::Not, Box::new(operand)),
                self.since(start),
            )
        } else if matches!(self.peek(), Token::Minus | Token::Plus) {
            let neg = self.bump().kind == Token::Minus;
            if neg && matches!(self.peek(), Token::Number | Token::Float) {
                let lit = self.number(true)?;
                self.postfix(lit, start)?
            } else {
                let operand = self.expr_bp(BP_UNARY)?;
                let op = if neg { UnaryOp::Neg } else { UnaryOp::Plus };
                Expr::new(ExprKind::Unary(op, Box::new(operand)), self.since(start))
            }
        } else {
            let atom = self.atom()?;
            self.postfix(atom, start)?
        };
        self.infix_loop(lhs, start, min)
    }

    /// Continues an expression whose leftmost operand `lhs` is already parsed.
    fn infix_loop(&mut self, mut lhs: Expr, start: usize, min: u8) -> Result<Expr> {
        let mut extra = 0;
        let result = loop {
            let Some(infix) = self.peek_infix() else {
                break Ok(lhs);
            };
            let lbp = match infix {
                Infix::Binary(_, bp) => bp,
                Infix::Compare => BP_CMP,
                Infix::IsNull => BP_PRED,
            };
            if lbp < min {
                break Ok(lhs);
            }
            if let Err(e) = self.enter() {
                break Err(e);
            }
            extra += 1;
            match infix {
                Infix::Binary(op, bp) => {
                    self.bump();
                    if matches!(op, BinaryOp::StartsWith | BinaryOp::EndsWith) {
                        self.bump();
                    }
                    let rhs = self.expr_bp(bp + 1)?;
                    lhs = Expr::new(
                        ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                        self.since(start),
                    );
                }
                Infix::Compare => {
                    let mut rest = Vec::new();
                    while let Some(op) = self.compare_op() {
                        self.bump();
                        let rhs = self.expr_bp(BP_PRED)?;
                        rest.push((op, rhs));
                    }
                    lhs = Expr::new(ExprKind::Comparison(Box::new(lhs), rest), self.since(start));
                }
                Infix::IsNull => {
                    self.bump();
                    let negated = self.eat_kw("NOT");
                    self.expect_kw("NULL")?;
                    lhs = Expr::new(ExprKind::IsNull(Box::new(lhs), negated), self.since(start));
                }
            }
        };
        self.leave_n(extra);
        result
    }

    /// Property lookups, index/slice and label predicates after an atom.
    fn postfix(&mut self, mut e: Expr, start: usize) -> Result<Expr> {
        let mut extra = 0;
        let result = loop {
            match self.peek() {
                Token::Dot => {
                    self.bump();
                    let key = self.name("a property key")?;
                    e = Expr::new(ExprKind::Property(Box::new(e), key), self.since(start));
                }
                Token::LBracket => {
                    self.bump();
                    if self.eat(Token::DotDot) {
                        let to = if self.peek() == Token::RBracket {
                            None
                        } else {
                            Some(Box::new(self.expr()?))
                        };
                        self.expect(Token::RBracket)?;
                        e = Expr::new(ExprKind::Slice(Box::new(e), None, to), self.since(start));
                    } else {
                        let index = self.expr()?;
                        if self.eat(Token::DotDot) {
                            let to = if self.peek() == Token::RBracket {
                                None
                            } else {
                                Some(Box::new(self.expr()?))
                            };
                            self.expect(Token::RBracket)?;
                            e = Expr::new(
                                ExprKind::Slice(Box::new(e), Some(Box::new(index)), to),
                                self.since(start),
                            );
                        } else {
                            self.expect(Token::RBracket)?;
                            e = Expr::new(
                                ExprKind::Index(Box::new(e), Box::new(index)),
                                self.since(start),
                            );
                        }
                    }
                }
                Token::Colon => {
                    let labels = self.labels()?;
                    e = Expr::new(ExprKind::HasLabels(Box::new(e), labels), self.since(start));
                }
                _ => break Ok(e),
            }
            if let Err(err) = self.enter() {
                break Err(err);
            }
            extra += 1;
        };
        self.leave_n(extra);
        result
    }

    /// `:A:B` (a `:` is required before each label).
    pub(crate) fn labels(&mut self) -> Result<Vec<Ident>> {
        let mut labels = Vec::new();
        while self.eat(Token::Colon) {
            labels.push(self.name("a label name")?);
        }
        Ok(labels)
    }

    /// A numeric literal; `negative` when a `-` was consumed just before it.
    fn number(&mut self, negative: bool) -> Result<Expr> {
        let start = if negative {
            self.prev_end() - 1
        } else {
            self.span().start
        };
        let tok = self.bump();
        let text = self.text_of(tok.span);
        let span = Span::new(start, tok.span.end);
        if tok.kind == Token::Float {
            let v: f64 = text.parse().map_err(|_| {
                self.error_at(
                    span,
                    "InvalidNumberLiteral",
                    format!("invalid float literal `{text}`"),
                )
            })?;
            if !v.is_finite() {
                return Err(self.error_at(
                    span,
                    "FloatingPointOverflow",
                    format!("float literal `{text}` is too large"),
                ));
            }
            return Ok(Expr::new(
                ExprKind::Literal(Literal::Float(if negative { -v } else { v })),
                span,
            ));
        }
        let (digits, radix) = if let Some(d) = text.strip_prefix("0x") {
            (d, 16)
        } else if let Some(d) = text.strip_prefix("0o") {
            (d, 8)
        } else {
            (text, 10)
        };
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return Err(self.error_at(
                span,
                "InvalidNumberLiteral",
                format!("invalid number literal `{text}`"),
            ));
        }
        let mut value: i128 = 0;
        for c in digits.chars() {
            value = value * radix as i128 + c.to_digit(radix).unwrap_or(0) as i128;
            if value > i64::MAX as i128 + 1 {
                break;
            }
        }
        let value = if negative { -value } else { value };
        let value = i64::try_from(value).map_err(|_| {
            self.error_at(
                span,
                "IntegerOverflow",
                format!(
                    "integer literal `{}{text}` does not fit in 64 bits",
                    if negative { "-" } else { "" }
                ),
            )
        })?;
        Ok(Expr::new(ExprKind::Literal(Literal::Integer(value)), span))
    }

    fn atom(&mut self) -> Result<Expr> {
        let start = self.span().start;
        match self.peek() {
            Token::Number | Token::Float => self.number(false),
            Token::String => {
                let tok = self.bump();
                let s = self.unescape(tok.span)?;
                Ok(Expr::new(ExprKind::Literal(Literal::String(s)), tok.span))
            }
            Token::Dollar => {
                self.bump();
                let name = match self.peek() {
                    Token::Number => {
                        let t = self.bump();
                        self.text_of(t.span).to_string()
                    }
                    _ => self.name("a parameter name")?.name,
                };
                Ok(Expr::new(ExprKind::Parameter(name), self.since(start)))
            }
            Token::LBracket => self.list_like(),
            Token::LBrace => {
                let entries = self.map_literal()?;
                Ok(Expr::new(ExprKind::Map(entries), self.since(start)))
            }
            Token::LParen => {
                if self.pattern_starts_at(self.index()) {
                    let element = self.pattern_element()?;
                    return Ok(Expr::new(
                        ExprKind::PatternPredicate(element),
                        self.since(start),
                    ));
                }
                self.bump();
                let mut e = self.expr()?;
                self.expect(Token::RParen)?;
                e.span = self.since(start);
                Ok(e)
            }
            Token::Ident | Token::QuotedIdent => self.name_atom(),
            _ => Err(self.unexpected("an expression")),
        }
    }

    fn name_atom(&mut self) -> Result<Expr> {
        let start = self.span().start;
        if self.peek() == Token::Ident {
            let word = self.text();
            // Keywords that start expressions are at most 6 bytes long; lower-case
            // into a stack buffer instead of allocating.
            let mut buf = [0u8; 8];
            let lower: &str = if word.len() <= buf.len() {
                buf[..word.len()].copy_from_slice(word.as_bytes());
                buf[..word.len()].make_ascii_lowercase();
                std::str::from_utf8(&buf[..word.len()]).unwrap_or("")
            } else {
                ""
            };
            match lower {
                "true" => {
                    self.bump();
                    return Ok(Expr::new(
                        ExprKind::Literal(Literal::Bool(true)),
                        self.since(start),
                    ));
                }
                "false" => {
                    self.bump();
                    return Ok(Expr::new(
                        ExprKind::Literal(Literal::Bool(false)),
                        self.since(start),
                    ));
                }
                "null" => {
                    self.bump();
                    return Ok(Expr::new(
                        ExprKind::Literal(Literal::Null),
                        self.since(start),
                    ));
                }
                "case" => return self.case_expr(),
                "exists" | "count" if self.peek_at(1) == Token::LBrace => {
                    self.bump();
                    let body = self.subquery_body()?;
                    let kind = if lower == "exists" {
                        ExprKind::Exists(body)
                    } else {
                        ExprKind::CountSubquery(body)
                    };
                    return Ok(Expr::new(kind, self.since(start)));
                }
                "count"
                    if self.peek_at(1) == Token::LParen
                        && self.peek_at(2) == Token::Star
                        && self.peek_at(3) == Token::RParen =>
                {
                    for _ in 0..4 {
                        self.bump();
                    }
                    return Ok(Expr::new(ExprKind::CountStar, self.since(start)));
                }
                "all" | "any" | "none" | "single"
                    if self.peek_at(1) == Token::LParen
                        && matches!(self.peek_at(2), Token::Ident | Token::QuotedIdent)
                        && self.is_kw_at(3, "IN") =>
                {
                    let quantifier = match lower {
                        "all" => Quantifier::All,
                        "any" => Quantifier::Any,
                        "none" => Quantifier::None,
                        _ => Quantifier::Single,
                    };
                    self.bump();
                    self.bump();
                    let variable = self.variable()?;
                    self.expect_kw("IN")?;
                    let list = self.expr()?;
                    let predicate = if self.eat_kw("WHERE") {
                        Some(Box::new(self.expr()?))
                    } else {
                        None
                    };
                    self.expect(Token::RParen)?;
                    return Ok(Expr::new(
                        ExprKind::Quantified {
                            quantifier,
                            variable,
                            list: Box::new(list),
                            predicate,
                        },
                        self.since(start),
                    ));
                }
                "reduce" if self.peek_at(1) == Token::LParen && self.peek_at(3) == Token::Eq => {
                    self.bump();
                    self.bump();
                    let accumulator = self.variable()?;
                    self.expect(Token::Eq)?;
                    let init = self.expr()?;
                    self.expect(Token::Comma)?;
                    let variable = self.variable()?;
                    self.expect_kw("IN")?;
                    let list = self.expr()?;
                    self.expect(Token::Pipe)?;
                    let expr = self.expr()?;
                    self.expect(Token::RParen)?;
                    return Ok(Expr::new(
                        ExprKind::Reduce {
                            accumulator,
                            init: Box::new(init),
                            variable,
                            list: Box::new(list),
                            expr: Box::new(expr),
                        },
                        self.since(start),
                    ));
                }
                _ => {}
            }
        }
        // A function call: name(.name)* followed by `(`.
        let mut i = 1;
        while self.peek_at(i) == Token::Dot
            && matches!(self.peek_at(i + 1), Token::Ident | Token::QuotedIdent)
        {
            i += 2;
        }
        if self.peek_at(i) == Token::LParen {
            let mut name = vec![self.name("a function name")?];
            while self.eat(Token::Dot) {
                name.push(self.name("a function name")?);
            }
            self.expect(Token::LParen)?;
            let distinct = self.eat_kw("DISTINCT");
            let mut args = Vec::new();
            if self.peek() != Token::RParen {
                loop {
                    args.push(self.expr()?);
                    if !self.eat(Token::Comma) {
                        break;
                    }
                }
            }
            self.expect(Token::RParen)?;
            return Ok(Expr::new(
                ExprKind::FunctionCall {
                    name,
                    distinct,
                    args,
                },
                self.since(start),
            ));
        }
        let var = self
            .variable()
            .map_err(|_| self.unexpected("an expression"))?;
        if self.peek() == Token::LBrace {
            let items = self.map_projection_items()?;
            return Ok(Expr::new(
                ExprKind::MapProjection(var, items),
                self.since(start),
            ));
        }
        Ok(Expr::new(ExprKind::Variable(var.name), var.span))
    }

    fn map_projection_items(&mut self) -> Result<Vec<MapProjectionItem>> {
        self.expect(Token::LBrace)?;
        let mut items = Vec::new();
        if self.eat(Token::RBrace) {
            return Ok(items);
        }
        loop {
            if self.eat(Token::Dot) {
                if self.eat(Token::Star) {
                    items.push(MapProjectionItem::AllProperties);
                } else {
                    items.push(MapProjectionItem::Property(self.name("a property key")?));
                }
            } else {
                let key = self.name("a map projection entry")?;
                if self.eat(Token::Colon) {
                    let value = self.expr()?;
                    items.push(MapProjectionItem::Literal(key, value));
                } else {
                    items.push(MapProjectionItem::Variable(key));
                }
            }
            if !self.eat(Token::Comma) {
                break;
            }
        }
        self.expect(Token::RBrace)?;
        Ok(items)
    }

    /// `{ key: value, ... }`.
    pub(crate) fn map_literal(&mut self) -> Result<Vec<(Ident, Expr)>> {
        self.expect(Token::LBrace)?;
        let mut entries = Vec::new();
        if !self.eat(Token::RBrace) {
            loop {
                let key = self.name("a map key")?;
                self.expect(Token::Colon)?;
                let value = self.expr()?;
                entries.push((key, value));
                if !self.eat(Token::Comma) {
                    break;
                }
            }
            self.expect(Token::RBrace)?;
        }
        Ok(entries)
    }

    fn case_expr(&mut self) -> Result<Expr> {
        let start = self.span().start;
        self.bump();
        let operand = if self.at_kw("WHEN") {
            None
        } else {
            Some(Box::new(self.expr()?))
        };
        let mut whens = Vec::new();
        while self.eat_kw("WHEN") {
            let cond = self.expr()?;
            self.expect_kw("THEN")?;
            let value = self.expr()?;
            whens.push((cond, value));
        }
        if whens.is_empty() {
            return Err(self.unexpected("`WHEN`"));
        }
        let else_ = if self.eat_kw("ELSE") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        self.expect_kw("END")?;
        Ok(Expr::new(
            ExprKind::Case {
                operand,
                whens,
                else_,
            },
            self.since(start),
        ))
    }

    /// `[...]`: a list literal, list comprehension or pattern comprehension.
    fn list_like(&mut self) -> Result<Expr> {
        let start = self.span().start;
        let open = self.index();
        self.bump();
        // [x IN list ...]
        if matches!(self.peek(), Token::Ident | Token::QuotedIdent)
            && self.is_kw_at(1, "IN")
            && self.at_variable()
        {
            let variable = self.variable()?;
            self.bump();
            let list = self.expr()?;
            let predicate = if self.eat_kw("WHERE") {
                Some(Box::new(self.expr()?))
            } else {
                None
            };
            let projection = if self.eat(Token::Pipe) {
                Some(Box::new(self.expr()?))
            } else {
                None
            };
            self.expect(Token::RBracket)?;
            return Ok(Expr::new(
                ExprKind::ListComprehension {
                    variable,
                    list: Box::new(list),
                    predicate,
                    projection,
                },
                self.since(start),
            ));
        }
        // [p = (a)-->(b) ... | ...] or [(a)-->(b) ... | ...]
        let path_var = matches!(self.peek(), Token::Ident | Token::QuotedIdent)
            && self.peek_at(1) == Token::Eq
            && self.peek_at(2) == Token::LParen
            && self.pattern_starts_at(self.index() + 2);
        if path_var || (self.peek() == Token::LParen && self.pattern_starts_at(self.index())) {
            let variable = if path_var {
                let v = self.variable()?;
                self.bump();
                Some(v)
            } else {
                None
            };
            let pattern = self.pattern_element()?;
            let predicate = if self.eat_kw("WHERE") {
                Some(Box::new(self.expr()?))
            } else {
                None
            };
            if predicate.is_some() || variable.is_some() || self.peek() == Token::Pipe {
                self.expect(Token::Pipe)?;
                let projection = Box::new(self.expr()?);
                self.expect(Token::RBracket)?;
                return Ok(Expr::new(
                    ExprKind::PatternComprehension {
                        variable,
                        pattern,
                        predicate,
                        projection,
                    },
                    self.since(start),
                ));
            }
            // A list whose first element starts with a pattern predicate.
            let first_start = self.tok_at(open + 1).span.start;
            let first = Expr::new(ExprKind::PatternPredicate(pattern), self.since(first_start));
            let first = self.postfix(first, first_start)?;
            let mut items = vec![self.infix_loop(first, first_start, 0)?];
            while self.eat(Token::Comma) {
                items.push(self.expr()?);
            }
            self.expect(Token::RBracket)?;
            return Ok(Expr::new(ExprKind::List(items), self.since(start)));
        }
        let mut items = Vec::new();
        if !self.eat(Token::RBracket) {
            loop {
                items.push(self.expr()?);
                if !self.eat(Token::Comma) {
                    break;
                }
            }
            self.expect(Token::RBracket)?;
        }
        Ok(Expr::new(ExprKind::List(items), self.since(start)))
    }

    /// `{ pattern [WHERE e] }` or `{ query }` after `EXISTS` / `COUNT`.
    pub(crate) fn subquery_body(&mut self) -> Result<SubqueryBody> {
        self.enter()?;
        self.expect(Token::LBrace)?;
        const CLAUSE_WORDS: &[&str] = &[
            "MATCH", "OPTIONAL", "WITH", "UNWIND", "CALL", "RETURN", "CREATE", "MERGE", "SET",
            "DELETE", "DETACH", "REMOVE", "FOREACH",
        ];
        let body = if CLAUSE_WORDS.iter().any(|w| self.at_kw(w)) {
            SubqueryBody::Query(Box::new(self.query()?))
        } else {
            let pattern = self.pattern()?;
            let where_ = if self.eat_kw("WHERE") {
                Some(Box::new(self.expr()?))
            } else {
                None
            };
            SubqueryBody::Pattern { pattern, where_ }
        };
        self.expect(Token::RBrace)?;
        self.leave();
        Ok(body)
    }

    /// Resolves the escapes of the string literal at `span`.
    fn unescape(&self, span: Span) -> Result<String> {
        let raw = self.text_of(span);
        let inner = &raw[1..raw.len() - 1];
        if !inner.contains('\\') {
            return Ok(inner.to_string());
        }
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.char_indices();
        while let Some((i, c)) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let at = Span::new(span.start + 1 + i, span.end);
            match chars.next().map(|(_, c)| c) {
                Some('t') => out.push('\t'),
                Some('b') => out.push('\u{8}'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('f') => out.push('\u{c}'),
                Some('\'') => out.push('\''),
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some(u @ ('u' | 'U')) => {
                    let n = if u == 'u' { 4 } else { 8 };
                    let hex: String = chars.clone().take(n).map(|(_, c)| c).collect();
                    let ch = (hex.len() == n && hex.chars().all(|c| c.is_ascii_hexdigit()))
                        .then(|| u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32))
                        .flatten();
                    match ch {
                        Some(ch) => {
                            out.push(ch);
                            for _ in 0..n {
                                chars.next();
                            }
                        }
                        None => {
                            return Err(self.error_at(
                                at,
                                "InvalidUnicodeLiteral",
                                format!("invalid unicode escape `\\{u}{hex}`"),
                            ))
                        }
                    }
                }
                Some(other) => {
                    return Err(self.error_at(
                        at,
                        "UnexpectedSyntax",
                        format!("invalid escape sequence `\\{other}`"),
                    ));
                }
                None => {
                    return Err(self.error_at(
                        at,
                        "UnexpectedSyntax",
                        "unterminated escape sequence",
                    ))
                }
            }
        }
        Ok(out)
    }
}
