//! The streamable HTTP face: rmcp's [`StreamableHttpService`] at [`MCP_PATH`] of an axum
//! router, behind a middleware that identifies each request with the face's
//! [`Identify`].

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::Exposed;
use super::caller::{Callers, HttpCaller};
use super::handler::FaceHandler;
use super::session::SessionOwners;
use crate::server::Identify;

/// The path the router serves MCP at.
pub const MCP_PATH: &str = "/mcp";

/// The router: `POST`, `GET` and `DELETE` [`MCP_PATH`], each request identified first
/// (refused with 401 as on the server's routes), its sessions closed when `stop` is
/// cancelled.
pub(crate) fn router<I: Identify>(
    exposed: Arc<Exposed>,
    identify: I,
    stop: CancellationToken,
) -> Router {
    let handler = FaceHandler {
        exposed,
        callers: Callers::Http,
    };
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = stop;
    let sessions = Arc::new(LocalSessionManager::default());
    let owners = SessionOwners::new(Arc::clone(&sessions));
    let service = StreamableHttpService::new(move || Ok(handler.clone()), sessions, config);
    let state = Arc::new((identify, owners));
    Router::new()
        .route_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn_with_state(state, identified::<I>))
}

/// Puts the request's caller into its extensions, where the handler finds it in the
/// HTTP parts rmcp hands over, and keeps it to its own sessions; or refuses the request.
async fn identified<I: Identify>(
    State(state): State<Arc<(I, SessionOwners)>>,
    request: Request,
    next: Next,
) -> Response {
    let (identify, owners) = &*state;
    let (parts, body) = request.into_parts();
    match identify.identify(&parts).await {
        Ok(identity) => {
            let principal = identity.principal().clone();
            let mut request = Request::from_parts(parts, body);
            request.extensions_mut().insert(HttpCaller(identity));
            owners.guard(principal, request, next).await
        }
        Err(rejection) => rejection.into_response(),
    }
}
