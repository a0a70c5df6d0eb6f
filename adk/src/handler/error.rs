//! [`HandlerError`]: the error of a handler's hook that failed or panicked, naming the
//! hook and the handler.

use std::borrow::Cow;

use tower::BoxError;

use crate::hook::Hook;

/// A hook of a handler failed: it returned an error, or it panicked
/// ([`is_panic`](HandlerError::is_panic)).
#[derive(Debug, thiserror::Error)]
#[error("handler `{handler}` failed in {hook}: {source}")]
pub struct HandlerError {
    hook: Hook,
    handler: Cow<'static, str>,
    #[source]
    source: BoxError,
}

impl HandlerError {
    /// The error of the handler named `handler` at `hook`.
    pub(crate) fn new(hook: Hook, handler: Cow<'static, str>, source: BoxError) -> Self {
        HandlerError {
            hook,
            handler,
            source,
        }
    }

    /// The hook that failed.
    pub fn hook(&self) -> Hook {
        self.hook
    }

    /// The name of the handler whose hook failed.
    pub fn handler(&self) -> &str {
        &self.handler
    }

    /// Whether the hook panicked (the panic was caught: only this run ended). The
    /// source is then a [`Panicked`](crate::Panicked) with the panic's message.
    pub fn is_panic(&self) -> bool {
        self.source.is::<crate::error::Panicked>()
    }

    /// The interrupt the hook returned, if it interrupted the run (see
    /// [`interrupt`](crate::interrupt)).
    pub fn interrupt(&self) -> Option<&crate::interrupt::Interrupt> {
        self.source.downcast_ref()
    }

    /// The error the hook returned.
    pub fn into_source(self) -> BoxError {
        self.source
    }
}
