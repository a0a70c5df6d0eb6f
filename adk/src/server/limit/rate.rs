//! Requests per principal: governor's keyed GCRA, keyed by the [`Caller`]'s principal.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::{DefaultKeyedRateLimiter, Quota};

use super::Rate;
use crate::auth::Principal;
use crate::server::error::ApiError;
use crate::server::identity::Caller;

/// How many checks between two sweeps of the principals back to a full allowance.
const SWEEP_EVERY: u32 = 1_024;

/// The rate of each principal's requests.
#[derive(Debug)]
pub(crate) struct PrincipalRate {
    limiter: DefaultKeyedRateLimiter<Principal>,
    checks: AtomicU32,
}

impl PrincipalRate {
    /// `None` for a rate that limits nothing (a period too short to divide).
    pub(crate) fn new(rate: Rate) -> Option<Self> {
        let requests = NonZeroU32::new(rate.requests)?;
        let quota = Quota::with_period(rate.per / requests.get())?.allow_burst(requests);
        Some(PrincipalRate {
            limiter: DefaultKeyedRateLimiter::keyed(quota),
            checks: AtomicU32::new(0),
        })
    }

    /// Counts a request of the caller's, or refuses it with 429 `rate_limited`. A
    /// request without a caller (none reaches here) is not counted.
    pub(crate) fn check(&self, request: &Request) -> Result<(), ApiError> {
        let Some(Caller(identity)) = request.extensions().get::<Caller>() else {
            return Ok(());
        };
        let checked = self.limiter.check_key(identity.principal());
        // Principals whose allowance is full again are forgotten, now and then.
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
        }
        checked.map_err(|not_until| {
            let wait = not_until.wait_time_from(Instant::now());
            let message = "too many requests: wait for the time Retry-After gives";
            ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", message)
                .with_retry_after(wait)
        })
    }
}

/// The middleware that counts every identified request of the agent routes.
pub(crate) async fn require_rate(
    State(rate): State<Arc<PrincipalRate>>,
    request: Request,
    next: Next,
) -> Response {
    match rate.check(&request) {
        Ok(()) => next.run(request).await,
        Err(refused) => refused.into_response(),
    }
}
