//! [`ToolResultOffload`]: context editing. Old, large tool results leave the history,
//! and the model can read them back with a tool.

mod read;

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use adk::{AgentConfig, BoxError, Handler, History, Locals, Message, RunContext};
use serde_json::{Map, Value};

use crate::tokens::{CharEstimate, TokenCounter};

/// The name of the tool that reads an offloaded result back.
pub const READ_TOOL: &str = "read_tool_result";

/// Where the offloaded results are kept: the run-local value with this key, an object
/// of the results' text by call id.
pub const STORE_KEY: &str = "tower_adk.offloaded_tool_results";

/// A handler that edits the context: before each model call, tool results that are both
/// old (not among the [`keep_recent`](ToolResultOffload::keep_recent) most recent,
/// default 3) and large (over [`min_tokens`](ToolResultOffload::min_tokens), default
/// 500) are taken out of the history and replaced by a short reference:
///
/// ```text
/// [offloaded: the result of `search` (1834 tokens). Call read_tool_result with {"id": "call_7"} to read it again.]
/// ```
///
/// - **Offload** (the default): the result's text is kept in the run-local values
///   (under [`STORE_KEY`]), so it survives checkpoints (interrupt and resume, durable
///   runs); on a thread it goes on to the thread's next runs (its values). The handler
///   adds a `read_tool_result` tool (in `before_agent`) that gives it back, by the call
///   id, as a new, recent tool result.
/// - **Clear** ([`clear`](ToolResultOffload::clear)): the text is dropped; the reference
///   says so, and no tool is added.
///
/// The store grows with the run (and the thread): a result stays readable after a
/// [`Summarizer`](crate::Summarizer) folded its reference into a summary.
///
/// The call and its result stay paired: only the result's text changes. The run's
/// history changes for good (later turns and the result see the reference), and a
/// result is offloaded once. Register it before a [`Summarizer`](crate::Summarizer),
/// which then summarises the lighter history.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::ToolResultOffload;
/// use tower_adk::testing::{text_tool, ScriptedModel, Turn};
/// use tower_adk::{Agent, AgentRequest};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     Turn::call("c1", "report", json!({})),
///     Turn::call("c2", "report", json!({})),
///     Turn::call("c3", "read_tool_result", json!({"id": "c1"})),
///     Turn::text("done"),
/// ]);
/// let agent = Agent::builder(model.clone()).tool(text_tool("report", &"data ".repeat(100))).build()?;
/// let offload = ToolResultOffload::new().keep_recent(1).min_tokens(50);
/// let result = agent.run(AgentRequest::user("report twice").with_handler(offload)).await?;
///
/// let third = &model.requests()[2].messages;
/// assert!(third[2].content().starts_with("[offloaded: the result of `report`"));
/// assert_eq!(third[4].content(), "data ".repeat(100)); // the recent one stays
/// assert_eq!(result.tool_records[2].content, "data ".repeat(100)); // read back
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct ToolResultOffload {
    counter: Arc<dyn TokenCounter>,
    keep_recent: usize,
    min_tokens: usize,
    store: bool,
}

impl ToolResultOffload {
    /// Offloads results over 500 tokens once 3 newer results follow them.
    pub fn new() -> Self {
        ToolResultOffload {
            counter: Arc::new(CharEstimate),
            keep_recent: 3,
            min_tokens: 500,
            store: true,
        }
    }

    /// How many of the most recent tool results stay as they are.
    pub fn keep_recent(mut self, results: usize) -> Self {
        self.keep_recent = results;
        self
    }

    /// Results with more tokens than this are offloaded once old.
    pub fn min_tokens(mut self, tokens: usize) -> Self {
        self.min_tokens = tokens;
        self
    }

    /// Counts tokens with this counter (default [`CharEstimate`]).
    pub fn counter(mut self, counter: impl TokenCounter) -> Self {
        self.counter = Arc::new(counter);
        self
    }

    /// Drops old large results instead of keeping them to read back.
    pub fn clear(mut self) -> Self {
        self.store = false;
        self
    }

    /// The reference that replaces a result.
    fn reference(&self, call_id: &str, name: &str, tokens: usize) -> String {
        if self.store {
            format!(
                "[offloaded: the result of `{name}` ({tokens} tokens). Call {READ_TOOL} with \
                 {{\"id\": \"{call_id}\"}} to read it again.]"
            )
        } else {
            format!("[cleared: the result of `{name}` ({tokens} tokens) is no longer available.]")
        }
    }
}

impl Default for ToolResultOffload {
    fn default() -> Self {
        ToolResultOffload::new()
    }
}

impl Handler for ToolResultOffload {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("tool_result_offload")
    }

    async fn before_agent(
        &self,
        cx: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        if self.store {
            config.add_tool(read::tool());
            // The thread's earlier runs' results, for this run's tool to read.
            if let Some(earlier) = cx.thread_values_mut().remove(STORE_KEY) {
                merge(cx.locals_mut(), earlier)?;
            }
        }
        Ok(config)
    }

    async fn before_model(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), BoxError> {
        let results = history
            .messages
            .iter()
            .filter(|m| m.tool_call_id().is_some());
        let old = results.count().saturating_sub(self.keep_recent);
        let mut offloaded = Map::new();
        let mut seen = 0;
        let mut edits = Vec::new();
        for (at, message) in history.messages.iter().enumerate() {
            let Message::Tool {
                call_id,
                name,
                content,
                ..
            } = message
            else {
                continue;
            };
            seen += 1;
            if seen > old {
                break;
            }
            if content.starts_with("[offloaded: ") || content.starts_with("[cleared: ") {
                continue;
            }
            // An image or a file a tool returned is the model's to see: only text goes.
            if !content.is_text() {
                continue;
            }
            // A token is at least a byte: a short text need not be counted.
            if content.len() <= self.min_tokens {
                continue;
            }
            let tokens = self.counter.count(content);
            if tokens <= self.min_tokens {
                continue;
            }
            if self.store {
                offloaded.insert(
                    call_id.to_string(),
                    Value::String(content.all_text().into()),
                );
            }
            edits.push((at, self.reference(call_id, name, tokens)));
        }
        if edits.is_empty() {
            return Ok(());
        }
        let messages = history.messages.to_mut();
        for (at, reference) in edits {
            if let Message::Tool { content, .. } = &mut messages[at] {
                *content = reference.into();
            }
        }
        if !offloaded.is_empty() {
            merge(cx.locals_mut(), Value::Object(offloaded))?;
        }
        Ok(())
    }

    async fn after_agent(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        // The thread's next run reads them from the thread's values.
        if let Some(results) = cx.locals_mut().remove(STORE_KEY) {
            cx.thread_values_mut().insert(STORE_KEY, &results)?;
        }
        Ok(())
    }
}

/// Adds `more` (an object of results by call id) to the run's store.
fn merge(locals: &mut Locals, more: Value) -> Result<(), serde_json::Error> {
    let Value::Object(more) = more else {
        return Ok(());
    };
    let mut store = match locals.remove(STORE_KEY) {
        Some(Value::Object(store)) => store,
        _ => Map::new(),
    };
    store.extend(more);
    locals.insert(STORE_KEY, &store)
}

impl fmt::Debug for ToolResultOffload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolResultOffload")
            .field("keep_recent", &self.keep_recent)
            .field("min_tokens", &self.min_tokens)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}
