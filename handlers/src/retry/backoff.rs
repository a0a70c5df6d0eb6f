//! Jitter that differs from one call to the next.

use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tower::retry::backoff::{ExponentialBackoff, ExponentialBackoffMaker, MakeBackoff};
use tower::util::rng::Rng;

/// A random number generator for tower's backoffs whose clones share one sequence.
///
/// tower's [`ExponentialBackoffMaker`] gives each backoff session (each call) a clone of
/// its generator. With tower's [`HasherRng`](tower::util::rng::HasherRng), a clone repeats
/// the numbers of the original, so every call retried under one policy waits the same
/// "random" delays, and calls that fail together retry together: the jitter does not
/// spread them. Clones of a `SharedRng` draw from one shared counter (an atomic, no lock),
/// so each call gets its own jitter. [`RetryPolicy::new`](super::RetryPolicy::new) uses it.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use tower_adk::handlers::retry::SharedRng;
/// use tower_adk::handlers::RetryPolicy;
/// use tower::retry::backoff::ExponentialBackoffMaker;
///
/// let backoff = ExponentialBackoffMaker::new(
///     Duration::from_millis(100),
///     Duration::from_secs(5),
///     0.5,
///     SharedRng::new(),
/// )?;
/// let policy = RetryPolicy::new(3).backoff(backoff);
/// # let _ = policy;
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct SharedRng {
    counter: Arc<AtomicU64>,
    keys: RandomState,
}

impl SharedRng {
    /// A generator with random keys.
    pub fn new() -> Self {
        SharedRng::default()
    }
}

impl Rng for SharedRng {
    fn next_u64(&mut self) -> u64 {
        let mut hasher = self.keys.build_hasher();
        hasher.write_u64(self.counter.fetch_add(1, Ordering::Relaxed));
        hasher.finish()
    }
}

/// The default backoff of a [`RetryPolicy`](super::RetryPolicy): from 50ms, doubling, up
/// to 10s, each delay plus up to 100% random jitter.
#[allow(
    clippy::expect_used,
    reason = "constant arguments that tower accepts; a unit test checks them"
)]
pub(crate) fn default_backoff() -> ExponentialBackoff<SharedRng> {
    ExponentialBackoffMaker::new(
        Duration::from_millis(50),
        Duration::from_secs(10),
        1.0,
        SharedRng::new(),
    )
    .expect("valid backoff bounds")
    .make_backoff()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use tokio::time::Instant;
    use tower::retry::backoff::Backoff;
    use tower::util::rng::HasherRng;

    use super::*;

    /// The deadlines of the first backoff of two sessions of one maker.
    fn first_delays<R: Rng + Clone>(rng: R) -> (Instant, Instant) {
        let mut maker = ExponentialBackoffMaker::new(
            Duration::from_millis(100),
            Duration::from_secs(60),
            1.0,
            rng,
        )
        .unwrap();
        let (mut a, mut b) = (maker.make_backoff(), maker.make_backoff());
        (a.next_backoff().deadline(), b.next_backoff().deadline())
    }

    #[tokio::test(start_paused = true)]
    async fn sessions_of_one_maker_get_their_own_jitter_with_a_shared_rng() {
        // The control: tower's own generator gives both sessions the same delay.
        let (a, b) = first_delays(HasherRng::default());
        assert_eq!(a, b);

        let (a, b) = first_delays(SharedRng::new());
        assert_ne!(a, b);
    }

    #[tokio::test(start_paused = true)]
    async fn the_default_backoff_starts_at_50ms_plus_jitter() {
        let start = Instant::now();
        let first = default_backoff().next_backoff().deadline() - start;
        assert!(
            Duration::from_millis(50) <= first && first <= Duration::from_millis(100),
            "{first:?}"
        );
    }
}
