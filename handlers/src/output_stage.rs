//! The `Handler` impl shared by the handlers that only change what a tool call returns.

/// Implements [`Handler`](adk::Handler) for a type with `output(&self, ToolOutput) ->
/// ToolOutput` and `stream(&self, ToolStream) -> ToolStream` methods: each tool call runs,
/// then its output or stream goes through them, in one `wrap_tool` hook. `$name` is the handler's name, an
/// expression over `self`.
macro_rules! output_stage_handler {
    ($ty:ty, |$this:ident| $name:expr) => {
        impl adk::Handler for $ty {
            fn name(&self) -> std::borrow::Cow<'static, str> {
                let $this = self;
                std::borrow::Cow::Borrowed($name)
            }

            async fn wrap_tool(
                &self,
                request: adk::ToolRequest,
                next: adk::ToolCallNext,
            ) -> Result<adk::ToolResponse, adk::BoxError> {
                Ok(match next.run(request).await? {
                    adk::ToolResponse::Output(output) => {
                        adk::ToolResponse::Output(self.output(output))
                    }
                    adk::ToolResponse::Stream(chunks) => {
                        adk::ToolResponse::Stream(self.stream(chunks))
                    }
                })
            }
        }
    };
}

pub(crate) use output_stage_handler;
