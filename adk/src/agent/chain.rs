//! [`Chain`]: what a durable run's last record holds, so that its next record can hold
//! only what changed since (checkpoint format 3, read back by
//! [`Checkpoint::load`](super::checkpoint::Checkpoint::load)).

use std::sync::Arc;

use super::checkpoint::{Continues, MAX_CHAIN};
use super::run::Run;
use crate::message::Message;
use crate::tool::ToolRecord;

/// What the run's last record holds, when it was a running record: the next running
/// record holds only what changed since (format 3), if the run's history and records
/// then begin with these. (Copies, not shared lists: a shared list would be copied
/// whole by the loop's next change.)
pub(super) struct Chain {
    /// The record's version.
    version: u64,
    /// How many records before it continue one another.
    links: usize,
    messages: Vec<Message>,
    records: Vec<Arc<ToolRecord>>,
}

impl Chain {
    /// The version of the record.
    pub(super) fn version(&self) -> u64 {
        self.version
    }

    /// Where a record of `run` continues this one, if the run's history and records
    /// begin with this one's (no hook rewrote what it holds).
    pub(super) fn continued_by(&self, run: &Run) -> Option<Continues> {
        let (messages, records) = (&run.history().messages, run.earlier_records());
        let kept = messages.get(..self.messages.len())? == &self.messages[..];
        let same = records.get(..self.records.len())?;
        let same = same
            .iter()
            .zip(&self.records)
            .all(|(a, b)| Arc::ptr_eq(a, b));
        (kept && same && self.links < MAX_CHAIN).then_some(Continues {
            version: self.version,
            messages: self.messages.len(),
            records: self.records.len(),
        })
    }

    /// The chain after `run` was written at `version`, continuing this one (`Some`) or
    /// whole.
    pub(super) fn after(
        this: Option<Box<Chain>>,
        continued: bool,
        run: &Run,
        version: u64,
    ) -> Box<Chain> {
        let (messages, records) = (&run.history().messages[..], run.earlier_records());
        match this {
            Some(mut chain) if continued => {
                chain
                    .messages
                    .extend_from_slice(&messages[chain.messages.len()..]);
                chain
                    .records
                    .extend_from_slice(&records[chain.records.len()..]);
                chain.version = version;
                chain.links += 1;
                chain
            }
            _ => Box::new(Chain {
                version,
                links: 0,
                messages: messages.to_vec(),
                records: records.to_vec(),
            }),
        }
    }
}
