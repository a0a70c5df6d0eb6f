//! Durable runs: where a run's checkpoints are kept, and what they hold.
//!
//! A run writes its state as a [`Checkpoint`] into the agent's [`CheckpointStore`]
//! (set with [`AgentBuilder::checkpoints`](crate::AgentBuilder::checkpoints); an agent
//! without one keeps them in a [`MemoryStore`] of its own) when it is interrupted (see
//! [`interrupt`](crate::interrupt)), when it runs on a thread, and after every turn when
//! it is [durable](crate::AgentBuilder::durable). A later request resumes it or continues
//! the thread, in this process or in another one that shares the store.
//!
//! # Threads
//!
//! A request that names a thread ([`AgentRequest::on_thread`](crate::AgentRequest::on_thread))
//! starts from the thread's history and saves the new history when it ends, completed or
//! interrupted; the next request on the thread goes on from there. A thread runs one run
//! at a time: the run claims the thread's head with a compare-and-swap when it starts,
//! and a second run on the thread meanwhile is refused with
//! [`CheckpointError::ThreadBusy`], never a lost update.
//!
//! # Which store
//!
//! | store | feature | pick it when |
//! |---|---|---|
//! | [`MemoryStore`] | always | tests; interrupts answered while the process lives |
//! | [`SqliteStore`] | `sqlite` | one host: one file, WAL, no server to run |
//! | [`PostgresStore`] | `postgres` | several hosts, with a Postgres you already run |
//! | [`RedisStore`] | `redis` | several hosts, records that expire, with a Redis you run |
//!
//! Each passes the conformance suite [`check_store`](crate::testing::check_store).
//!
// The stores of features that are off link to this section instead.
#![cfg_attr(not(feature = "sqlite"), doc = "[`SqliteStore`]: #which-store")]
#![cfg_attr(not(feature = "postgres"), doc = "[`PostgresStore`]: #which-store")]
#![cfg_attr(not(feature = "redis"), doc = "[`RedisStore`]: #which-store")]

#[cfg(feature = "postgres")]
mod postgres;
mod record;
#[cfg(feature = "redis")]
mod redis;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;
mod store;

#[cfg(feature = "postgres")]
pub use self::postgres::PostgresStore;
pub use self::record::{Checkpoint, CheckpointId, CheckpointStatus, FORMAT};
#[cfg(feature = "redis")]
pub use self::redis::RedisStore;
#[cfg(feature = "sqlite")]
pub use self::sqlite::SqliteStore;
pub use self::store::{CheckpointStore, MemoryStore, StoreError, StoredRecord};
/// The SQL toolkit of the `sqlite` and `postgres` stores, at the version they use: for
/// their connection options and pools.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sqlx;

/// Why a run could not be resumed, or could not start on its thread. Nothing was
/// written: the checkpoint (or the thread) is as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// No checkpoint has this id (it never existed, expired, or its thread was deleted).
    #[error("no checkpoint `{0}`")]
    Unknown(CheckpointId),
    /// The checkpoint was resumed already: its thread has gone on from it.
    #[error("the checkpoint `{0}` was used already; the thread is at version {1}")]
    Used(CheckpointId, u64),
    /// The checkpoint's run has ended; there is nothing to resume.
    #[error("the run of checkpoint `{0}` has ended")]
    Ended(CheckpointId),
    /// An interrupt of the checkpoint has no decision.
    #[error("no decision for the interrupt `{0}`")]
    MissingDecision(String),
    /// A decision names no interrupt of the checkpoint.
    #[error("the decision for `{0}` names no pending interrupt")]
    UnknownInterrupt(String),
    /// A decision that this interrupt does not take (an edit or a rejection of a hook).
    #[error("the interrupt `{id}` cannot be answered with `{decision}`")]
    WrongDecision {
        /// The interrupt.
        id: String,
        /// The decision's kind.
        decision: &'static str,
    },
    /// Edited arguments that the tool does not accept.
    #[error("the edited arguments of `{id}` are invalid: {reason}")]
    InvalidEdit {
        /// The interrupt.
        id: String,
        /// Why the tool's schema refuses them.
        reason: String,
    },
    /// Another run is running on the thread.
    #[error("another run is running on the thread `{0}`")]
    ThreadBusy(String),
    /// The thread's last run is interrupted: resume it (or delete the thread) first.
    #[error("the thread's last run waits for decisions: resume `{0}`")]
    ThreadInterrupted(CheckpointId),
    /// A record of a format version this version does not read.
    #[error("the record has format version {found}; this version reads {FORMAT}")]
    UnknownFormat {
        /// The record's format version.
        found: u32,
    },
    /// Bytes that are not a record.
    #[error("the record is corrupt: {0}")]
    Corrupt(String),
    /// A checkpoint id that is not `thread@version#run`.
    #[error("`{0}` is not a checkpoint id (thread@version#run)")]
    MalformedId(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl CheckpointError {
    /// A stable snake_case name for the kind of refusal, for logs and wire formats (see
    /// [`wire`](crate::wire)): `checkpoint_unknown`, `checkpoint_used`,
    /// `checkpoint_ended`, `missing_decision`, `unknown_interrupt`, `wrong_decision`,
    /// `invalid_edit`, `thread_busy`, `thread_interrupted`, `unknown_format`,
    /// `corrupt_checkpoint`, `malformed_checkpoint_id`, `store_failed`. A code never
    /// changes meaning; new variants bring new codes.
    ///
    /// ```
    /// use tower_adk::checkpoint::CheckpointError;
    ///
    /// assert_eq!(CheckpointError::ThreadBusy("t1".into()).code(), "thread_busy");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            CheckpointError::Unknown(_) => "checkpoint_unknown",
            CheckpointError::Used(..) => "checkpoint_used",
            CheckpointError::Ended(_) => "checkpoint_ended",
            CheckpointError::MissingDecision(_) => "missing_decision",
            CheckpointError::UnknownInterrupt(_) => "unknown_interrupt",
            CheckpointError::WrongDecision { .. } => "wrong_decision",
            CheckpointError::InvalidEdit { .. } => "invalid_edit",
            CheckpointError::ThreadBusy(_) => "thread_busy",
            CheckpointError::ThreadInterrupted(_) => "thread_interrupted",
            CheckpointError::UnknownFormat { .. } => "unknown_format",
            CheckpointError::Corrupt(_) => "corrupt_checkpoint",
            CheckpointError::MalformedId(_) => "malformed_checkpoint_id",
            CheckpointError::Store(_) => "store_failed",
        }
    }
}
