//! Agents served over the Agent2Agent protocol (A2A v1.0, features `a2a` and `server`):
//! each agent's card and a JSON-RPC endpoint on the server's router, so that A2A clients
//! (`a2a-sdk`'s, `@a2a-js/sdk`'s, Google ADK's `RemoteA2aAgent`) call our agents with
//! their threads, approvals and owner rules intact.
//!
//! Turn it on with [`Server::a2a`](crate::server::Server::a2a):
//!
//! | route | what |
//! |---|---|
//! | `GET /agents/{name}/.well-known/agent-card.json` | the agent's card (so `A2ACardResolver("http://HOST/agents/NAME")` finds it) |
//! | `POST /agents/{name}/a2a` | its JSON-RPC endpoint |
//! | `GET /.well-known/agent-card.json`, `POST /a2a` | the same for the [root](A2a::root) agent, when one is chosen |
//!
//! The cards are served to anyone (they describe the agent as an anonymous caller would
//! see it); the endpoints go through the server's [`Identify`](crate::server::Identify)
//! (401 when it refuses), its limits and body bounds, like every agent route.
//!
//! # The card
//!
//! The agent's name and description ([`ServedAgent::description`](crate::server::ServedAgent::description)),
//! the [version](A2a::version), one JSON-RPC interface (`protocolVersion` `1.0`) at the
//! [base URL](A2a::base_url) (by default the request's `Host`, `https` when
//! `X-Forwarded-Proto` says so), capabilities `streaming: true`, `pushNotifications:
//! false`, text in and out, and one skill per tool that an anonymous caller's runs would
//! give the model (the view of `GET /agents`: a role filter hides the tools it hides).
//! When the server's `Identify` says it takes bearer tokens ([`Identify::scheme`](crate::server::Identify::scheme)),
//! the card names a `bearer` HTTP scheme and requires it.
//!
//! # Tasks
//!
//! A task is a run on a thread: its `contextId` is our thread (a message without one
//! starts a new thread, whose id the task gives back), its `taskId` the server's id for
//! the run. A message without `taskId` starts a run on its context; a message with the
//! `taskId` of an input-required task resumes it. Methods:
//!
//! - `SendMessage`: the task at its end, or where it waits for input
//!   (`configuration.historyLength` honoured; `returnImmediately` is not: the answer
//!   comes at the end).
//! - `SendStreamingMessage`: server-sent events, each `data:` a JSON-RPC response whose
//!   result is a `StreamResponse`: the `task`, a `statusUpdate` `TASK_STATE_WORKING`,
//!   `artifactUpdate`s of the artifact `answer` as the model's text streams (`append`
//!   after the first; a last empty chunk with `lastChunk`), then the final
//!   `statusUpdate`: `COMPLETED` (its message the final answer), `INPUT_REQUIRED`,
//!   `FAILED` (its message says why: text, and `{"error": {"code", "message"}}` as data)
//!   or `CANCELED`.
//! - `GetTask` (`historyLength` honoured), `CancelTask`.
//! - Others: `SubscribeToTask` and `ListTasks` are `UnsupportedOperation` (-32004), the
//!   push notification methods `PushNotificationNotSupported` (-32003),
//!   `GetExtendedAgentCard` `ExtendedAgentCardNotConfigured` (-32007); any other name,
//!   A2A v0.3's `message/send` and `tasks/get` among them, `MethodNotFound` (-32601).
//!
//! The artifact `answer` holds the text the model streamed (the final answer, and any
//! text of turns that called tools); a task's history holds the caller's messages and
//! the agent's final or input-required message.
//!
//! # Interrupts
//!
//! A run that stops at interrupts leaves its task `TASK_STATE_INPUT_REQUIRED`; the
//! status message says what each waits for (text: each payload's `description` or
//! `question`) and carries the interrupts in our wire form as a data part:
//! `{"interrupts": [{"id", "call", "payload"}]}` (an approval's payload lists its
//! `allowed` decisions). The next message on the task resumes it with a data part
//! `{"decisions": {"INTERRUPT ID": {"type": "approve"}}}` (a
//! [`Decision`](crate::interrupt::Decision) per interrupt). A text-only reply, when one
//! interrupt waits and its payload allows `respond` (or lists nothing), is read as the
//! answer (`{"type": "respond", "answer": TEXT}`). Decisions that do not read or do not
//! fit are `InvalidParams` (-32602), and nothing runs: the task still waits.
//!
//! # Identity and owners
//!
//! The caller's identity goes into every run, as on our routes. A task belongs to the
//! principal whose message started it: another principal's task is `TaskNotFound`
//! (-32001) for `GetTask`, `CancelTask` and messages, unless the agent's
//! [`Authorize`](crate::auth::Authorize) lets that principal read the task's thread
//! (`GetTask`) or decide on its interrupts (a resume, which the core checks as on our
//! resume route: the run goes on as its requester's). A message on another principal's
//! context is `TaskNotFound` too, and nothing runs or is written.
//!
//! # Cancel and disconnects
//!
//! `CancelTask` on a working task cancels its run (which leaves its thread's
//! checkpoint, as on a disconnect) and answers once the task is `CANCELED`; on an
//! input-required task it ends it `CANCELED`; on one that is over it is
//! `TaskNotCancelable` (-32002). A streaming client that goes away cancels the run as
//! on our own routes, and the task ends `CANCELED`.
//!
//! # Errors
//!
//! A body that is not JSON is `ParseError` (-32700); JSON that is not a JSON-RPC 2.0
//! request `InvalidRequest` (-32600); params that do not read `InvalidParams` (-32602);
//! an `A2A-Version` header other than 1.x `VersionNotSupported` (-32009). Errors of the
//! server carry our stable code in `data` (`{"code", "message"}`): what does not exist or
//! is not the caller's is `TaskNotFound`, what the request got wrong (a busy context,
//! a bad context id) `InvalidParams`, the rest `InternalError`. JSON-RPC errors are
//! answered with status 200; what every route answers with a status keeps it (401, 413
//! for a body past the limit, 429 with `Retry-After`, 503 while the server drains).
//!
//! Tasks are kept in memory, per process ([`A2a::tasks`] of them at most), like the
//! replay log of our streamed runs.
//!
//! # Example
//!
//! ```
//! use tower_adk::Agent;
//! use tower_adk::server::Server;
//! use tower_adk::server::a2a::A2a;
//! use tower_adk::testing::{ScriptedModel, Turn};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let agent = Agent::builder(ScriptedModel::per_run([Turn::text("Hello!")])).build()?;
//! let server = Server::new()
//!     .agent("support", agent)
//!     .a2a(A2a::new().root("support").base_url("https://agents.example.com"));
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! // server.serve(listener).await?;
//! // curl https://agents.example.com/.well-known/agent-card.json
//! # let _ = (listener, server);
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod card;
mod convert;
mod error;
pub(super) mod face;
mod rpc;
mod task;
mod tasks;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

