//! The hand-written recursive-descent parser (with a Pratt parser for
//! expressions in the `expressions` module).
//!
//! Guarantees: never panics, runs in time linear in the input (no
//! backtracking; the only lookahead that looks far ahead uses a precomputed
//! bracket-matching table), and bounds nesting by [`MAX_DEPTH`] so that deep
//! inputs end in a clean `SyntaxError` instead of a stack overflow.

mod clauses;
mod expressions;
mod patterns;
mod schema;

pub(crate) use expressions::bp as expressions_bp;

use crate::ast::*;
use crate::error::{syntax_error, with_stack_fallback, StackGuard};
use crate::lexer::{tokenize, Tok, Token};
use rhizome_common::{Error, Result};

/// Deepest nesting of expressions, patterns and subqueries the parser accepts.
pub const MAX_DEPTH: usize = 500;

/// Parses one statement (an optional trailing `;` is allowed).
pub fn parse(text: &str) -> Result<Statement> {
    with_stack_fallback(|budget| {
        let mut p = match Parser::new(text, budget) {
            Ok(p) => p,
            Err(e) => return (Err(e), false),
        };
        let result = p.statement().and_then(|stmt| {
            p.eat(Token::Semicolon);
            if p.peek() != Token::Eof {
                return Err(p.unexpected("end of input"));
            }
            Ok(stmt)
        });
        let tripped = result.is_err() && p.guard.tripped.get();
        (result, tripped)
    })
}

/// Parses a standalone expression (useful for tools and tests).
pub fn parse_expression(text: &str) -> Result<Expr> {
    with_stack_fallback(|budget| {
        let mut p = match Parser::new(text, budget) {
            Ok(p) => p,
            Err(e) => return (Err(e), false),
        };
        let result = p.expr().and_then(|e| {
            if p.peek() != Token::Eof {
                return Err(p.unexpected("end of input"));
            }
            Ok(e)
        });
        let tripped = result.is_err() && p.guard.tripped.get();
        (result, tripped)
    })
}

