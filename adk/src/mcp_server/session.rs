//! Streamable HTTP sessions belong to the caller who opened them: a request that names
//! another caller's session (its `Mcp-Session-Id`) is answered as for a session that does
//! not exist, 404, and reaches nothing of it (its standalone stream, its cancellations).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::auth::Principal;

/// The session header of the streamable HTTP transport.
const SESSION_HEADER: &str = "mcp-session-id";

/// Who opened each live session.
#[derive(Debug, Clone)]
pub(crate) struct SessionOwners {
    owners: Arc<Mutex<HashMap<Arc<str>, Principal>>>,
    /// rmcp's sessions: owners of the sessions it no longer has are forgotten.
    sessions: Arc<LocalSessionManager>,
}

impl SessionOwners {
    pub(crate) fn new(sessions: Arc<LocalSessionManager>) -> Self {
        SessionOwners {
            owners: Arc::default(),
            sessions,
        }
    }

    /// Passes `request` of `caller` on if it names no session or one of its own; records
    /// who opened the session its answer names; forgets one it deletes.
    pub(crate) async fn guard(&self, caller: Principal, request: Request, next: Next) -> Response {
        let named = session_of(request.headers());
        if let Some(id) = &named {
            let owner = self.lock().get(id.as_str()).cloned();
            if owner.is_some_and(|owner| owner != caller) {
                return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
            }
        }
        let deletes = request.method() == Method::DELETE;
        let response = next.run(request).await;
        match (named, session_of(response.headers())) {
            (Some(id), _) if deletes => {
                self.lock().remove(id.as_str());
            }
            (None, Some(opened)) => self.opened(opened, caller).await,
            _ => {}
        }
        response
    }

    /// Records the owner of a new session, first forgetting those of sessions that have
    /// ended (closed by their clients' going away, or idle past rmcp's keep-alive), so the
    /// map holds about as many entries as there are live sessions.
    async fn opened(&self, id: String, caller: Principal) {
        let live = self.sessions.sessions.read().await;
        let mut owners = self.lock();
        if owners.len() >= live.len().max(64) {
            owners.retain(|id, _| live.contains_key(id));
        }
        owners.insert(Arc::from(id), caller);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Principal>> {
        // Never held across an await; a panic under it leaves the map usable.
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn session_of(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(SESSION_HEADER)?.to_str().ok()?;
    Some(value.to_owned())
}
