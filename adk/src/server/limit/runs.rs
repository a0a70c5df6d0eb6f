//! Runs in flight per principal: a count per principal, and a [`RunSlot`] that a run
//! holds until it ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::http::StatusCode;

use crate::auth::Principal;
use crate::server::error::ApiError;

/// The runs each principal has in flight, at most `most` each. The count of a principal
/// with none is removed, so the map holds the principals that are running, no others.
#[derive(Debug)]
pub(crate) struct RunSlots {
    most: usize,
    running: Mutex<HashMap<Principal, usize>>,
}

impl RunSlots {
    pub(crate) fn new(most: usize) -> Arc<Self> {
        Arc::new(RunSlots {
            most,
            running: Mutex::default(),
        })
    }

    /// A slot for one more run of `principal`, or 429 `too_many_runs` if it has its
    /// most in flight.
    pub(crate) fn take(self: &Arc<Self>, principal: Principal) -> Result<RunSlot, ApiError> {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let count = running.entry(principal.clone()).or_default();
        if *count >= self.most {
            let message = format!(
                "{} runs of this caller are in flight, the most it may have: wait for one to end",
                self.most
            );
            let status = StatusCode::TOO_MANY_REQUESTS;
            let refused = ApiError::new(status, "too_many_runs", message);
            return Err(refused.with_retry_after(Duration::from_secs(1)));
        }
        *count += 1;
        Ok(RunSlot {
            slots: Arc::clone(self),
            principal,
        })
    }
}

/// One run's place among its principal's: given back when dropped (the run ended, or its
/// response was dropped).
#[derive(Debug)]
pub(crate) struct RunSlot {
    slots: Arc<RunSlots>,
    principal: Principal,
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        let mut running = (self.slots.running.lock()).unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = running.get_mut(&self.principal) {
            *count -= 1;
            if *count == 0 {
                running.remove(&self.principal);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_at_its_most_is_refused_and_others_are_not() {
        let slots = RunSlots::new(2);
        let (alice, bob) = (Principal::new("alice"), Principal::new("bob"));
        let first = slots.take(alice.clone()).unwrap();
        let _second = slots.take(alice.clone()).unwrap();

        let refused = slots.take(alice.clone()).unwrap_err();
        let _bobs = slots.take(bob).unwrap();
        drop(first);
        let _third = slots.take(alice).unwrap();

        assert_eq!(refused.status(), 429);
        assert_eq!(refused.error().code, "too_many_runs");
        assert_eq!(refused.retry_after(), Some(1));
    }

    #[test]
    fn a_principal_with_no_run_is_forgotten() {
        let slots = RunSlots::new(1);
        drop(slots.take(Principal::new("alice")).unwrap());
        assert!(slots.running.lock().unwrap().is_empty());
    }
}
