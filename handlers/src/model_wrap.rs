//! Wrap each model call with an async closure.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;

use adk::{BoxError, Handler, ModelNext, ModelRequest, ModelResponse};

/// Wraps each model call. See [`wrap_model`].
#[derive(Clone)]
pub struct WrapModelFn<F> {
    f: F,
}

/// A handler that wraps each model call; changes to the request are for that call only.
///
/// # Example
///
/// ```
/// let count_messages = tower_adk::handlers::wrap_model(|req, next| async move {
///     println!("model call with {} messages", req.messages.len());
///     next.run(req).await
/// });
/// # let _ = count_messages;
/// ```
pub fn wrap_model<F, Fut>(f: F) -> WrapModelFn<F>
where
    F: Fn(ModelRequest, ModelNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ModelResponse, BoxError>> + Send + 'static,
{
    WrapModelFn { f }
}

impl<F, Fut> Handler for WrapModelFn<F>
where
    F: Fn(ModelRequest, ModelNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ModelResponse, BoxError>> + Send + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("wrap_model")
    }

    fn wrap_model(
        &self,
        request: ModelRequest,
        next: ModelNext,
    ) -> impl Future<Output = Result<ModelResponse, BoxError>> + Send {
        (self.f)(request, next)
    }
}

impl<F> fmt::Debug for WrapModelFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WrapModelFn").finish_non_exhaustive()
    }
}