pub use self::face::A2a;
use self::face::Face;
use super::error::ApiError;
use super::extract::{Body, Path};
use super::identity::Caller;
use super::state::AppState;

/// The endpoints, for the router's identified routes.
pub(crate) fn endpoints(routes: Router<AppState>) -> Router<AppState> {
    routes
        .route("/agents/{name}/a2a", post(agent_endpoint))
        .route("/a2a", post(root_endpoint))
}

/// The cards, for the router's open routes.
pub(crate) fn cards(routes: Router<AppState>) -> Router<AppState> {
    routes
        .route(
            "/agents/{name}/.well-known/agent-card.json",
            get(agent_card),
        )
        .route(crate::a2a::AGENT_CARD_PATH, get(root_card))
}

async fn agent_card(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    card_of(&state, &name, &format!("/agents/{name}/a2a"), &headers).await
}

async fn root_card(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let name = root(&state)?;
    card_of(&state, &name, "/a2a", &headers).await
}

async fn card_of(
    state: &AppState,
    name: &str,
    path: &str,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let face = face(state)?;
    let served = state.served(name)?;
    let card = card::card(state, &face.config, name, served, path, headers).await;
    Ok(Json(card).into_response())
}

async fn agent_endpoint(
    State(state): State<AppState>,
    Path(name): Path<String>,
    axum::Extension(caller): axum::Extension<Caller>,
    headers: HeaderMap,
    Body(body): Body,
) -> Result<Response, ApiError> {
    endpoint(&state, &name, &caller, &headers, &body).await
}

async fn root_endpoint(
    State(state): State<AppState>,
    axum::Extension(caller): axum::Extension<Caller>,
    headers: HeaderMap,
    Body(body): Body,
) -> Result<Response, ApiError> {
    let name = root(&state)?;
    endpoint(&state, &name, &caller, &headers, &body).await
}

async fn endpoint(
    state: &AppState,
    name: &str,
    caller: &Caller,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let face = face(state)?;
    let served = state.served(name)?;
    let call = rpc::Call {
        state,
        face,
        name,
        served,
        caller: &caller.0,
    };
    Ok(rpc::answer(call, headers, body).await)
}

fn face(state: &AppState) -> Result<&Face, ApiError> {
    state
        .a2a
        .as_ref()
        .ok_or_else(|| ApiError::not_found("not_found", "no such route"))
}

/// The root agent's name, or 404 when none is chosen.
fn root(state: &AppState) -> Result<String, ApiError> {
    let root = face(state)?.config.root.clone();
    root.ok_or_else(|| ApiError::not_found("not_found", "no root agent is served over A2A"))
}
