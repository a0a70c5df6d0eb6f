//! Token usage: what one model call used ([`Usage`]), and [`UsageMeter`], which adds up
//! the usage of the calls that find it in their request's extensions.

use std::ops::{Add, AddAssign};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The tokens one model call used, as the server counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens of the prompt: the history, the instruction and the tool schemas.
    pub prompt_tokens: u64,
    /// Tokens the model produced.
    pub completion_tokens: u64,
    /// All tokens of the call (usually the sum of the two above).
    pub total_tokens: u64,
}

impl Usage {
    /// A usage from its three counts.
    pub fn new(prompt_tokens: u64, completion_tokens: u64, total_tokens: u64) -> Self {
        Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens,
        }
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
            total_tokens: self.total_tokens.saturating_add(other.total_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// Adds up the [`Usage`] of the model calls that see it.
///
/// Put a meter in a request's extensions (an `AgentRequest`'s for a whole run, a
/// `ModelRequest`'s for one call); a model that reports usage adds each call's usage to
/// the meter it finds there once the call's reply is complete (for a streamed reply: when
/// the stream ends). Clones share their counts, so keep one clone to read.
///
/// # Example
///
/// ```
/// use tower_adk::model::{Usage, UsageMeter};
///
/// let meter = UsageMeter::new();
/// let seen_by_the_model = meter.clone();
/// seen_by_the_model.record(Usage::new(12, 3, 15));
/// seen_by_the_model.record(Usage::new(20, 5, 25));
///
/// assert_eq!(meter.total(), Usage::new(32, 8, 40));
/// assert_eq!(meter.calls(), 2);
/// ```
#[derive(Debug, Clone, Default)]
pub struct UsageMeter(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    prompt: AtomicU64,
    completion: AtomicU64,
    total: AtomicU64,
    calls: AtomicU64,
}

impl UsageMeter {
    /// A meter at zero.
    pub fn new() -> Self {
        UsageMeter::default()
    }

    /// Adds the usage of one call.
    pub fn record(&self, usage: Usage) {
        let counts = &self.0;
        counts
            .prompt
            .fetch_add(usage.prompt_tokens, Ordering::Relaxed);
        counts
            .completion
            .fetch_add(usage.completion_tokens, Ordering::Relaxed);
        counts
            .total
            .fetch_add(usage.total_tokens, Ordering::Relaxed);
        counts.calls.fetch_add(1, Ordering::Relaxed);
    }

    /// The usage recorded so far, added up.
    pub fn total(&self) -> Usage {
        let counts = &self.0;
        Usage {
            prompt_tokens: counts.prompt.load(Ordering::Relaxed),
            completion_tokens: counts.completion.load(Ordering::Relaxed),
            total_tokens: counts.total.load(Ordering::Relaxed),
        }
    }

    /// How many calls recorded their usage.
    pub fn calls(&self) -> u64 {
        self.0.calls.load(Ordering::Relaxed)
    }
}
