//! `GET /agents`, `GET /healthz` and `GET /readyz`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;

use super::ApiError;
use super::router::{AppState, Versioned};
use crate::ToolInfo;

#[derive(Serialize)]
struct Listing<'a> {
    agents: Vec<Listed<'a>>,
}

#[derive(Serialize)]
struct Listed<'a> {
    name: &'a str,
    description: &'a str,
    tools: Vec<&'a ToolInfo>,
}

/// The agents, their descriptions and their configured tools.
pub(crate) async fn list(State(state): State<AppState>) -> Response {
    let agents = state.agents.iter().map(|(name, served)| Listed {
        name,
        description: &served.description,
        tools: served
            .agent
            .config()
            .tools()
            .iter()
            .map(|t| t.info())
            .collect(),
    });
    let listing = Listing {
        agents: agents.collect(),
    };
    Json(Versioned::new(listing)).into_response()
}

/// The process answers.
pub(crate) async fn health() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

/// The server takes runs: 200, or 503 `not_ready` once [`Readiness`] says no
/// (`shutting_down` when it drains).
pub(crate) async fn ready(State(state): State<AppState>) -> Response {
    let status = StatusCode::SERVICE_UNAVAILABLE;
    if state.shutdown.is_draining() {
        let message = "the server is shutting down";
        ApiError::new(status, "shutting_down", message).into_response()
    } else if state.shutdown.readiness().is_ready() {
        Json(json!({"status": "ready"})).into_response()
    } else {
        let message = "the server takes no new runs";
        ApiError::new(status, "not_ready", message).into_response()
    }
}

/// What `GET /readyz` answers: ready (the default) or not, e.g. while the process drains
/// before it stops. Clones share the flag.
///
/// ```
/// use tower_adk::server::Server;
///
/// let server = Server::new();
/// let readiness = server.readiness();
/// readiness.set_ready(false); // from a shutdown handler, say
/// assert!(!server.readiness().is_ready());
/// ```
#[derive(Debug, Clone)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    pub(crate) fn new() -> Self {
        Readiness(Arc::new(AtomicBool::new(true)))
    }

    /// Says whether the server is ready.
    pub fn set_ready(&self, ready: bool) {
        self.0.store(ready, Ordering::Relaxed);
    }

    /// Whether the server is ready.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
