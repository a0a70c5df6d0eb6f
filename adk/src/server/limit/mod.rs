//! [`Limits`]: what one caller may ask of a server, and what a request may be: runs in
//! flight and requests per second for each principal, and the size and pace of each
//! request.

mod rate;
mod runs;

use std::time::Duration;

pub(crate) use self::rate::{PrincipalRate, require_rate};
pub(crate) use self::runs::{RunSlot, RunSlots};

/// What one caller may ask of a [`Server`](super::Server), and what a request may be
/// ([`Server::limits`](super::Server::limits)).
///
/// # Per principal
///
/// Both are off by default; each is keyed by the caller's
/// [`Principal`](crate::auth::Principal), as [`Identify`](super::Identify) gave it, so
/// one caller over its limit never holds another one back (with
/// [`Anonymous`](super::Anonymous) every caller is the same principal, and shares them).
///
/// - [`runs_per_principal`](Limits::runs_per_principal): the runs a caller has in flight
///   at once, on every route that starts one (`POST .../runs`, a resume too, AG-UI's,
///   OpenAI's chat completions). A streamed run holds its slot until its stream ends or
///   its client goes away; a run answered as JSON, until it completes. One more is
///   refused with 429 `too_many_runs` and `Retry-After: 1`, and does not start.
/// - [`requests_per_principal`](Limits::requests_per_principal): requests of a caller
///   per period, every route behind identity counted (`/healthz`, `/readyz` and the
///   page are not), with a burst of the whole allowance: `(120, 60 s)` takes 120 at
///   once, then one every half second. One too many is refused with 429 `rate_limited`
///   and a `Retry-After` of the seconds until the next is allowed. The count is
///   [governor](https://docs.rs/governor)'s GCRA, one state per principal, dropped
///   once it is back to full.
///
/// Both count after identity: a flood of requests without a valid identity is refused
/// with 401 but not limited here; limit those in front (a layer keyed by the peer's
/// address, such as `tower_governor`'s, or the proxy before the server).
///
/// # Bodies
///
/// Routes that take a body (the runs, AG-UI's and OpenAI's) read it whole before
/// anything starts, and refuse, as JSON with a 4xx:
///
/// - a body larger than [`body_bytes`](Limits::body_bytes) (default 2 MiB): 413
///   `body_too_large`, without reading past the limit;
/// - a body that has not arrived [`body_timeout`](Limits::body_timeout) (default 30 s)
///   after the handler began to read it: 408 `body_timeout` (a client that trickles its
///   body a byte at a time is cut off, however steady);
/// - a body of another content type than `application/json` (or any `+json` type),
///   `text/plain`, `application/x-www-form-urlencoded` (what `curl -d` says) or none:
///   415 `unsupported_media_type` (a `multipart/form-data` upload, say). Whatever the
///   type, the body is read as JSON: a form's fields are not decoded;
/// - a body that is not UTF-8, not JSON, not an object, or not the route's shape: 400
///   `invalid_body`, whose message says which and where.
///
/// # Headers
///
/// [`header_timeout`](Limits::header_timeout) (default 30 s) bounds how long a client
/// may take to send a request's headers, counted from when the server waits for them:
/// the connection's opening, or on a kept-alive connection the end of the last response
/// (so it closes idle connections too). Past it the connection is closed, without an
/// answer. The router cannot see a request before its headers are
/// in: the timeout is the HTTP server's, set by [`Server::serve`](super::Server::serve).
/// A router served by `axum::serve` has none (axum 0.8 gives hyper no timer).
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use tower_adk::server::{Limits, Server};
///
/// let limits = Limits::default()
///     .runs_per_principal(4)
///     .requests_per_principal(120, Duration::from_secs(60))
///     .body_bytes(256 * 1024);
/// let server = Server::new().limits(limits);
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The runs one principal may have in flight at once (default: no limit).
    pub runs_per_principal: Option<usize>,
    /// The requests one principal may send per period (default: no limit).
    pub requests_per_principal: Option<Rate>,
    /// The largest body a request may have, in bytes (default 2 MiB).
    pub body_bytes: usize,
    /// How long a request's body may take to arrive, once the handler reads it (default
    /// 30 s).
    pub body_timeout: Duration,
    /// How long a request's headers may take to arrive (default 30 s;
    /// [`Server::serve`](super::Server::serve) only).
    pub header_timeout: Duration,
}

/// A rate: `requests` per `per`, in a burst or spread out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rate {
    /// The requests allowed per period (at least 1).
    pub requests: u32,
    /// The period.
    pub per: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            runs_per_principal: None,
            requests_per_principal: None,
            body_bytes: 2 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(30),
        }
    }
}

impl Limits {
    /// Sets [`runs_per_principal`](Limits::runs_per_principal) (at least 1).
    pub fn runs_per_principal(mut self, runs: usize) -> Self {
        self.runs_per_principal = Some(runs.max(1));
        self
    }

    /// Sets [`requests_per_principal`](Limits::requests_per_principal): `requests` (at
    /// least 1) per `per`. A `per` shorter than a nanosecond per request is no limit.
    pub fn requests_per_principal(mut self, requests: u32, per: Duration) -> Self {
        self.requests_per_principal = Some(Rate {
            requests: requests.max(1),
            per,
        });
        self
    }

    /// Sets [`body_bytes`](Limits::body_bytes).
    pub fn body_bytes(mut self, bytes: usize) -> Self {
        self.body_bytes = bytes;
        self
    }

    /// Sets [`body_timeout`](Limits::body_timeout).
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Sets [`header_timeout`](Limits::header_timeout).
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }
}
