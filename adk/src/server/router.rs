//! The routes: which handler answers which path, behind which middleware.

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::middleware;
use axum::routing::{get, post};

use super::error::ApiError;
use super::identity::RequireIdentity;
use super::state::AppState;
use super::{agents, agui, limit, openai, page, runs, threads};

/// The server's routes: the agent routes (AG-UI's among them) and the OpenAI-compatible
/// ones behind the identity middleware, then the rate of each principal (when it is
/// limited); health, readiness, the page and the metrics (when on, unless they require
/// an identity) without them; JSON errors for unknown paths and methods, and (feature
/// `otel`) the caller's trace context. (The body limit is the [`Body`](super::extract::Body)
/// extractor's, which reads every body: a layer would cost every request a service and
/// a future more.)
pub(crate) fn routes(state: AppState) -> Router {
    let mut agents = Router::new()
        .route("/agents", get(agents::list))
        .route("/agents/{name}/runs", post(runs::start))
        .route("/agents/{name}/runs/{run_id}/events", get(runs::events))
        .route("/agents/{name}/agui", post(agui::run))
        .route("/agents/{name}/threads", get(threads::list))
        .route(
            "/agents/{name}/threads/{thread}",
            get(threads::show).delete(threads::delete),
        );
    let mut open = Router::new()
        .route("/healthz", get(agents::health))
        .route("/readyz", get(agents::ready));
    #[cfg(feature = "prometheus")]
    if let Some(metrics) = &state.metrics {
        let route = get(super::metrics::show);
        if metrics.identified() {
            agents = agents.route("/metrics", route);
        } else {
            open = open.route("/metrics", route);
        }
    }
    #[cfg(feature = "a2a")]
    if state.a2a.is_some() {
        agents = super::a2a::endpoints(agents);
        open = super::a2a::cards(open);
    }
    let mut openai = Router::new()
        .route("/v1/models", get(openai::models))
        .route("/v1/chat/completions", post(openai::chat_completions));
    // A route layer added later runs first: identity, then the rate.
    if let Some(rate) = &state.rate {
        let limited = middleware::from_fn_with_state(Arc::clone(rate), limit::require_rate);
        agents = agents.route_layer(limited);
        let limited = middleware::from_fn_with_state(Arc::clone(rate), openai::require_rate);
        openai = openai.route_layer(limited);
    }
    let agents = agents.route_layer(RequireIdentity::new(state.identify.clone()));
    let identify = state.identify.clone();
    let openai = openai.route_layer(RequireIdentity::refusing(identify, openai::refuse));
    if state.page {
        open = open.route("/", get(page::show));
    }
    let routes = open
        .merge(agents)
        .merge(openai)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed);
    #[cfg(feature = "otel")]
    let routes = routes.layer(middleware::from_fn(super::trace::continue_trace));
    routes.with_state(state)
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
