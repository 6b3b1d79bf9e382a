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
///
/// Work first runs on the caller's thread within [`STACK_BUDGET`]; if that
/// budget runs out before the depth limit does (unoptimised builds have large
/// frames), it is retried once on a helper thread with a [`BIG_STACK`] stack.
pub(crate) const STACK_BUDGET: usize = 768 * 1024;

/// Stack size of the helper thread used for deeply nested inputs.
pub(crate) const BIG_STACK: usize = 64 * 1024 * 1024;

/// An approximation of the current stack pointer.
#[inline(never)]
pub(crate) fn stack_pointer() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Remembers where a recursive walk started and tells when it has used more
/// than its budget of stack.
#[derive(Debug, Clone)]
pub(crate) struct StackGuard {
    base: usize,
    budget: usize,
    /// Set once the budget was found exhausted.
    pub(crate) tripped: std::cell::Cell<bool>,
}

impl StackGuard {
    /// A guard measuring from the current stack position.
    pub(crate) fn new(budget: usize) -> StackGuard {
        StackGuard {
            base: stack_pointer(),
            budget,
            tripped: std::cell::Cell::new(false),
        }
    }

    /// Whether the walk has used up its stack budget.
    pub(crate) fn exhausted(&self) -> bool {
        let out = self.base.abs_diff(stack_pointer()) > self.budget;
        if out {
            self.tripped.set(true);
        }
        out
    }
}

/// Runs `work(budget)` on this thread; if it ran out of stack (it returns
/// `true` as its second value), runs it again on a helper thread with a big
/// stack. Returns the first result if the helper thread cannot be started.
pub(crate) fn with_stack_fallback<T: Send>(work: impl Fn(usize) -> (T, bool) + Sync) -> T {
    let (result, tripped) = work(STACK_BUDGET);
    if !tripped {
        return result;
    }
    let retried = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(BIG_STACK)
            .spawn_scoped(scope, || work(BIG_STACK - 4 * 1024 * 1024).0)
            .ok()
            .and_then(|handle| handle.join().ok())
    });
    retried.unwrap_or(result)
}
