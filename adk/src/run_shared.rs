//! What a run shares across tasks (not public: it appears only inside the sealed model
//! seam, as the agent's `SharedModel` does).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What a run shares with whoever reads it and with its model calls, which may be polled
/// on other tasks: whether its events are read, and how many times the model was called.
#[derive(Debug, Clone, Default)]
pub struct RunShared(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    unread: AtomicBool,
    model_calls: AtomicUsize,
}

impl RunShared {
    /// Whether the events are read. Awaiting a run for its result says no one does from
    /// then on, and the run stops building them (only `Completed` is still sent): text
    /// deltas, messages, call and chunk events cost copies of their text.
    pub(crate) fn listening(&self) -> bool {
        !self.0.unread.load(Ordering::Relaxed)
    }

    /// No one reads the events from now on.
    pub(crate) fn leave(&self) {
        self.0.unread.store(true, Ordering::Relaxed);
    }

    /// Counts a call of the model service itself (at the inner end of the `wrap_model`
    /// chain).
    pub(crate) fn count_model_call(&self) {
        self.0.model_calls.fetch_add(1, Ordering::Relaxed);
    }

    /// How many times the model service was called.
    pub(crate) fn model_calls(&self) -> usize {
        self.0.model_calls.load(Ordering::Relaxed)
    }
}
