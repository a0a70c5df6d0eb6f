//! The OpenAI-compatible routes: every agent of a [`Server`](super::Server) is a model
//! that any OpenAI SDK can call.
//!
//! | route | what |
//! |---|---|
//! | `GET /v1/models` | `{"object": "list", "data": [{"id": NAME, "object": "model", "created", "owned_by": "tower-adk"}]}`, one per agent |
//! | `POST /v1/chat/completions` | runs the agent named by `model` on `messages`: one `chat.completion`, or with `"stream": true` a stream of `chat.completion.chunk`s ending with `data: [DONE]` |
//!
//! They are on every server's router, behind its [`Identify`](super::Identify) like the
//! agent routes (the OpenAI SDKs send their API key as `Authorization: Bearer KEY`, which
//! [`BearerTokens`](super::BearerTokens) reads).
//!
//! # Requests
//!
//! `messages` become the run's input, after the agent's own instruction: `system` and
//! `developer` messages as system messages, `user`, `assistant` (with its `tool_calls`)
//! and `tool` messages as they are. A user's or a tool's content is text or a list of
//! parts: `text`, `image_url` (a URL, or a `data:` URL read as inline bytes) and `file`
//! (inline, as `file_data`), which become the message's
//! [`Part`](crate::content::Part)s; other parts (`input_audio`, a `file` by `file_id`)
//! are refused with 400 `invalid_body`, naming them. System and assistant content is
//! text. Sampling options (`temperature`, `max_tokens`, ...) and `tools` are read past:
//! the agent has its own model options and tools, and calls its tools inside the run;
//! the client sees the answer.
//!
//! # Answers
//!
//! Without `stream`, the `chat.completion`'s message is the run's final message. With it,
//! the chunks carry the model's text as it streams, turn by turn (text the model says
//! before it calls tools comes too, a blank line before the next turn's text), then a
//! chunk with `finish_reason: "stop"`, then, if `stream_options.include_usage` asked for
//! it, a chunk with `usage`: the run's, summed over its model calls as they reported
//! it. The model's reasoning, when it shows it, streams as `delta.reasoning_content`
//! (as DeepSeek, vLLM and OpenRouter send it), turn by turn (a blank line between turns;
//! a turn whose reasoning did not stream sends it whole); the whole completion has
//! the final reply's as `message.reasoning_content`. Only its readable text is sent,
//! never the provider's opaque data (signatures, encrypted content).
//!
//! A chat completion's message is text, so an image or a file in the model's reply is
//! said in the content as a placeholder (`[an image: image/png, 1234 base64 bytes]`,
//! `[a file: report.pdf, https://...]`; see
//! [`Part::placeholder`](crate::content::Part::placeholder)), in the order of the
//! reply's parts (after its text, when the text streamed).
//! The agent's tool calls and their results are not part of the answer at all (the
//! client asked the agent, not its tools), images they returned included.
//!
//! # Interrupted runs
//!
//! A run that stops at an [interrupt](crate::interrupt) ends as an answer too, with
//! `finish_reason: "stop"`: its content says which interrupts wait and how to resume,
//! and an extension field, `adk_interrupt`, on the `chat.completion` (streamed: on the
//! last chunk) holds `{"checkpoint": "...", "interrupts": [...]}` (each a
//! [`PendingInterrupt`](crate::interrupt::PendingInterrupt)). The run is resumed through
//! `POST /agents/{name}/runs` with `{"resume": {"checkpoint", "decisions"}}`: the chat
//! completions API has no way to carry decisions.
//!
//! # Errors
//!
//! Errors are in the OpenAI API's shape, `{"error": {"message", "type", "param",
//! "code"}}`, with the server's status and stable code ([`ApiError`]):
//! an unknown `model` is 404 `model_not_found`, a refused key 401 `invalid_api_key`
//! (`type` `authentication_error`, which the `openai` package raises as
//! `AuthenticationError`), a body that does not parse 400 `invalid_body`. A streamed run
//! that fails after its first chunk sends the error as a last chunk, `data: {"error":
//! {...}}`, which the SDKs raise as an API error.
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
//! let body = r#"{"model": "greeter", "messages": [{"role": "user", "content": "Hi"}]}"#;
//! let request = Request::post("/v1/chat/completions").body(Body::from(body))?;
//! let response = router.oneshot(request).await?;
//! let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await?;
//! let completion: serde_json::Value = serde_json::from_slice(&bytes)?;
//! assert_eq!(completion["object"], "chat.completion");
//! assert_eq!(completion["choices"][0]["message"]["content"], "Hello!");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! From Python, with the `openai` package:
//!
//! ```python
//! from openai import OpenAI
//!
//! client = OpenAI(base_url="http://127.0.0.1:3000/v1", api_key="t0ken")
//! reply = client.chat.completions.create(
//!     model="greeter", messages=[{"role": "user", "content": "Hi"}]
//! )
//! print(reply.choices[0].message.content)
//! ```

