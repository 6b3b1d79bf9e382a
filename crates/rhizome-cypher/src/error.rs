//! Helpers that build positioned [`Error`]s for the front end.

use crate::ast::Span;
use rhizome_common::{Error, ErrorKind, Position};

/// A `SyntaxError` with detail `code` at byte `offset` of `text`.
pub fn syntax_error(text: &str, offset: usize, code: &'static str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::SyntaxError, message)
        .with_code(code)
        .at(Position::from_offset(text, offset))
}

/// An error of `kind` with detail `code` at the start of `span` in `text`.
pub fn error_at(
    text: &str,
    span: Span,
    kind: ErrorKind,
    code: &'static str,
    message: impl Into<String>,
) -> Error {
    Error::new(kind, message)
        .with_code(code)
        .at(Position::from_offset(text, span.start))
}
