//! Wrap each tool call with an async closure.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;

use adk::{BoxError, Handler, StreamNext, ToolNext, ToolOutput, ToolRequest, ToolStream};

/// Wraps each whole tool call. See [`wrap_tool_invoke`].
#[derive(Clone)]
pub struct WrapToolInvokeFn<F> {
    f: F,
}

/// Wraps each streamed tool call. See [`wrap_tool_stream`].
#[derive(Clone)]
pub struct WrapToolStreamFn<F> {
    f: F,
}

/// A handler that wraps each whole (non-streamed) tool call: the closure gets the request
/// (tool name, call id, parsed arguments, the run's extensions) and the rest of the chain,
/// and may change the arguments, the output, or answer without calling the tool.
///
/// # Example
///
/// ```
/// use tower_adk::ToolOutput;
///
/// let log = tower_adk::handlers::wrap_tool_invoke(|req, next| async move {
///     println!("-> {} {}", req.name, req.arguments);
///     let output = next.run(req).await?;
///     println!("<- {}", output.content);
///     Ok(output)
/// });
/// # let _ = log;
/// ```
pub fn wrap_tool_invoke<F, Fut>(f: F) -> WrapToolInvokeFn<F>
where
    F: Fn(ToolRequest, ToolNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, BoxError>> + Send + 'static,
{
    WrapToolInvokeFn { f }
}

/// A handler that wraps each streamed tool call; the closure may transform the stream
/// chunk by chunk, lazily (see [`ToolStream::map_chunks`]).
///
/// # Example
///
/// ```
/// let shout = tower_adk::handlers::wrap_tool_stream(|req, next| async move {
///     Ok(next.run(req).await?.map_chunks(|chunk| chunk.to_uppercase()))
/// });
/// # let _ = shout;
/// ```
pub fn wrap_tool_stream<F, Fut>(f: F) -> WrapToolStreamFn<F>
where
    F: Fn(ToolRequest, StreamNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolStream, BoxError>> + Send + 'static,
{
    WrapToolStreamFn { f }
}

impl<F, Fut> Handler for WrapToolInvokeFn<F>
where
    F: Fn(ToolRequest, ToolNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, BoxError>> + Send + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("wrap_tool_invoke")
    }

    fn wrap_tool_invoke(
        &self,
        request: ToolRequest,
        next: ToolNext,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        (self.f)(request, next)
    }
}

impl<F, Fut> Handler for WrapToolStreamFn<F>
where
    F: Fn(ToolRequest, StreamNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolStream, BoxError>> + Send + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("wrap_tool_stream")
    }

    fn wrap_tool_stream(
        &self,
        request: ToolRequest,
        next: StreamNext,
    ) -> impl Future<Output = Result<ToolStream, BoxError>> + Send {
        (self.f)(request, next)
    }
}

impl<F> fmt::Debug for WrapToolInvokeFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WrapToolInvokeFn").finish_non_exhaustive()
    }
}

impl<F> fmt::Debug for WrapToolStreamFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WrapToolStreamFn").finish_non_exhaustive()
    }
}
