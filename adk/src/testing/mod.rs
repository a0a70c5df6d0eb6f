//! Test doubles for agents: a scripted model and simple tools; [`check_store`], the
//! conformance suite of checkpoint stores; and, with the feature `cassette`, recorded
//! traffic (`cassette`): a real model's calls recorded to a file and replayed.
//!
//! [`ScriptedModel`] answers each model call with the next scripted [`Turn`] (text, tool
//! calls, streamed chunks, an error, or an error in the middle of a stream) and records
//! every request it saw, including the tools it was shown. The functions below make small
//! tools for tests. tower-adk's own tests use exactly these; use them in yours.
//!
//! # Example
//!
//! ```
//! use tower_adk::{Agent, AgentRequest};
//! use tower_adk::testing::{echo_tool, ScriptedModel, Turn};
//! use serde_json::json;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedModel::new([
//!     Turn::call("c1", "echo", json!({"say": "hi"})).with_text("Let me echo that."),
//!     Turn::stream(["Done", ", bye."]),
//! ]);
//! let agent = Agent::builder(model.clone()).tool(echo_tool("echo")).build()?;
//! let result = agent.run(AgentRequest::user("echo hi")).await?;
//!
//! assert_eq!(result.final_message.content(), "Done, bye.");
//! assert_eq!(result.tool_records[0].content, r#"{"say":"hi"}"#);
//! // The second model call saw the tool's result.
//! assert_eq!(model.requests()[1].messages.last().unwrap().content(), r#"{"say":"hi"}"#);
//! assert_eq!(model.remaining(), 0);
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

#[cfg(feature = "cassette")]
pub mod cassette;
mod store;
mod tools;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use tower::{BoxError, Service};

pub use self::store::{CHECK_STORE_EXPIRY, check_store};
pub use self::tools::{chunk_tool, echo_tool, failing_tool, panicking_tool, sleep_tool, text_tool};
use crate::content::{Content, Part};
use crate::message::Message;
use crate::message::SmolStr;
use crate::message::ToolCall;
use crate::model::ModelDelta;
use crate::model::ModelRequest;
use crate::model::ModelResponse;
use crate::model::Usage;

/// One scripted answer of a [`ScriptedModel`].
#[derive(Debug, Clone)]
pub struct Turn {
    parts: Vec<Part>,
    chunks: Vec<String>,
    calls: Vec<ToolCall>,
    streamed: bool,
    delay: Option<Duration>,
    error: Option<String>,
    fails_at_call: bool,
    /// Boxed: the turns without (most) clone and move one word, not 80 bytes.
    usage: Option<Box<(Option<String>, Usage)>>,
}

impl Turn {
    fn empty() -> Self {
        Turn {
            parts: Vec::new(),
            chunks: Vec::new(),
            calls: Vec::new(),
            streamed: false,
            delay: None,
            error: None,
            fails_at_call: false,
            usage: None,
        }
    }

    /// A reply with this text, whole.
    pub fn text(text: impl Into<String>) -> Self {
        Turn {
            chunks: vec![text.into()],
            ..Turn::empty()
        }
    }

    /// A reply whose text streams in these chunks.
    pub fn stream<I>(chunks: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        Turn {
            chunks: chunks.into_iter().map(Into::into).collect(),
            streamed: true,
            ..Turn::empty()
        }
    }

    /// A reply that calls one tool.
    pub fn call(id: impl Into<SmolStr>, name: impl Into<SmolStr>, arguments: Value) -> Self {
        Turn::empty().with_call(id, name, arguments)
    }

