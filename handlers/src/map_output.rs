//! Transform a tool's output after the tool and its wrappers (a post-transform).

use std::fmt;
use std::sync::Arc;

use adk::{BoxError, ToolOutput, ToolStream};
use futures::{TryStreamExt, stream};

type TextFn = Arc<dyn Fn(String) -> String + Send + Sync>;

/// Transforms the output of each tool call. See [`map_output`] and [`map_output_chunks`].
///
/// # Example
///
/// ```
/// let handler: tower_adk::handlers::MapOutput = tower_adk::handlers::map_output(|text| text);
/// # let _ = handler;
/// ```
#[derive(Clone)]
pub struct MapOutput {
    f: TextFn,
    per_chunk: bool,
}

/// A handler that transforms the whole output text of each tool call, e.g. to redact
/// secrets or trim noise.
///
/// For a streamed call, `f` must see the whole text to be applied soundly (a secret may
/// straddle two chunks), so the stream is read to its end and the transformed text is
/// sent as one chunk: the caller sees no chunk of that call before the tool finishes.
/// Use [`map_output_chunks`] to keep streaming when the transform works chunk by chunk.
///
/// # Order
///
/// Register it before (outside) the tool wrappers whose output it should see, or add it
/// to a [`ToolGuard`](crate::ToolGuard), which runs post-transforms after the tool and
/// every inner wrapper by construction.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest};
/// use tower_adk::testing::{text_tool, ScriptedModel, Turn};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([Turn::call("c1", "env", json!({})), Turn::text("ok")]);
/// let agent = Agent::builder(model).tool(text_tool("env", "USER=ada TOKEN=s3cret")).build()?;
///
/// let redact = tower_adk::handlers::map_output(|text| text.replace("s3cret", "[redacted]"));
/// let result = agent.run(AgentRequest::user("env?").with_handler(redact)).await?;
///
/// assert_eq!(result.tool_records[0].content, "USER=ada TOKEN=[redacted]");
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub fn map_output<F>(f: F) -> MapOutput
where
    F: Fn(String) -> String + Send + Sync + 'static,
{
    MapOutput {
        f: Arc::new(f),
        per_chunk: false,
    }
}

/// A handler that transforms the output of each tool call chunk by chunk: each chunk of
/// a streamed call as it passes, lazily; the whole output of an invoked call at once.
///
/// Only sound for transforms that give the same text whether they see the output whole
/// or in pieces (mapping characters, say); for others, use [`map_output`].
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest};
/// use tower_adk::testing::{chunk_tool, ScriptedModel, Turn};
/// use serde_json::json;
/// use std::time::Duration;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([Turn::call("c1", "log", json!({})), Turn::text("ok")]);
/// let tool = chunk_tool("log", &["a\tb", "\tc"], Duration::ZERO);
/// let agent = Agent::builder(model).tool(tool).build()?;
///
/// let untab = tower_adk::handlers::map_output_chunks(|chunk| chunk.replace('\t', " "));
/// let result = agent.run(AgentRequest::user("log?").with_handler(untab)).await?;
///
/// assert_eq!(result.tool_records[0].content, "a b c");
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub fn map_output_chunks<F>(f: F) -> MapOutput
where
    F: Fn(String) -> String + Send + Sync + 'static,
{
    MapOutput {
        f: Arc::new(f),
        per_chunk: true,
    }
}

impl MapOutput {
    /// Transforms a whole output.
    pub(crate) fn output(&self, mut output: ToolOutput) -> ToolOutput {
        output.content = (self.f)(output.content);
        output
    }

    /// Transforms a stream: chunk by chunk, or whole (read to its end, sent as one chunk).
    pub(crate) fn stream(&self, chunks: ToolStream) -> ToolStream {
        let f = Arc::clone(&self.f);
        if self.per_chunk {
            return chunks.map_chunks(move |chunk| f(chunk));
        }
        chunks.wrap(|inner| {
            let whole = stream::once(async move {
                let text: String = inner.try_collect().await?;
                Ok::<_, BoxError>(f(text))
            });
            whole.try_filter(|text| std::future::ready(!text.is_empty()))
        })
    }
}

crate::output_stage::output_stage_handler!(MapOutput, |this| if this.per_chunk {
    "map_output_chunks"
} else {
    "map_output"
});

impl fmt::Debug for MapOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MapOutput")
            .field("per_chunk", &self.per_chunk)
            .finish_non_exhaustive()
    }
}
