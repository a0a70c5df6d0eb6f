//! `GET /agents`, `GET /healthz` and `GET /readyz`.

use std::fmt;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;
use tower::{BoxError, ServiceExt};

use super::ServedAgent;
use super::error::ApiError;
use super::identity::Caller;
use super::state::AppState;
use crate::agent::AgentError;
use crate::agent::AgentRequest;
use crate::agent::AgentRun;
use crate::auth::Identity;
use crate::tool::Tool;
use crate::tool::ToolInfo;
use crate::wire::{Versioned, WireError};

#[derive(Serialize)]
struct Listing<'a> {
    agents: Vec<Listed<'a>>,
}

/// An agent as listed: `tools` or, when its `before_agent` hooks fail or interrupt for
/// this caller, `error`.
#[derive(Serialize)]
struct Listed<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<Arc<ToolInfo>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<WireError>,
}

/// The agents, their descriptions and the tools the caller's runs would give the model.
pub(crate) async fn list(
    State(state): State<AppState>,
    axum::Extension(caller): axum::Extension<Caller>,
) -> Response {
    let caller = &caller.0;
    let agents = state.agents.iter().map(|(name, served)| async move {
        let (tools, error) = match served.tools_for(caller).await {
            Ok(tools) => (Some(tools), None),
            Err(error) => (None, Some(error)),
        };
        Listed {
            name,
            description: &served.description,
            tools,
            error,
        }
    });
    let listing = Listing {
        agents: futures::future::join_all(agents).await,
    };
    Json(Versioned::new(listing)).into_response()
}

impl ServedAgent {
    /// The tools the model of this caller's runs would see: a request with the
    /// caller's identity goes through the probe's layers, then its `before_agent` hooks
    /// run ([`Agent::config_for`](crate::Agent::config_for)).
    pub(crate) async fn tools_for(
        &self,
        caller: &Identity,
    ) -> Result<Vec<Arc<ToolInfo>>, WireError> {
        let request = AgentRequest::default().with_identity(caller.clone());
        let given_back = match self.probe.clone().oneshot(request).await {
            Ok(_) => {
                let message = "a layer answered the listing's request itself";
                return Err(WireError::new("tools_unknown", message));
            }
            Err(error) => error
                .downcast::<Probed>()
                .map_err(|error| WireError::new("service_failed", error.to_string()))?,
        };
        let config = self.agent.config_for(given_back.0).await;
        let config = config.map_err(|error| listing_error(&error))?;
        Ok(config.tools().iter().map(Tool::shared_info).collect())
    }
}

/// A hook that would interrupt the run says so as `interrupted`; other failures give
/// their own code.
fn listing_error(error: &AgentError) -> WireError {
    let interrupt = error
        .as_handler()
        .and_then(|failed| Some((failed, failed.interrupt()?)));
    match interrupt {
        Some((failed, interrupt)) => {
            let message = format!(
                "`before_agent` of `{}` would interrupt the run: {}",
                failed.handler(),
                interrupt.payload()
            );
            WireError::new("interrupted", message)
        }
        None => WireError::from(error),
    }
}

/// The probe's innermost service: gives the request back, as its layers left it.
pub(crate) async fn probed(request: AgentRequest) -> Result<AgentRun, BoxError> {
    Err(Box::new(Probed(request)))
}

/// The request of a listing, given back by the probe.
#[derive(Debug)]
struct Probed(AgentRequest);

impl fmt::Display for Probed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the listing's request, given back")
    }
}

impl std::error::Error for Probed {}

/// The process answers.
pub(crate) async fn health() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

/// The server takes runs: 200, or 503 `not_ready` once [`Readiness`](super::shutdown::Readiness) says no
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