    /// A reply that calls these tools.
    pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Turn {
            calls: calls.into_iter().collect(),
            ..Turn::empty()
        }
    }

    /// A model call that fails with this message.
    pub fn error(message: impl Into<String>) -> Self {
        Turn {
            error: Some(message.into()),
            fails_at_call: true,
            ..Turn::empty()
        }
    }

    /// Adds a tool call after the text.
    pub fn with_call(
        mut self,
        id: impl Into<SmolStr>,
        name: impl Into<SmolStr>,
        arguments: Value,
    ) -> Self {
        self.calls.push(ToolCall::new(id, name, arguments));
        self
    }

    /// Adds a tool call whose arguments are raw text (possibly malformed JSON).
    pub fn with_raw_call(
        mut self,
        id: impl Into<SmolStr>,
        name: impl Into<SmolStr>,
        arguments: impl Into<SmolStr>,
    ) -> Self {
        self.calls.push(ToolCall::raw(id, name, arguments));
        self
    }

    /// Adds a part before the text: a [`Part::Reasoning`] streams as
    /// [`ModelDelta::Reasoning`], any other part as [`ModelDelta::Part`].
    ///
    /// ```
    /// use tower_adk::content::{Part, Reasoning};
    /// use tower_adk::testing::Turn;
    ///
    /// let thinking = Reasoning::new("anthropic", "Weigh it.").with_data("signature", "c2ln");
    /// let turn = Turn::text("42").with_part(Part::Reasoning(thinking));
    /// # let _ = turn;
    /// ```
    pub fn with_part(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }

    /// Adds text before the tool calls.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.chunks.push(text.into());
        self
    }

    /// Streams the reply, one delta per text chunk and per call.
    pub fn streamed(mut self) -> Self {
        self.streamed = true;
        self
    }

    /// Waits this long before each streamed delta, or before returning a whole reply.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Reports what the reply used, and the model that answered: with a whole reply, as
    /// [`ModelResponse::with_usage`] does; streamed, as a last [`ModelDelta::Usage`].
    ///
    /// ```
    /// use tower_adk::model::Usage;
    /// use tower_adk::testing::{ScriptedModel, Turn};
    /// use tower_adk::{Agent, AgentRequest};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let turn = Turn::text("hi").with_usage(Some("small-1".into()), Usage::new(12, 3, 15));
    /// let agent = Agent::builder(ScriptedModel::new([turn])).build()?;
    /// let result = agent.run(AgentRequest::user("hello")).await?;
    /// assert_eq!(result.usage.total.prompt_tokens, 12);
    /// assert_eq!(result.usage.by_model["small-1"].completion_tokens, 3);
    /// # Ok::<_, tower_adk::BoxError>(())
    /// # }).unwrap();
    /// ```
    pub fn with_usage(mut self, model: Option<String>, usage: Usage) -> Self {
        self.usage = Some(Box::new((model, usage)));
        self
    }

    /// Streams the text, then fails with this message instead of finishing.
    pub fn then_error(mut self, message: impl Into<String>) -> Self {
        self.streamed = true;
        self.error = Some(message.into());
        self
    }

    /// The response; a whole (not streamed) reply is delayed before it is returned, so
    /// a timeout around the model sees the delay.
    async fn into_response(self) -> Result<ModelResponse, BoxError> {
        if self.fails_at_call {
            return Err(ScriptedError(self.error.unwrap_or_default()).into());
        }
        let delay = self.delay;
        if !self.streamed {
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            let text = self.chunks.concat();
            let content = if self.parts.is_empty() {
                Content::from(text)
            } else {
                let mut content = Content::from(self.parts);
                if !text.is_empty() {
                    content.push(Part::text(text));
                }
                content
            };
            let message = Message::assistant_with_calls(content, self.calls);
            let response = ModelResponse::message(message);
            return Ok(match self.usage.map(|usage| *usage) {
                Some((model, usage)) => response.with_usage(model, usage),
                None => response,
            });
        }
        let parts = self.parts.into_iter().map(|part| {
            Ok(match part {
                Part::Reasoning(reasoning) => ModelDelta::Reasoning(reasoning),
                part => ModelDelta::Part(part),
            })
        });
        let text = parts.chain(self.chunks.into_iter().map(|c| Ok(ModelDelta::Text(c))));
        let calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| Ok(ModelDelta::tool_call(i, c)));
        let usage = (self.usage.into_iter()).map(|usage| {
            Ok(ModelDelta::Usage {
                model: usage.0,
                usage: usage.1,
            })
        });
        let error = self.error.map(|e| Err(BoxError::from(ScriptedError(e))));
        let deltas = futures::stream::iter(text.chain(calls).chain(usage).chain(error)).then(
            move |delta| async move {
                if let Some(delay) = delay {
                    tokio::time::sleep(delay).await;
                }
                delta
            },
        );
        Ok(ModelResponse::stream(deltas))
    }
}

