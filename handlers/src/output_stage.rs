//! The `Handler` impl shared by the handlers that only change what a tool call returns.

/// Implements [`Handler`](adk::Handler) for a type with `output(&self, ToolOutput) ->
/// ToolOutput` and `stream(&self, ToolStream) -> ToolStream` methods: each tool call runs,
/// then its output or stream goes through them. `$name` is the handler's name, an
/// expression over `self`.
macro_rules! output_stage_handler {
    ($ty:ty, |$this:ident| $name:expr) => {
        impl adk::Handler for $ty {
            fn name(&self) -> std::borrow::Cow<'static, str> {
                let $this = self;
                std::borrow::Cow::Borrowed($name)
            }

            async fn wrap_tool_invoke(
                &self,
                request: adk::ToolRequest,
                next: adk::ToolNext,
            ) -> Result<adk::ToolOutput, adk::BoxError> {
                Ok(self.output(next.run(request).await?))
            }

            async fn wrap_tool_stream(
                &self,
                request: adk::ToolRequest,
                next: adk::StreamNext,
            ) -> Result<adk::ToolStream, adk::BoxError> {
                Ok(self.stream(next.run(request).await?))
            }
        }
    };
}

pub(crate) use output_stage_handler;
