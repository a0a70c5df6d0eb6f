//! [`Decided`]: one decision on a run's interrupt, with who made it and when: the audit
//! trail a thread's records keep.

use serde::{Deserialize, Serialize};

use super::Principal;
use crate::interrupt::Decision;

/// One decision on a pending interrupt: which one, what was decided, by whom and when.
/// A thread's records keep every decision made on its runs, oldest first (see
/// [`Checkpoint::audit`](crate::agent::Checkpoint::audit)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Decided {
    /// The interrupt's id.
    pub interrupt: String,
    /// What was decided.
    pub decision: Decision,
    /// Who decided: the principal of the request that resumed the run.
    pub by: Principal,
    /// When the resume that carried the decision started.
    pub at: jiff::Timestamp,
}

impl Decided {
    /// A decision on `interrupt` by `by`, now.
    pub(crate) fn now(interrupt: String, decision: Decision, by: Principal) -> Self {
        Decided {
            interrupt,
            decision,
            by,
            at: jiff::Timestamp::now(),
        }
    }
}