/// The error a scripted [`Turn::error`] or [`Turn::then_error`] fails with, and the error
/// of a call after the script ran out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScriptedError(pub String);

/// A model that answers with scripted turns and records what it was asked.
///
/// - [`ScriptedModel::new`] plays the script once, in order, across all calls: the
///   second call gets the second turn, whichever run makes it.
/// - [`ScriptedModel::per_run`] plays the whole script in every run: a call gets the
///   turn whose index is the number of assistant messages already in its history. Many
///   concurrent runs can share it.
///
/// Clones share the script and the record, so keep a clone to inspect after the run.
/// A call past the end of the script fails with a [`ScriptedError`].
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    turns: Arc<Mutex<VecDeque<Turn>>>,
    per_run: Option<Arc<[Turn]>>,
    requests: Option<Arc<Mutex<Vec<ModelRequest>>>>,
}

impl ScriptedModel {
    /// A model that will answer with these turns, once, in order.
    pub fn new(turns: impl IntoIterator<Item = Turn>) -> Self {
        ScriptedModel {
            turns: Arc::new(Mutex::new(turns.into_iter().collect())),
            per_run: None,
            requests: Some(Arc::default()),
        }
    }

    /// A model that plays these turns in every run, chosen by the history it is sent.
    pub fn per_run(turns: impl IntoIterator<Item = Turn>) -> Self {
        ScriptedModel {
            turns: Arc::default(),
            per_run: Some(turns.into_iter().collect()),
            requests: Some(Arc::default()),
        }
    }

    /// Stops recording requests (for benchmarks and long-running tests);
    /// [`requests`](Self::requests) is then empty and [`calls`](Self::calls) zero.
    pub fn without_records(mut self) -> Self {
        self.requests = None;
        self
    }

    /// Appends a turn to a [`new`](Self::new) script.
    pub fn push(&self, turn: Turn) {
        lock(&self.turns).push_back(turn);
    }

    /// Every request seen so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests
            .as_ref()
            .map(|r| lock(r).clone())
            .unwrap_or_default()
    }

    /// How many calls the model has received.
    pub fn calls(&self) -> usize {
        self.requests.as_ref().map_or(0, |r| lock(r).len())
    }

    /// How many turns of a [`new`](Self::new) script are left.
    pub fn remaining(&self) -> usize {
        lock(&self.turns).len()
    }
}

impl Default for ScriptedModel {
    /// An empty script that records requests, like `ScriptedModel::new([])`.
    fn default() -> Self {
        ScriptedModel::new([])
    }
}

impl Service<ModelRequest> for ScriptedModel {
    type Response = ModelResponse;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ModelResponse, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: ModelRequest) -> Self::Future {
        crate::telemetry::record_model("scripted", "scripted");
        let turn = match &self.per_run {
            Some(turns) => {
                let index = request.messages.iter().filter(|m| m.is_assistant()).count();
                turns.get(index).cloned()
            }
            None => lock(&self.turns).pop_front(),
        };
        if let Some(requests) = &self.requests {
            lock(requests).push(request);
        }
        async move {
            match turn {
                Some(turn) => turn.into_response().await,
                None => Err(ScriptedError("the scripted model has no turns left".into()).into()),
            }
        }
        .boxed()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
