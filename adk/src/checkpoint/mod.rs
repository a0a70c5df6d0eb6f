//! Durable runs: where a run's checkpoints are kept.
//!
//! A run that is interrupted (for a person's approval, say), that runs on a thread, or
//! that is durable writes its state as a checkpoint into the agent's
//! [`CheckpointStore`]; a later request resumes it or continues the thread, in this
//! process or another one that shares the store.
//!
//! | store | feature | pick it when |
//! |---|---|---|
//! | [`MemoryStore`] | always | tests; interrupts answered while the process lives |
//! | `SqliteStore` | `sqlite` | one host: one file, WAL, no server to run |
//! | `PostgresStore` | `postgres` | several hosts, with a Postgres you already run |
//! | `RedisStore` | `redis` | several hosts, records that expire, with a Redis you run |

mod store;

pub use self::store::{CheckpointStore, MemoryStore, StoreError, StoredRecord};