pub(crate) struct Parser<'a> {
    pub(crate) src: &'a str,
    toks: Vec<Tok>,
    /// For each opening bracket token, the index of its closing token (or the Eof index).
    matching: Vec<u32>,
    pos: usize,
    depth: usize,
    guard: StackGuard,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, stack_budget: usize) -> Result<Parser<'a>> {
        let toks = tokenize(src)?;
        let mut matching = vec![0u32; toks.len()];
        let eof = (toks.len() - 1) as u32;
        let mut stack: Vec<usize> = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            match t.kind {
                Token::LParen | Token::LBracket | Token::LBrace => stack.push(i),
                Token::RParen | Token::RBracket | Token::RBrace => {
                    if let Some(open) = stack.pop() {
                        matching[open] = i as u32;
                    }
                }
                _ => {}
            }
        }
        for open in stack {
            matching[open] = eof;
        }
        Ok(Parser {
            src,
            toks,
            matching,
            pos: 0,
            depth: 0,
            guard: StackGuard::new(stack_budget),
        })
    }

    // ----- cursor -----

    pub(crate) fn peek(&self) -> Token {
        self.toks[self.pos].kind
    }

    pub(crate) fn peek_at(&self, n: usize) -> Token {
        self.toks.get(self.pos + n).map_or(Token::Eof, |t| t.kind)
    }

    pub(crate) fn tok_at(&self, index: usize) -> Tok {
        self.toks[index.min(self.toks.len() - 1)]
    }

    pub(crate) fn span(&self) -> Span {
        self.toks[self.pos].span
    }

    pub(crate) fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.toks[self.pos - 1].span.end
        }
    }

    /// Span from `start` to the end of the last consumed token.
    pub(crate) fn since(&self, start: usize) -> Span {
        Span::new(start, self.prev_end().max(start))
    }

    pub(crate) fn text_of(&self, span: Span) -> &'a str {
        &self.src[span.start..span.end]
    }

    pub(crate) fn text(&self) -> &'a str {
        self.text_of(self.span())
    }

    pub(crate) fn bump(&mut self) -> Tok {
        let t = self.toks[self.pos];
        if t.kind != Token::Eof {
            self.pos += 1;
        }
        t
    }

    pub(crate) fn eat(&mut self, kind: Token) -> bool {
        if self.peek() == kind {
            self.bump();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect(&mut self, kind: Token) -> Result<Tok> {
        if self.peek() == kind {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&format!("`{}`", token_text(kind))))
        }
    }

    /// The index of the token closing the bracket at `index`.
    pub(crate) fn matching_close(&self, index: usize) -> usize {
        self.matching
            .get(index)
            .map_or(self.toks.len() - 1, |&m| m as usize)
    }

    pub(crate) fn index(&self) -> usize {
        self.pos
    }

    pub(crate) fn kind_at_index(&self, index: usize) -> Token {
        self.toks.get(index).map_or(Token::Eof, |t| t.kind)
    }

    // ----- keywords -----

    pub(crate) fn is_kw_at(&self, n: usize, kw: &str) -> bool {
        match self.toks.get(self.pos + n) {
            Some(t) if t.kind == Token::Ident => self.text_of(t.span).eq_ignore_ascii_case(kw),
            _ => false,
        }
    }

    pub(crate) fn at_kw(&self, kw: &str) -> bool {
        self.is_kw_at(0, kw)
    }

    pub(crate) fn eat_kw(&mut self, kw: &str) -> bool {
        if self.at_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect_kw(&mut self, kw: &str) -> Result<Span> {
        if self.at_kw(kw) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(&format!("`{kw}`")))
        }
    }

    // ----- errors -----

    pub(crate) fn found(&self) -> String {
        let t = self.toks[self.pos];
        if t.kind == Token::Eof {
            "end of input".to_string()
        } else {
            let text = self.text_of(t.span);
            let short: String = text.chars().take(40).collect();
            format!("`{short}`")
        }
    }

    pub(crate) fn unexpected(&self, expected: &str) -> Error {
        self.error_here(
            "UnexpectedSyntax",
            format!("expected {expected} but found {}", self.found()),
        )
    }

    pub(crate) fn error_here(&self, code: &'static str, message: impl Into<String>) -> Error {
        syntax_error(self.src, self.span().start, code, message)
    }

    pub(crate) fn error_at(
        &self,
        span: Span,
        code: &'static str,
        message: impl Into<String>,
    ) -> Error {
        syntax_error(self.src, span.start, code, message)
    }

    // ----- depth guard -----

    pub(crate) fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH || self.guard.exhausted() {
            return Err(self.error_here(
                "UnexpectedSyntax",
                format!("query is nested too deeply (more than {MAX_DEPTH} levels)"),
            ));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    pub(crate) fn leave_n(&mut self, n: usize) {
        self.depth = self.depth.saturating_sub(n);
    }

    // ----- names -----

    /// A symbolic name: an identifier (any keyword allowed) or a quoted name.
    pub(crate) fn name(&mut self, what: &str) -> Result<Ident> {
        match self.peek() {
            Token::Ident => {
                let t = self.bump();
                Ok(Ident {
                    name: self.text_of(t.span).to_string(),
                    span: t.span,
                })
            }
            Token::QuotedIdent => {
                let t = self.bump();
                let raw = self.text_of(t.span);
                let inner = &raw[1..raw.len() - 1];
                Ok(Ident {
                    name: inner.replace("``", "`"),
                    span: t.span,
                })
            }
            _ => Err(self.unexpected(what)),
        }
    }

    /// A variable name: like [`Parser::name`] but reserved words are refused.
    pub(crate) fn variable(&mut self) -> Result<Ident> {
        if self.peek() == Token::Ident && is_reserved(self.text()) {
            return Err(self.unexpected("a variable name"));
        }
        self.name("a variable name")
    }

    pub(crate) fn at_name(&self) -> bool {
        matches!(self.peek(), Token::Ident | Token::QuotedIdent)
    }

    pub(crate) fn at_variable(&self) -> bool {
        match self.peek() {
            Token::Ident => !is_reserved(self.text()),
            Token::QuotedIdent => true,
            _ => false,
        }
    }

    // ----- statements -----

    fn statement(&mut self) -> Result<Statement> {
        let start = self.span().start;
        let prefix = if self.eat_kw("EXPLAIN") {
            Some(QueryPrefix::Explain)
        } else if self.eat_kw("PROFILE") {
            Some(QueryPrefix::Profile)
        } else {
            None
        };
        let kind = if let Some(kind) = self.schema_or_admin()? {
            kind
        } else {
            StatementKind::Query(self.query()?)
        };
        Ok(Statement {
            prefix,
            kind,
            span: self.since(start),
        })
    }

    /// A query: single queries joined by `UNION [ALL]`.
    pub(crate) fn query(&mut self) -> Result<Query> {
        let start = self.span().start;
        let first = self.single_query()?;
        let mut unions = Vec::new();
        while self.at_kw("UNION") {
            let kw_start = self.span().start;
            self.bump();
            let all = self.eat_kw("ALL");
            let span = self.since(kw_start);
            let query = self.single_query()?;
            unions.push(UnionPart { all, query, span });
        }
        Ok(Query {
            first,
            unions,
            span: self.since(start),
        })
    }
}

/// Words that cannot be used as unquoted variable names.
pub(crate) fn is_reserved(word: &str) -> bool {
    const RESERVED: &[&str] = &[
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
    ];
    word.len() <= 10 && RESERVED.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// The text of a punctuation token, for messages.
pub(crate) fn token_text(kind: Token) -> &'static str {
    match kind {
        Token::LParen => "(",
        Token::RParen => ")",
        Token::LBracket => "[",
        Token::RBracket => "]",
        Token::LBrace => "{",
        Token::RBrace => "}",
        Token::Comma => ",",
        Token::Dot => ".",
        Token::DotDot => "..",
        Token::Colon => ":",
        Token::Semicolon => ";",
        Token::Pipe => "|",
        Token::Plus => "+",
        Token::PlusEq => "+=",
        Token::Minus => "-",
        Token::Star => "*",
        Token::Slash => "/",
        Token::Percent => "%",
        Token::Caret => "^",
        Token::Eq => "=",
        Token::Ne => "<>",
        Token::Lt => "<",
        Token::Gt => ">",
        Token::Le => "<=",
        Token::Ge => ">=",
        Token::RegexMatch => "=~",
        Token::Dollar => "$",
        Token::Ident => "a name",
        Token::QuotedIdent => "a quoted name",
        Token::String => "a string",
        Token::Number => "a number",
        Token::Float => "a float",
        Token::Eof => "end of input",
    }
}