mod error;
mod request;
mod response;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};

use self::error::OpenAiError;
pub(crate) use self::request::ChatRequest;
use self::response::{Chunks, Envelope};
use super::error::ApiError;
use super::extract::Body;
use super::identity::{Caller, Rejection};
use super::limit::PrincipalRate;
use super::served_run::ServedRun;
use super::state::AppState;
use crate::agent::AgentError;
use crate::agent::AgentEvent;

/// `GET /v1/models`: the agents, as models.
pub(crate) async fn models(State(state): State<AppState>) -> Response {
    let data: Vec<Value> = state
        .agents
        .keys()
        .map(|name| {
            json!({"id": name, "object": "model", "created": state.created, "owned_by": "tower-adk"})
        })
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

/// `POST /v1/chat/completions`: a run of the agent named by `model`.
pub(crate) async fn chat_completions(
    State(state): State<AppState>,
    axum::Extension(caller): axum::Extension<Caller>,
    body: Result<Body, ApiError>,
) -> Result<Response, OpenAiError> {
    let Body(body) = body?;
    let chat = ChatRequest::parse(&body)?;
    let served = state
        .served(&chat.model)
        .map_err(|_| OpenAiError::unknown_model(&chat.model))?;
    let request = chat.to_agent_request()?;
    let request = request.with_identity(caller.0);
    let mut run = state.start(served, request).await?;
    let envelope = Envelope::new(&chat.model);
    if !chat.stream {
        let result = run.result().await.map_err(|e| OpenAiError::from(&e))?;
        return Ok(Json(envelope.completion(&result)).into_response());
    }
    // The response starts with the run's first event, so that a run refused at its
    // start is answered with its status.
    let first = match run.next().await {
        Some(Ok(event)) => event,
        Some(Err(error)) => return Err(OpenAiError::from(&error)),
        None => return Err(OpenAiError::from(&AgentError::Incomplete)),
    };
    let chunks = chunks(Chunks::new(envelope), first, run, chat.include_usage());
    let events = chunks.map(|data| Ok::<_, Infallible>(Event::default().data(data)));
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// The SSE `data` of a streamed completion: its chunks, the usage chunk if asked for,
/// then `[DONE]`. Dropping it (the client went away) drops the run.
fn chunks(
    mut chunks: Chunks,
    first: AgentEvent,
    mut run: ServedRun,
    include_usage: bool,
) -> impl Stream<Item = String> {
    async_stream::stream! {
        for chunk in chunks.on_event(&first) {
            yield chunk.to_string();
        }
        while let Some(event) = run.next().await {
            match event {
                Ok(event) => {
                    for chunk in chunks.on_event(&event) {
                        yield chunk.to_string();
                    }
                }
                Err(error) => {
                    yield OpenAiError::from(&error).body().to_string();
                    return;
                }
            }
        }
        if include_usage {
            yield chunks.usage_chunk().to_string();
        }
        yield "[DONE]".to_owned();
    }
}

/// A refusal of the OpenAI routes' identity middleware: as the agent routes', in the
/// OpenAI error shape.
pub(crate) fn refuse(rejection: Rejection) -> Response {
    OpenAiError::from(rejection).into_response()
}

/// The rate middleware of the OpenAI routes: as the agent routes', with a refusal in
/// the OpenAI error shape (`type` `rate_limit_error`).
pub(crate) async fn require_rate(
    State(rate): State<Arc<PrincipalRate>>,
    request: Request,
    next: Next,
) -> Response {
    match rate.check(&request) {
        Ok(()) => next.run(request).await,
        Err(refused) => OpenAiError::from(refused).into_response(),
    }
}

/// Seconds since the Unix epoch (the `created` of models and completions).
pub(crate) fn unix_now() -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH);
    now.map(|d| d.as_secs()).unwrap_or_default()
}
