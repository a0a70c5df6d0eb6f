//! The routes: which handler answers which path, behind which middleware.

use axum::Router;
use axum::http::StatusCode;
use axum::middleware;
use axum::routing::{get, post};

use super::error::ApiError;
use super::state::AppState;
use super::{agents, agui, identity, openai, page, runs, threads};

/// The server's routes: the agent routes (AG-UI's among them) and the OpenAI-compatible
/// ones behind the identity middleware, health, readiness and the page (when on) without
/// it, and JSON errors for unknown paths and methods.
pub(crate) fn routes(state: AppState) -> Router {
    let agents = Router::new()
        .route("/agents", get(agents::list))
        .route("/agents/{name}/runs", post(runs::start))
        .route("/agents/{name}/runs/{run_id}/events", get(runs::events))
        .route("/agents/{name}/agui", post(agui::run))
        .route("/agents/{name}/threads", get(threads::list))
        .route(
            "/agents/{name}/threads/{thread}",
            get(threads::show).delete(threads::delete),
        )
        .route_layer(middleware::from_fn_with_state(
            state.identify.clone(),
            identity::require_identity,
        ));
    let openai = Router::new()
        .route("/v1/models", get(openai::models))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .route_layer(middleware::from_fn_with_state(
            state.identify.clone(),
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
