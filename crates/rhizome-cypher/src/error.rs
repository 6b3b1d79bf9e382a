//! Helpers that build positioned [`Error`]s for the front end.

use crate::ast::Span;
use rhizome_common::{Error, ErrorKind, Position};

/// A `SyntaxError` with detail `code` at byte `offset` of `text`.
pub fn syntax_error(
    text: &str,
    offset: usize,
    code: &'static str,
    message: impl Into<String>,
) -> Error {
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

/// Stack used by recursive descent is bounded both by nesting depth and by
/// measured stack consumption, so that deep inputs fail cleanly whatever the
/// build profile's frame sizes and on threads with small (2 MiB) stacks.
pub(crate) const STACK_BUDGET: usize = 768 * 1024;

/// An approximation of the current stack pointer.
#[inline(never)]
pub(crate) fn stack_pointer() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Remembers where a recursive walk started and tells when it has used more
/// than [`STACK_BUDGET`] bytes of stack.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StackGuard {
    base: usize,
}

impl StackGuard {
    /// A guard measuring from the current stack position.
    pub(crate) fn new() -> StackGuard {
        StackGuard {
            base: stack_pointer(),
        }
    }

    /// Whether the walk has used up its stack budget.
    pub(crate) fn exhausted(&self) -> bool {
        self.base.abs_diff(stack_pointer()) > STACK_BUDGET
    }
}
