//! Who is calling: [`Identify`] turns an HTTP request into the caller's
//! [`Identity`]: its [`Principal`], which owns the threads its runs create, and typed
//! values for the run's extensions; [`BearerTokens`] and [`Anonymous`] are ready-made.

use std::borrow::Cow;
use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::http::StatusCode;
use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use tower::{Layer, Service, ServiceExt};

use super::error::ApiError;
use crate::auth::{Identity, Principal};

/// Turns a request into the caller's [`Identity`]: its [`Principal`] (a stable subject:
/// the owner of the threads its runs create, and who asks the agents'
/// [`Authorize`](crate::auth::Authorize)), and typed values that go into the extensions
/// of every [`AgentRequest`](crate::agent::AgentRequest) the HTTP request starts, so that
/// role filters, policies and approvals see who is calling.
///
/// It runs before anything else of a request (except `/healthz`, `/readyz`, the page and
/// an open `/metrics`); a
/// [`Rejection`] answers 401 with the code `unauthorized`, and nothing starts.
///
/// # Example
///
/// ```
/// use tower_adk::auth::{Identity, Principal};
/// use tower_adk::server::{Identify, Rejection};
/// use http::request::Parts;
///
/// #[derive(Clone)]
/// struct Tenant(String);
///
/// /// The user and tenant from headers a gateway in front has checked already.
/// struct FromGateway;
///
/// impl Identify for FromGateway {
///     async fn identify(&self, parts: &Parts) -> Result<Identity, Rejection> {
///         let header = |name| parts.headers.get(name).and_then(|v| v.to_str().ok());
///         let user = header("x-user").ok_or_else(|| Rejection::new("no x-user header"))?;
///         let tenant = header("x-tenant").ok_or_else(|| Rejection::new("no x-tenant header"))?;
///         Ok(Identity::new(Principal::new(user)).with(Tenant(tenant.to_owned())))
///     }
/// }
/// let _server = tower_adk::server::Server::new().identify(FromGateway);
/// ```
pub trait Identify: Send + Sync + 'static {
    /// The caller's identity, or why the request is refused.
    fn identify(&self, parts: &Parts) -> impl Future<Output = Result<Identity, Rejection>> + Send;

    /// The HTTP authentication scheme callers prove who they are with (`"Bearer"`), for
    /// what describes the server to its clients: the A2A agent card names it in its
    /// security schemes (feature `a2a`). `None` (the default) when the server lets
    /// everyone in or cannot say; [`BearerTokens`] says `Bearer`.
    fn scheme(&self) -> Option<&'static str> {
        None
    }
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

/// Everyone is welcome, as the [anonymous](Principal::anonymous) principal (the
/// [`Server`](super::Server)'s default): every caller is the same one, and shares every
/// thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anonymous;

impl Identify for Anonymous {
    async fn identify(&self, _: &Parts) -> Result<Identity, Rejection> {
        Ok(Identity::anonymous())
    }
}

/// Bearer tokens, each the key of one caller: its principal and a typed value (a role,
/// a user) that goes into the run's extensions. A request without `Authorization:
/// Bearer TOKEN` (the scheme in any case), or with a token not in the map, is refused.
///
/// Each token is its own principal: [`token`](BearerTokens::token) names it by a digest
/// of the token (`token:` and 16 hex digits of its SHA-256, which shows nothing of the
/// token), so two tokens of the same role are two principals, each with its own threads;
/// [`token_of`](BearerTokens::token_of) names it as the program says (a user id that
/// stays when the token is replaced).
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
/// let tokens = BearerTokens::new()
///     .token_of("alice", "s3cret-alice", Role::Admin)
///     .token("s3cret-guest", Role::Guest);
/// let _server = Server::new().identify(tokens);
/// ```
#[derive(Clone)]
pub struct BearerTokens<R> {
    tokens: HashMap<String, (Principal, R)>,
}

impl<R> BearerTokens<R> {
    /// No tokens yet: every request is refused.
    pub fn new() -> Self {
        BearerTokens {
            tokens: HashMap::new(),
        }
    }

    /// Accepts `token` as its own principal (named by a digest of the token), and puts
    /// `value` into the extensions of its requests.
    pub fn token(self, token: impl Into<String>, value: R) -> Self {
        let token = token.into();
        let subject = format!("token:{}", digest(&token));
        self.token_of(subject, token, value)
    }

    /// Accepts `token` as the principal `subject`, and puts `value` into the extensions
    /// of its requests. Several tokens of one subject are one principal.
    pub fn token_of(
        mut self,
        subject: impl Into<std::sync::Arc<str>>,
        token: impl Into<String>,
        value: R,
    ) -> Self {
        let principal = Principal::new(subject);
        self.tokens.insert(token.into(), (principal, value));
        self
    }
}

