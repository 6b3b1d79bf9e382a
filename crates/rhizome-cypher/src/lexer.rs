//! The lexer: query text to tokens, built with `logos`.
//!
//! Keywords are not separate tokens: they lex as [`Token::Ident`] and the
//! parser compares them case-insensitively, which lets keywords double as
//! names where Cypher allows it (`n.count`, `{limit: 1}`). Whitespace and
//! comments are skipped. Numbers lex greedily (`[0-9][0-9a-zA-Z_]*`) so that
//! malformed literals such as `12h4` reach the parser as one token and get a
//! precise `InvalidNumberLiteral` error.

use crate::ast::Span;
use crate::error::syntax_error;
use logos::Logos;
use rhizome_common::Result;

/// A token kind. The text is recovered from the token's span.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f\u{000B}\u{00A0}\u{1680}\u{2000}-\u{200A}\u{2028}\u{2029}\u{202F}\u{205F}\u{3000}\u{FEFF}]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip r"/\*([^*]|\*+[^*/])*\*+/")]
pub enum Token {
    /// A name or keyword.
    // Non-ASCII characters (other than Unicode white space) are accepted by the
    // regex, which keeps the automaton small and fast, and validated in
    // `tokenize` (letters and digits only).
    #[regex(r"[a-zA-Z_\u{A1}-\u{167F}\u{1681}-\u{1FFF}\u{200B}-\u{2027}\u{202A}-\u{202E}\u{2030}-\u{205E}\u{2060}-\u{2FFF}\u{3001}-\u{FEFE}\u{FF00}-\u{10FFFF}][a-zA-Z0-9_\u{A1}-\u{167F}\u{1681}-\u{1FFF}\u{200B}-\u{2027}\u{202A}-\u{202E}\u{2030}-\u{205E}\u{2060}-\u{2FFF}\u{3001}-\u{FEFE}\u{FF00}-\u{10FFFF}]*")]
    Ident,
    /// A backtick-quoted name.
    #[regex(r"`([^`]|``)*`")]
    QuotedIdent,
    /// A string literal (single or double quotes, escapes unresolved).
    #[regex(r#"'([^'\\]|\\(.|\n))*'"#)]
    #[regex(r#""([^"\\]|\\(.|\n))*""#)]
    String,
    /// An integer-looking token (validated by the parser).
    #[regex(r"[0-9][0-9a-zA-Z_]*")]
    Number,
    /// A float literal.
    #[regex(r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?", priority = 10)]
    #[regex(r"\.[0-9]+([eE][+-]?[0-9]+)?", priority = 10)]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+", priority = 10)]
    Float,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `,`
    #[token(",")]
    Comma,
    /// `.`
    #[token(".")]
    Dot,
    /// `..`
    #[token("..")]
    DotDot,
    /// `:`
    #[token(":")]
    Colon,
    /// `;`
    #[token(";")]
    Semicolon,
    /// `|`
    #[token("|")]
    Pipe,
    /// `+`
    #[token("+")]
    Plus,
    /// `+=`
    #[token("+=")]
    PlusEq,
    /// `-`
    #[token("-")]
    Minus,
    /// `*`
    #[token("*")]
    Star,
    /// `/`
    #[token("/")]
    Slash,
    /// `%`
    #[token("%")]
    Percent,
    /// `^`
    #[token("^")]
    Caret,
    /// `=`
    #[token("=")]
    Eq,
    /// `<>` or `!=`
    #[token("<>")]
    #[token("!=")]
    Ne,
    /// `<`
    #[token("<")]
    Lt,
    /// `>`
    #[token(">")]
    Gt,
    /// `<=`
    #[token("<=")]
    Le,
    /// `>=`
    #[token(">=")]
    Ge,
    /// `=~`
    #[token("=~")]
    RegexMatch,
    /// `$`
    #[token("$")]
    Dollar,
    /// End of input (appended by [`tokenize`], never produced by logos).
    Eof,
}

/// A token with its byte span.
#[derive(Debug, Clone, Copy)]
pub struct Tok {
    /// The kind.
    pub kind: Token,
    /// Where it is.
    pub span: Span,
}

/// Splits `text` into tokens, ending with one [`Token::Eof`].
///
/// Fails with a positioned `SyntaxError` on characters that start no token,
/// unterminated strings, quoted names or comments.
pub fn tokenize(text: &str) -> Result<Vec<Tok>> {
    let mut out = Vec::with_capacity(text.len() / 4 + 1);
    let mut lexer = Token::lexer(text);
    while let Some(item) = lexer.next() {
        let span = lexer.span();
        let span = Span::new(span.start, span.end);
        match item {
            Ok(Token::Ident) if !text.as_bytes()[span.start..span.end].is_ascii() => {
                if let Some(bad) = invalid_name_char(&text[span.start..span.end]) {
                    return Err(lex_error(text, span.start + bad));
                }
                out.push(Tok {
                    kind: Token::Ident,
                    span,
                });
            }
            Ok(kind) => out.push(Tok { kind, span }),
            Err(()) => return Err(lex_error(text, span.start)),
        }
    }
    out.push(Tok {
        kind: Token::Eof,
        span: Span::new(text.len(), text.len()),
    });
    Ok(out)
}

/// The byte offset of the first character of a name that is not a letter,
/// digit or underscore (the first character may not be a digit).
fn invalid_name_char(name: &str) -> Option<usize> {
    name.char_indices()
        .find(|&(i, c)| !(c == '_' || c.is_alphabetic() || (i > 0 && c.is_numeric())))
        .map(|(i, _)| i)
}

fn lex_error(text: &str, offset: usize) -> rhizome_common::Error {
    let rest = &text[offset..];
    let ch = rest.chars().next().unwrap_or(' ');
    let (code, message) = match ch {
        '\'' | '"' => (
            "UnexpectedSyntax",
            "unterminated string literal".to_string(),
        ),
        '`' => ("UnexpectedSyntax", "unterminated quoted name".to_string()),
        '/' if rest.starts_with("/*") => ("UnexpectedSyntax", "unterminated comment".to_string()),
        c if !c.is_ascii() => (
            "InvalidUnicodeCharacter",
            format!("invalid character `{c}` (U+{:04X})", c as u32),
        ),
        c => ("UnexpectedSyntax", format!("unexpected character `{c}`")),
    };
    syntax_error(text, offset, code, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Token> {
        tokenize(text).unwrap().iter().map(|t| t.kind).collect()
    }

    #[test]
    fn lexes_ranges_numbers_and_comments() {
        use Token::*;
        assert_eq!(
            kinds("*1..3 // c\n 1.5e3 /* x */ .5 0x1F"),
            vec![Star, Number, DotDot, Number, Float, Float, Number, Eof]
        );
        assert_eq!(
            kinds("a<>b!=c=~d"),
            vec![Ident, Ne, Ident, Ne, Ident, RegexMatch, Ident, Eof]
        );
    }

    #[test]
    fn reports_bad_characters() {
        let e = tokenize("RETURN 42 — 41").unwrap_err();
        assert_eq!(e.code, Some("InvalidUnicodeCharacter"));
        assert_eq!(
            tokenize("RETURN 'abc")
                .unwrap_err()
                .position
                .unwrap()
                .column,
            8
        );
    }
}
