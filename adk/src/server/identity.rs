//! Who is calling: [`Identify`] turns an HTTP request into typed values for the run's
//! extensions; [`BearerTokens`] and [`Anonymous`] are ready-made.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::request::Parts;
use axum::http::{Extensions, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// Turns a request into the caller's identity: typed values that go into the extensions
/// of every [`AgentRequest`](crate::AgentRequest) the HTTP request starts, so that role
/// filters, policies and approvals see who is calling.
///
/// It runs before anything else of a request (except `/healthz` and `/readyz`); a
/// [`Rejection`] answers 401 with the code `unauthorized`, and nothing starts.
///
/// # Example
///
/// ```
/// use tower_adk::server::{Identify, Rejection};
/// use tower_adk::Extensions;
/// use http::request::Parts;
///
/// #[derive(Clone)]
/// struct Tenant(String);
///
/// /// The tenant from a header a gateway in front has checked already.
/// struct FromGateway;
///
/// impl Identify for FromGateway {
///     async fn identify(&self, parts: &Parts) -> Result<Extensions, Rejection> {
///         let tenant = parts.headers.get("x-tenant").and_then(|v| v.to_str().ok());
///         let tenant = tenant.ok_or_else(|| Rejection::new("no x-tenant header"))?;
///         let mut extensions = Extensions::new();
///         extensions.insert(Tenant(tenant.to_owned()));
///         Ok(extensions)
///     }
/// }
/// let _server = tower_adk::server::Server::new().identify(FromGateway);
/// ```
pub trait Identify: Send + Sync + 'static {
    /// The caller's identity as extensions, or why the request is refused.
    fn identify(&self, parts: &Parts)
    -> impl Future<Output = Result<Extensions, Rejection>> + Send;
}

/// Why a request has no valid identity; answered with 401 and `WWW-Authenticate:
/// Bearer`.
#[derive(Debug, Clone)]
pub struct Rejection {
    message: Cow<'static, str>,
}

impl Rejection {
    /// A rejection with a message for the caller (say what is missing, never which
    /// tokens exist).
    pub fn new(message: impl Into<Cow<'static, str>>) -> Self {
        Rejection {
            message: message.into(),
        }
    }

    /// The message for the caller.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let error = ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", self.message);
        ([(WWW_AUTHENTICATE, "Bearer")], error).into_response()
    }
}

/// Everyone is welcome, with no identity (the [`Server`](super::Server)'s default).
#[derive(Debug, Clone, Copy, Default)]
pub struct Anonymous;

impl Identify for Anonymous {
    async fn identify(&self, _: &Parts) -> Result<Extensions, Rejection> {
        Ok(Extensions::new())
    }
}

/// Bearer tokens, each mapped to a typed value (a role, a user) that goes into the
/// run's extensions. A request without `Authorization: Bearer TOKEN`, or with a token
/// not in the map, is refused.
///
/// Tokens are compared by a hash map lookup, not in constant time; its `Debug` shows
/// how many tokens there are, never the tokens.
///
/// # Example
///
/// ```
/// use tower_adk::server::{BearerTokens, Server};
///
/// #[derive(Debug, Clone, PartialEq)]
/// enum Role { Admin, Guest }
///
/// let tokens = BearerTokens::new().token("s3cret-admin", Role::Admin).token("s3cret-guest", Role::Guest);
/// let _server = Server::new().identify(tokens);
/// ```
#[derive(Clone)]
pub struct BearerTokens<R> {
    tokens: HashMap<String, R>,
}

impl<R> BearerTokens<R> {
    /// No tokens yet: every request is refused.
    pub fn new() -> Self {
        BearerTokens {
            tokens: HashMap::new(),
        }
    }

    /// Accepts `token`, and puts `value` into the extensions of its requests.
    pub fn token(mut self, token: impl Into<String>, value: R) -> Self {
        self.tokens.insert(token.into(), value);
        self
    }
}

impl<R> Default for BearerTokens<R> {
    fn default() -> Self {
        BearerTokens::new()
    }
}

impl<R> fmt::Debug for BearerTokens<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerTokens")
            .field("tokens", &self.tokens.len())
            .finish()
    }
}

impl<R: Clone + Send + Sync + 'static> Identify for BearerTokens<R> {
    async fn identify(&self, parts: &Parts) -> Result<Extensions, Rejection> {
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let token = header
            .and_then(|value| value.strip_prefix("Bearer "))
            .ok_or_else(|| Rejection::new("a bearer token is required"))?;
        let value = self
            .tokens
            .get(token.trim())
            .ok_or_else(|| Rejection::new("the bearer token is not valid"))?;
        let mut extensions = Extensions::new();
        extensions.insert(value.clone());
        Ok(extensions)
    }
}

/// The identity of the request being served, as [`Identify`] gave it.
#[derive(Debug, Clone)]
pub(crate) struct Caller(pub(crate) Extensions);

/// [`Identify`], object-safe: the one place the server erases it.
pub(crate) trait DynIdentify: Send + Sync + 'static {
    fn identify<'a>(
        &'a self,
        parts: &'a Parts,
    ) -> Pin<Box<dyn Future<Output = Result<Extensions, Rejection>> + Send + 'a>>;
}

impl<T: Identify> DynIdentify for T {
    fn identify<'a>(
        &'a self,
        parts: &'a Parts,
    ) -> Pin<Box<dyn Future<Output = Result<Extensions, Rejection>> + Send + 'a>> {
        Box::pin(Identify::identify(self, parts))
    }
}

/// The middleware that identifies every request of the agent routes, or refuses it.
pub(crate) async fn require_identity(
    State(identify): State<Arc<dyn DynIdentify>>,
    request: Request,
    next: Next,
) -> Response {
    match identified(&*identify, request).await {
        Ok(request) => next.run(request).await,
        Err(rejection) => rejection.into_response(),
    }
}

/// The request with its [`Caller`] in its extensions, or why it is refused.
pub(crate) async fn identified(
    identify: &dyn DynIdentify,
    request: Request,
) -> Result<Request, Rejection> {
    let (parts, body) = request.into_parts();
    let extensions = identify.identify(&parts).await?;
    let mut request = Request::from_parts(parts, body);
    request.extensions_mut().insert(Caller(extensions));
    Ok(request)
}

#[cfg(test)]
mod tests {
    fn _obj_safe(_: Box<dyn super::DynIdentify>) {}
}