/// The first 8 bytes of the token's SHA-256, in hex.
fn digest(token: &str) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(token.as_bytes());
    hash.iter().take(8).map(|b| format!("{b:02x}")).collect()
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
    fn scheme(&self) -> Option<&'static str> {
        Some("Bearer")
    }

    async fn identify(&self, parts: &Parts) -> Result<Identity, Rejection> {
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let token = header
            .and_then(bearer_token)
            .ok_or_else(|| Rejection::new("a bearer token is required"))?;
        let (principal, value) = self
            .tokens
            .get(token)
            .ok_or_else(|| Rejection::new("the bearer token is not valid"))?;
        Ok(Identity::new(principal.clone()).with(value.clone()))
    }
}

/// The token of an `Authorization` value `Bearer TOKEN`, the scheme in any case
/// (RFC 9110 §11.1).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The identity of the request being served, as [`Identify`] gave it.
#[derive(Debug, Clone)]
pub(crate) struct Caller(pub(crate) Identity);

/// [`Identify`], object-safe: the one place the server erases it.
pub(crate) trait DynIdentify: Send + Sync + 'static {
    fn identify<'a>(
        &'a self,
        parts: &'a Parts,
    ) -> Pin<Box<dyn Future<Output = Result<Identity, Rejection>> + Send + 'a>>;

    /// [`Identify::scheme`], which the A2A card names.
    #[cfg(feature = "a2a")]
    fn scheme(&self) -> Option<&'static str>;
}

impl<T: Identify> DynIdentify for T {
    fn identify<'a>(
        &'a self,
        parts: &'a Parts,
    ) -> Pin<Box<dyn Future<Output = Result<Identity, Rejection>> + Send + 'a>> {
        Box::pin(Identify::identify(self, parts))
    }

    #[cfg(feature = "a2a")]
    fn scheme(&self) -> Option<&'static str> {
        Identify::scheme(self)
    }
}

/// The middleware that identifies every request of the routes it is on, or answers
/// `refuse`'s response: a layer of its own rather than `axum::middleware::from_fn`,
/// which would box the rest of the route again into a `Next` for every request.
#[derive(Clone)]
pub(crate) struct RequireIdentity {
    identify: Arc<dyn DynIdentify>,
    refuse: fn(Rejection) -> Response,
}

impl RequireIdentity {
    /// The agent routes' middleware: a refusal is 401 `unauthorized`.
    pub(crate) fn new(identify: Arc<dyn DynIdentify>) -> Self {
        RequireIdentity::refusing(identify, IntoResponse::into_response)
    }

    /// The middleware with refusals answered by `refuse`.
    pub(crate) fn refusing(
        identify: Arc<dyn DynIdentify>,
        refuse: fn(Rejection) -> Response,
    ) -> Self {
        RequireIdentity { identify, refuse }
    }
}

impl<S> Layer<S> for RequireIdentity {
    type Service = Identified<S>;

    fn layer(&self, inner: S) -> Identified<S> {
        Identified {
            inner,
            require: self.clone(),
        }
    }
}

/// A route behind [`RequireIdentity`].
#[derive(Clone)]
pub(crate) struct Identified<S> {
    inner: S,
    require: RequireIdentity,
}

impl<S> Service<Request> for Identified<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Readiness is the inner route's, awaited when the request is identified.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let (inner, require) = (self.inner.clone(), self.require.clone());
        Box::pin(async move {
            match identified(&*require.identify, request).await {
                Ok(request) => inner.oneshot(request).await,
                Err(rejection) => Ok((require.refuse)(rejection)),
            }
        })
    }
}

/// The request with its [`Caller`] in its extensions, or why it is refused.
pub(crate) async fn identified(
    identify: &dyn DynIdentify,
    request: Request,
) -> Result<Request, Rejection> {
    let (parts, body) = request.into_parts();
    let identity = identify.identify(&parts).await?;
    let mut request = Request::from_parts(parts, body);
    request.extensions_mut().insert(Caller(identity));
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _obj_safe(_: Box<dyn DynIdentify>) {}

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        for value in ["Bearer t0k", "bearer t0k", "BEARER  t0k ", "  bEaReR t0k"] {
            assert_eq!(bearer_token(value), Some("t0k"), "{value}");
        }
        for value in ["Basic t0k", "Bearer", "Bearer   ", "t0k", ""] {
            assert_eq!(bearer_token(value), None, "{value}");
        }
    }

    #[test]
    fn two_tokens_of_one_role_are_two_principals_and_show_nothing_of_the_tokens() {
        let tokens = BearerTokens::new()
            .token("first-secret", 1)
            .token("second-secret", 1);
        let (a, _) = &tokens.tokens["first-secret"];
        let (b, _) = &tokens.tokens["second-secret"];
        assert_ne!(a, b);
        assert!(a.subject().starts_with("token:") && a.subject().len() == 22);
        assert!(!a.subject().contains("secret"));
        let named = BearerTokens::new()
            .token_of("alice", "one", 1)
            .token_of("alice", "two", 2);
        assert_eq!(named.tokens["one"].0, named.tokens["two"].0);
    }
}
