//! The routes, and the state every handler shares.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::middleware;
use axum::routing::{get, post};
use serde::Serialize;

use super::identity::{self, DynIdentify};
use super::log::RunLogs;
use super::{ApiError, ServedAgent, Shutdown, agents, agui, openai, page, runs, threads};
use crate::agent::Agent;
use crate::wire::VERSION;

/// What every handler of a server shares.
#[derive(Clone)]
pub(crate) struct AppState(Arc<Shared>);

pub(crate) struct Shared {
    pub(crate) agents: BTreeMap<String, ServedAgent>,
    pub(crate) identify: Box<dyn DynIdentify>,
    pub(crate) logs: RunLogs,
    pub(crate) shutdown: Shutdown,
    /// When the router was made, in seconds since the Unix epoch (the models' `created`).
    pub(crate) created: u64,
    /// Whether `GET /` serves the chat page.
    pub(crate) page: bool,
}

impl AppState {
    pub(crate) fn new(shared: Shared) -> Self {
        AppState(Arc::new(shared))
    }

    /// The agent of this name, or 404 `unknown_agent`.
    pub(crate) fn served(&self, name: &str) -> Result<&ServedAgent, ApiError> {
        let served = self.agents.get(name);
        served.ok_or_else(|| ApiError::not_found("unknown_agent", format!("no agent `{name}`")))
    }

    /// The agent of this name itself, without its layers, or 404 `unknown_agent`.
    pub(crate) fn agent(&self, name: &str) -> Result<&Agent, ApiError> {
        Ok(&self.served(name)?.agent)
    }
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// A JSON body with the wire version first: `{"v": 1, ...}`.
#[derive(Serialize)]
pub(crate) struct Versioned<T> {
    v: u32,
    #[serde(flatten)]
    body: T,
}

impl<T> Versioned<T> {
    pub(crate) fn new(body: T) -> Self {
        Versioned { v: VERSION, body }
    }
}

/// The server's routes: the agent routes (AG-UI's among them) and the OpenAI-compatible
/// ones behind the identity middleware, health, readiness and the page (when on) without
/// it, and JSON errors for unknown paths and methods.
pub(crate) fn routes(state: AppState) -> Router {
    let agents = Router::new()
        .route("/agents", get(agents::list))
        .route("/agents/{name}/runs", post(runs::start))
        .route("/agents/{name}/runs/{run_id}/events", get(runs::events))
        .route("/agents/{name}/agui", post(agui::run))
        .route(
            "/agents/{name}/threads/{thread}",
            get(threads::show).delete(threads::delete),
        )
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            identity::require_identity,
        ));
    let openai = Router::new()
        .route("/v1/models", get(openai::models))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            openai::require_identity,
        ));
    let mut open = Router::new()
        .route("/healthz", get(agents::health))
        .route("/readyz", get(agents::ready));
    if state.page {
        open = open.route("/", get(page::show));
    }
    open.merge(agents)
        .merge(openai)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::not_found("not_found", "no such route")
}

async fn method_not_allowed() -> ApiError {
    let message = "the route does not take this method";
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        message,
    )
}
