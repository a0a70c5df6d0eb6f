//! Who calls: the identity an HTTP request was given by the face's
//! [`Identify`](crate::server::Identify), or the one fixed for a stdio connection.

use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use rmcp::service::{RequestContext, RoleServer};

use crate::auth::Identity;

/// The identity of the HTTP request being served, as the face's `Identify` gave it.
#[derive(Debug, Clone)]
pub(crate) struct HttpCaller(pub(crate) Identity);

/// Where a connection's callers are identified.
#[derive(Debug, Clone)]
pub(crate) enum Callers {
    /// Every request of the connection is this identity's (stdio: the program that
    /// started the server says who it serves).
    Fixed(Identity),
    /// Each HTTP request carries its own ([`HttpCaller`], from the identify middleware).
    Http,
}

impl Callers {
    /// The identity of the request in `context`. Over HTTP a request the middleware did
    /// not identify (which it never lets through) is refused, never served anonymously.
    pub(crate) fn of(&self, context: &RequestContext<RoleServer>) -> Result<Identity, ErrorData> {
        match self {
            Callers::Fixed(identity) => Ok(identity.clone()),
            Callers::Http => context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<HttpCaller>())
                .map(|caller| caller.0.clone())
                .ok_or_else(|| {
                    ErrorData::new(
                        ErrorCode::INVALID_REQUEST,
                        "the caller is not identified",
                        None,
                    )
                }),
        }
    }
}
