//! Durable runs: where a run's checkpoints are kept, and what they hold.
//!
//! A run writes its state as a [`Checkpoint`](crate::agent::Checkpoint) into the agent's [`CheckpointStore`]
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
//! [`CheckpointError::ThreadBusy`], never a lost update. A claim holds for a lease
//! ([`AgentBuilder::claim_lease`](crate::AgentBuilder::claim_lease)) that the run
//! renews as it goes, so the thread of a run whose process died is free again once it
//! runs out.
//!
//! # Outages
//!
//! Each operation of the SQLite, PostgreSQL and Redis stores ends within the store's
//! `operation_timeout` ([`OPERATION_TIMEOUT`] unless set), so a run whose checkpoint
//! cannot be written ends within one bound. A failed write is either not applied
//! ([`StoreError::Backend`], code `store_failed`) or of unknown outcome: sent, but its
//! answer never came ([`StoreError::OutcomeUnknown`]; for a run's record
//! [`CheckpointError::OutcomeUnknown`], code `checkpoint_outcome_unknown`). Then the
//! thread's head tells: the run's completed record there means the run succeeded.
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

#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
mod bound;
mod error;
mod id;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "redis")]
mod redis;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;
mod store;
mod timeout;

pub use self::error::CheckpointError;
pub use self::id::{CheckpointId, MalformedId};
pub use self::memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use self::postgres::PostgresStore;
#[cfg(feature = "redis")]
pub use self::redis::RedisStore;
#[cfg(feature = "sqlite")]
pub use self::sqlite::SqliteStore;
pub use self::store::{CheckpointStore, StoreError, StoredRecord, ThreadEntry};
pub use self::timeout::{OPERATION_TIMEOUT, TimedOut};
/// The SQL toolkit of the `sqlite` and `postgres` stores, at the version they use: for
/// their connection options and pools.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sqlx;

/// The newest format of the records this version writes and reads: 3.
///
/// - Format 3 is a record that holds only what changed since an earlier record of its
///   run: the messages and tool records of the turns since, and the run's other
///   fields. A durable run writes one after each turn, so that a turn's write does not
///   grow with the thread's history. [`Checkpoint::load`] reads it through the store.
/// - Format 2 holds everything, with the thread's owner and its audit trail: the first
///   record of each run, and the records it ends with, are written so (versions before
///   this one read them too).
/// - Format 1 is format 2 without the owner and the audit trail.
///
/// [`Checkpoint::decode`] reads formats 1 and 2, and refuses the others.
///
/// [`Checkpoint::decode`]: crate::agent::Checkpoint::decode
/// [`Checkpoint::load`]: crate::agent::Checkpoint::load
pub const FORMAT: u32 = 3;
