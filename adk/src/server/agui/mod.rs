//! The AG-UI route: `POST /agents/{name}/agui` takes AG-UI's `RunAgentInput` and streams
//! the run as AG-UI events, so AG-UI front ends (CopilotKit and the AG-UI clients) drive
//! the agent.
//!
//! The route sits beside the agent's own routes, behind the server's
//! [`Identify`](super::Identify) like them; its answer is always a stream (`text/event-stream`,
//! one `data:` line per event, no `event:` names, as AG-UI's HTTP transport reads it).
//! Field names and values below are those of AG-UI 1.0 as its SDK's models spell them
//! (the `ag-ui-protocol` package, whose models the tests validate every event with; the
//! tests also drive the route with `@ag-ui/client`'s `HttpAgent`, which verifies the
//! event sequence and builds the conversation from it).
//!
//! # Input
//!
//! `RunAgentInput` is `{threadId, runId, messages, tools, context, state,
//! forwardedProps, resume}`; only `threadId`, `runId` and `messages` are required.
//!
//! - `messages` are "the conversation so far": the run's input, after the agent's own
//!   instruction (`developer` and `system` as system messages, `user`, `assistant` with
//!   its `toolCalls`, `tool` with its `toolCallId`; other roles, such as `activity` and
//!   `reasoning`, are read past). The server keeps no thread for AG-UI runs: the client
//!   holds the conversation, as AG-UI intends.
//! - A user's or a tool's content is text or a list of parts: `text`, `image` and
//!   `document`, whose `source` is inline (`{type: "data", value, mimeType}`, base64) or
//!   a URL (`{type: "url", value, mimeType?}`, a `data:` URL read as inline bytes); they
//!   become the message's [`Part`](crate::content::Part)s (a document a file part,
//!   named by its `metadata.name` when it has one, as the route writes it). A
//!   part the server cannot read is refused with 400 `invalid_body`, naming it, never
//!   dropped: `audio` and `video`, a `file` source (a provider's handle, which AG-UI
//!   says a consumer must not fetch), and AG-UI 0.x's `binary`, which 1.0 retired.
//!   System and assistant content is text.
//! - `context` entries (`{description, value}`) come first, as one system message.
//! - `threadId`, `runId`, `state` and `forwardedProps` go into the run's extensions as an
//!   [`AgUiRun`], for handlers and tools to read.
//! - `tools` (the front end's tools) are not offered to the model: the agent calls its
//!   own tools.
//!
//! # Events
//!
//! | AG-UI event | from |
//! |---|---|
//! | `RUN_STARTED` `{threadId, runId}` | first, as soon as the run is started |
//! | `REASONING_START` `{messageId}`, `REASONING_MESSAGE_START` `{messageId, role: "reasoning"}`, `REASONING_MESSAGE_CONTENT` `{messageId, delta}`, `REASONING_MESSAGE_END` `{messageId}`, `REASONING_END` `{messageId}` | the model's reasoning, readable text only, as it streams (a turn whose reasoning did not stream sends each reasoning part's text whole, before the turn's text); the span ends when the turn's text starts or the turn ends |
//! | `TEXT_MESSAGE_START` `{messageId, role: "assistant"}`, `TEXT_MESSAGE_CONTENT` `{messageId, delta}`, `TEXT_MESSAGE_END` `{messageId}` | the model's text as it streams (a turn that does not stream sends its whole text as one content); its images and files as placeholders (below) |
//! | `TOOL_CALL_START` `{toolCallId, toolCallName, parentMessageId}`, `TOOL_CALL_ARGS` `{toolCallId, delta}`, `TOOL_CALL_END` `{toolCallId}` | each tool call of a model turn, once the turn is complete (the arguments as one delta) |
//! | `TOOL_CALL_RESULT` `{messageId, toolCallId, content, role: "tool"}` | each finished call (a failed one too: `content` is what the model read); a call that returned images or files has parts for `content` (below) |
//! | `CUSTOM` `{name: "cost", value: {usd, unpriced?}}` | just before `RUN_FINISHED`, when the agent has [prices](crate::agent::AgentBuilder::prices) and the run's model calls reported usage: what they cost (`unpriced` names the models the table has no price for) |
//! | `RUN_FINISHED` `{threadId, runId, result, outcome: {type: "success"}, usage?}` | a completed run; `result` is the final message's text (with placeholders) |
//! | `RUN_FINISHED` `{threadId, runId, outcome: {type: "interrupt", interrupts}, usage?}` | a run stopped at its interrupts (below) |
//! | `RUN_ERROR` `{message, code, usage?}` | a failed run, with the stable code of [`ApiError`] |
//!
//! Tool output chunks and filler messages have no AG-UI event and are not sent. A
//! request that is refused before its run starts (unknown agent, a body that is not a
//! `RunAgentInput`, resume ids this server did not send) gets the server's JSON error
//! and status instead of a stream; a run that fails once started, a refused resume
//! included (a used checkpoint, a missing decision), ends with `RUN_ERROR`.
//!
//! ## Reasoning
//!
//! Only the reasoning's readable text is sent: the provider's opaque data (Claude's
//! signatures, the Responses API's encrypted content, redacted blocks) stays in the
//! run's messages on the server, for the provider alone, and is never put in an event
//! (no `REASONING_ENCRYPTED_VALUE`, no `encryptedValue`). Reasoning that is all opaque
//! (redacted, encrypted) sends no reasoning events. The `@ag-ui/client` makes a
//! `reasoning` message of each reasoning message; sent back in a later input, it is
//! read past. AG-UI 1.0 has no `THINKING_*` events any more (they were 0.x's): these
//! are the `REASONING_*` ones that replaced them.
//!
//! ## Images and files
//!
//! AG-UI's assistant messages are text, so an image or a file that the model returned
//! is said in the text as a placeholder (`[an image: image/png, 1234 base64 bytes]`,
//! `[a file: report.pdf, https://...]`; see [`Part::placeholder`](crate::content::Part::placeholder)),
//! in the order of the turn's parts (after its text, when the text streamed). A tool
//! message can hold parts, so a call that returned images
//! or files has `content` `[{type: "text", text}, {type: "image", source}, {type:
//! "document", source, metadata: {name}}...]`, with the sources as in the input.
//!
//! ## Usage
//!
//! `RUN_FINISHED` (and `RUN_ERROR`, for the calls made before the failure) carry
//! AG-UI's `usage`: one `TokenUsage` per model, `{model?, inputTokens, outputTokens,
//! totalTokens, reasoningTokens?, cachedInputTokens?, cacheWriteInputTokens?}`, in
//! AG-UI's accounting, which is ours (the cache and reasoning counts are parts of the
//! input and output counts); `model` is absent for calls whose model gave no name. It is
//! left out when no call reported usage, rather than sent as zeros. As AG-UI asks, a run
//! that resumes an interrupted one counts only the calls it made itself. AG-UI has no
//! field for a cost, hence the `CUSTOM` `cost` event.
//!
//! # Interrupts and resume
//!
//! AG-UI 1.0: "A run that needs outside input ends with `RUN_FINISHED` whose `outcome` is
//! the interrupt outcome, carrying one or more `Interrupt` objects", and "Each
//! interrupt's id MUST be unique within the run; a resume entry answers it by this id."
//! Each of our [pending interrupts](crate::interrupt::PendingInterrupt) is one
//! `Interrupt`:
//!
//! - `id`: the run's checkpoint and the interrupt's own id, `CHECKPOINT|ID`: opaque to
//!   the client, and all the server needs to resume, in this process or another one that
//!   shares the agent's store;
//! - `reason`: `"tool_call"` for a tool call (with `toolCallId`), `"hook"` for a hook;
//! - `message`: the payload when it is a string, else its `message` or `question` field;
//! - `metadata`: `{"payload": the interrupt's payload, "adkInterruptId": its own id}`.
//!
//! The client resumes with a new run whose input carries `resume: [{interruptId, status,
//! payload}]`, one entry per interrupt (its `messages` are read past: the checkpoint
//! holds the conversation). Each entry becomes a [`Decision`](crate::interrupt::Decision):
//!
//! | entry | decision |
//! |---|---|
//! | `status: "cancelled"` | `Reject`, with `payload.reason` or "the user cancelled the call" |
//! | `resolved`, no payload, or `{"approved": true}` | `Approve` |
//! | `resolved`, `{"approved": false, "reason"?}` | `Reject` |
//! | `resolved`, `{"arguments": {...}}` (with or without `approved: true`) | `Edit` with those arguments |
//! | `resolved`, any other payload | `Respond` with the payload as the answer |
//!
//! # Example
//!
//! ```
//! use axum::body::Body;
//! use http::Request;
//! use tower::ServiceExt;
//! use tower_adk::Agent;
//! use tower_adk::server::Server;
//! use tower_adk::testing::{ScriptedModel, Turn};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let agent = Agent::builder(ScriptedModel::per_run([Turn::text("Hello!")])).build()?;
//! let router = Server::new().agent("greeter", agent).into_router();
//!
//! let input = r#"{"threadId": "t1", "runId": "r1", "messages": [{"id": "m1", "role": "user", "content": "Hi"}]}"#;
//! let response = router.oneshot(Request::post("/agents/greeter/agui").body(Body::from(input))?).await?;
//! let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await?;
//! let types: Vec<String> = String::from_utf8(bytes.to_vec())?
//!     .lines()
//!     .filter_map(|line| line.strip_prefix("data: "))
//!     .map(|data| serde_json::from_str::<serde_json::Value>(data).unwrap()["type"].as_str().unwrap().to_owned())
//!     .collect();
//! assert_eq!(types, [
//!     "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED",
//! ]);
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod content;
mod events;
mod input;
mod translate;

