//! Cancellation tokens: the scope tree below a query.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A node of the scope tree below a query: cancelling it cancels every token
/// created from it.
#[derive(Debug, Default)]
pub struct CancelToken {
    cancelled: AtomicBool,
    parent: Option<Arc<CancelToken>>,
}

impl CancelToken {
    /// A root token.
    pub fn root() -> Arc<CancelToken> {
        Arc::new(CancelToken::default())
    }

    /// A child: cancelled when it or any ancestor is.
    pub fn child(self: &Arc<CancelToken>) -> Arc<CancelToken> {
        Arc::new(CancelToken {
            cancelled: AtomicBool::new(false),
            parent: Some(self.clone()),
        })
    }

    /// Cancels this token and all its descendants.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }

    /// True if this token or an ancestor was cancelled.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        let mut token = self;
        loop {
            if token.cancelled.load(Ordering::Acquire) {
                return true;
            }
            match &token.parent {
                Some(p) => token = p,
                None => return false,
            }
        }
    }
}