use std::convert::Infallible;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use serde_json::Value;

use self::events::AgUiEvent;
pub(crate) use self::input::RunAgentInput;
use self::translate::Translate;
use super::error::ApiError;
use super::extract::{Body, Path};
use super::identity::Caller;
use super::served_run::ServedRun;
use super::state::AppState;

/// The AG-UI input of a run started through `POST /agents/{name}/agui`, in the run's
/// extensions: what a handler or a tool reads of the front end's state.
///
/// ```
/// use tower_adk::RunContext;
/// use tower_adk::server::agui::AgUiRun;
///
/// fn thread_of(ctx: &RunContext) -> Option<&str> {
///     ctx.extensions().get::<AgUiRun>().map(|run| run.thread_id.as_str())
/// }
/// # let _ = thread_of;
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AgUiRun {
    /// The input's `threadId`.
    pub thread_id: String,
    /// The input's `runId`.
    pub run_id: String,
    /// The input's `state` (`null` when it has none).
    pub state: Value,
    /// The input's `forwardedProps` (`null` when it has none).
    pub forwarded_props: Value,
}

/// `POST /agents/{name}/agui`: a run, streamed as AG-UI events.
pub(crate) async fn run(
    State(state): State<AppState>,
    Path(name): Path<String>,
    axum::Extension(caller): axum::Extension<Caller>,
    Body(body): Body,
) -> Result<Response, ApiError> {
    let served = state.served(&name)?;
    let input = RunAgentInput::parse(&body)?;
    let prices = served.agent.prices().cloned();
    let translate = Translate::new(input.thread_id.clone(), input.run_id.clone(), prices);
    let request = input.into_request()?;
    let request = request.with_identity(caller.0);
    let run = state.start(served, request).await?;
    let events = stream(translate, run).map(|event| {
        let data = serde_json::to_string(&event).unwrap_or_default();
        Ok::<_, Infallible>(Event::default().data(data))
    });
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// `RUN_STARTED`, the run's events, then `RUN_FINISHED` or `RUN_ERROR`. Dropping it (the
/// client went away) drops the run.
fn stream(mut translate: Translate, mut run: ServedRun) -> impl Stream<Item = AgUiEvent> {
    async_stream::stream! {
        yield translate.started();
        while let Some(event) = run.next().await {
            match event {
                Ok(event) => {
                    for event in translate.on_event(&event) {
                        yield event;
                    }
                }
                Err(error) => {
                    yield translate.error(&error);
                    return;
                }
            }
        }
    }
}
