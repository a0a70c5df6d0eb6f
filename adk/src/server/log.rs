//! The events of streamed runs, kept for a while so that a client that reconnects with
//! `Last-Event-ID` gets the ones it missed.

use std::borrow::Borrow;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::Stream;
use hyper::body::Bytes;
use tokio::sync::Notify;

use super::sse::frame::{self, Micros};
use crate::auth::Principal;
use crate::wire::{WireError, WireEvent};

/// How much of the streamed runs the server keeps for clients that reconnect (see
/// [`Server::replay`](super::Server::replay)).
///
/// ```
/// use std::time::Duration;
/// use tower_adk::server::ReplayLimits;
///
/// let limits = ReplayLimits::default().events_per_run(256).keep_finished(Duration::from_secs(10));
/// assert_eq!(limits.runs, 1_000);
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ReplayLimits {
    /// The events kept per run, newest last (default 4,096): a client that reconnects
    /// after older ones were dropped gets from the oldest kept on.
    pub events_per_run: usize,
    /// The runs kept (default 1,000): past it the run that finished first is dropped
    /// or, if none has finished, a running one (its client streams on; only
    /// reconnecting to it is lost).
    pub runs: usize,
    /// How long a finished run's events stay (default 60 s).
    pub keep_finished: Duration,
}

impl Default for ReplayLimits {
    fn default() -> Self {
        ReplayLimits {
            events_per_run: 4_096,
            runs: 1_000,
            keep_finished: Duration::from_secs(60),
        }
    }
}

impl ReplayLimits {
    /// Sets [`events_per_run`](ReplayLimits::events_per_run).
    pub fn events_per_run(mut self, events: usize) -> Self {
        self.events_per_run = events.max(1);
        self
    }

    /// Sets [`runs`](ReplayLimits::runs).
    pub fn runs(mut self, runs: usize) -> Self {
        self.runs = runs.max(1);
        self
    }

    /// Sets [`keep_finished`](ReplayLimits::keep_finished).
    pub fn keep_finished(mut self, keep: Duration) -> Self {
        self.keep_finished = keep;
        self
    }
}

/// One event as sent: its sequence number and its SSE frame (a slice of the chunk it
/// was sent in).
#[derive(Debug, Clone)]
pub(crate) struct Logged {
    seq: u64,
    frame: Bytes,
}

/// A run's events as they are written one after the other, to be sent as one chunk (the
/// events the run had ready at once) and kept as slices of it.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    frames: Vec<u8>,
    /// Each event's number, and where its frame ends in `frames`.
    ends: Vec<(u64, usize)>,
    /// Whether the run's last event is in.
    last: bool,
}

impl Batch {
    /// A batch whose first chunk has room for `bytes`, and for the numbers of the
    /// events a run usually has.
    pub(crate) fn with_capacity(bytes: usize) -> Self {
        Batch {
            frames: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(EXPECTED_EVENTS),
            last: false,
        }
    }

    /// The bytes written so far.
    pub(crate) fn len(&self) -> usize {
        self.frames.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

/// The runs that ended, in the order they ended: each log adds itself when its run ends.
type Ended = Arc<Mutex<VecDeque<(Instant, RunId)>>>;

/// The logs of the streamed runs, by run id.
#[derive(Debug, Default)]
pub(crate) struct RunLogs {
    runs: Mutex<HashMap<RunId, Arc<RunLog>>>,
    /// What eviction looks at first, so that it does not scan every kept run on every
    /// new one. It may name runs no longer kept (evicted while they ran): skipped.
    ended: Ended,
    limits: ReplayLimits,
}

impl RunLogs {
    pub(crate) fn new(limits: ReplayLimits) -> Self {
        RunLogs {
            runs: Mutex::default(),
            ended: Ended::default(),
            limits,
        }
    }

    /// A new log for a run of `agent` for `owner`, under a new run id, timed by `clock`.
    pub(crate) fn open(&self, agent: &str, owner: Principal, clock: Clock) -> Arc<RunLog> {
        let log = Arc::new(RunLog {
            id: RunId::new(),
            agent: agent.into(),
            owner,
            clock,
            limit: self.limits.events_per_run,
            state: Mutex::default(),
            changed: Notify::new(),
            ended: Arc::clone(&self.ended),
        });
        let mut runs = lock(&self.runs);
        self.evict(&mut runs);
        runs.insert(log.id, Arc::clone(&log));
        log
    }

    /// The log of a run, if it is still kept.
    pub(crate) fn get(&self, run_id: &str) -> Option<Arc<RunLog>> {
        lock(&self.runs).get(run_id).cloned()
    }

    /// Drops the runs that finished too long ago, then the oldest while there are too
    /// many (finished ones first, in the order they finished; else a running one). Runs
    /// in the order they ended, so this costs what it drops, not what it keeps.
    fn evict(&self, runs: &mut HashMap<RunId, Arc<RunLog>>) {
        let mut ended = lock(&self.ended);
        let now = Instant::now();
        while let Some((at, _)) = ended.front() {
            if now.saturating_duration_since(*at) < self.limits.keep_finished {
                break;
            }
            if let Some((_, id)) = ended.pop_front() {
                runs.remove(&id);
            }
        }
        while runs.len() >= self.limits.runs {
            let oldest = match ended.pop_front() {
                Some((_, id)) => id,
                None => match runs.keys().next() {
                    Some(running) => *running,
                    None => break,
                },
            };
            runs.remove(&oldest);
        }
    }
}

/// A streamed run's id: a random UUID in its simple form (32 hex digits), kept inline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunId([u8; 32]);

impl RunId {
    fn new() -> Self {
        let mut id = [0; 32];
        uuid::Uuid::new_v4().simple().encode_lower(&mut id);
        RunId(id)
    }

    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Hashed as its text, so that the map of runs is read with a `&str`.
impl Hash for RunId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl Borrow<str> for RunId {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The events of one streamed run.
#[derive(Debug)]
pub(crate) struct RunLog {
    pub(crate) id: RunId,
    pub(crate) agent: Arc<str>,
    /// Whose run it is: only they replay it.
    pub(crate) owner: Principal,
    clock: Clock,
    limit: usize,
    state: Mutex<LogState>,
    changed: Notify,
    ended: Ended,
}

#[derive(Debug, Default)]
struct LogState {
    events: VecDeque<Logged>,
    /// The number of the last event written.
    written: u64,
    ended_at: Option<Instant>,
}

/// The events kept per run before the first is dropped, room made for them up front.
const EXPECTED_EVENTS: usize = 16;

impl RunLog {
    /// Writes the run's next event (numbered from 1) at the end of `batch`, its JSON
    /// with `at_ms`: `at` ([`Clock::now`], or [`Clock::started`] for what the server
    /// says when the run starts). [`keep`](RunLog::keep) sends it.
    pub(crate) fn write(&self, event: &WireEvent, at: Micros, batch: &mut Batch) {
        let seq = {
            let mut state = lock(&self.state);
            state.written += 1;
            state.written
        };
        frame::write(&mut batch.frames, seq, event, at);
        batch.ends.push((seq, batch.frames.len()));
        batch.last |= event.is_last();
    }

    /// Keeps the events of `batch`, emptied, and wakes the clients that follow the
    /// run: gives the chunk to send.
    pub(crate) fn keep(&self, batch: &mut Batch) -> Bytes {
        let mut frames = std::mem::take(&mut batch.frames);
        // What the log keeps is what was written (the room left is given back).
        frames.shrink_to_fit();
        let chunk = Bytes::from(frames);
        let mut state = lock(&self.state);
        if state.events.capacity() == 0 {
            state.events.reserve_exact(EXPECTED_EVENTS.min(self.limit));
        }
        let mut start = 0;
        for (seq, end) in batch.ends.drain(..) {
            if state.events.len() == self.limit {
                state.events.pop_front();
            }
            let frame = chunk.slice(start..end);
            state.events.push_back(Logged { seq, frame });
            start = end;
        }
        let ends = std::mem::take(&mut batch.last) && state.ended_at.is_none();
        let now = ends.then(Instant::now);
        if let Some(now) = now {
            state.ended_at = Some(now);
        }
        drop(state);
        if let Some(now) = now {
            lock(&self.ended).push_back((now, self.id));
        }
        self.changed.notify_waiters();
        chunk
    }

    /// Writes and keeps one event, sent now.
    pub(crate) fn push(&self, event: &WireEvent) -> Bytes {
        let mut batch = Batch::default();
        self.write(event, self.clock.now(), &mut batch);
        self.keep(&mut batch)
    }

    /// When it is for this run's events: see [`Clock`].
    pub(crate) fn now(&self) -> Micros {
        self.clock.now()
    }

    /// Ends a run that its client left before it ended: its last event says so.
    pub(crate) fn cancel(&self) {
        if self.ended_at().is_none() {
            let message = "the client went away; the run was cancelled";
            self.push(&WireEvent::Error(WireError::new("cancelled", message)));
        }
    }

    fn ended_at(&self) -> Option<Instant> {
        lock(&self.state).ended_at
    }

    /// The events after `after` that are still kept, and whether the run has ended.
    fn since(&self, after: u64) -> (Vec<Logged>, bool) {
        let state = lock(&self.state);
        let events = state.events.iter().filter(|e| e.seq > after).cloned();
        (events.collect(), state.ended_at.is_some())
    }

    /// The frames of the events after `after`, then the run's next ones as they come,
    /// until it ends: those kept at once in one chunk.
    pub(crate) fn follow(self: Arc<Self>, mut after: u64) -> impl Stream<Item = Bytes> {
        async_stream::stream! {
            loop {
                let mut changed = std::pin::pin!(self.changed.notified());
                changed.as_mut().enable();
                let (events, ended) = self.since(after);
                let Some(last) = events.last() else {
                    if ended {
                        break;
                    }
                    changed.await;
                    continue;
                };
                after = last.seq;
                yield match &events[..] {
                    [one] => one.frame.clone(),
                    all => all.iter().flat_map(|e| e.frame.iter().copied()).collect(),
                };
            }
        }
    }
}

/// A run's clock: the wall clock when the server took the run's request, moved on by a
/// monotonic clock, so that its events' times never go back within the run, and the
/// times of runs that follow one another (a run, then its resume) line up on one axis.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// When the run started, since the Unix epoch.
    started: Micros,
    at: Instant,
}

impl Clock {
    /// A clock from now: start it when the run's request is taken, before the run's
    /// first event (which its stream waits for) is in.
    pub(crate) fn start() -> Self {
        let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH);
        Clock {
            started: micros(since_epoch.unwrap_or_default()),
            at: Instant::now(),
        }
    }

    /// When the run started.
    pub(crate) fn started(&self) -> Micros {
        self.started
    }

    /// Now, on the run's axis.
    pub(crate) fn now(&self) -> Micros {
        Micros(self.started.0.saturating_add(micros(self.at.elapsed()).0))
    }
}

fn micros(duration: Duration) -> Micros {
    Micros(u64::try_from(duration.as_micros()).unwrap_or(u64::MAX))
}

/// Locks, through a panic of another holder: the log stays readable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logs(runs: usize, keep_finished: Duration) -> RunLogs {
        RunLogs::new(
            ReplayLimits::default()
                .runs(runs)
                .keep_finished(keep_finished),
        )
    }

    fn end(log: &RunLog) {
        log.push(&WireEvent::Error(WireError::new(
            "failed",
            "the run failed",
        )));
    }

    fn kept(logs: &RunLogs, log: &RunLog) -> bool {
        logs.get(log.id.as_str()).is_some()
    }

    #[test]
    fn the_run_that_ended_first_goes_first() {
        let logs = logs(3, Duration::from_secs(60));
        let (a, b, c) = (
            logs.open("x", Principal::anonymous(), Clock::start()),
            logs.open("x", Principal::anonymous(), Clock::start()),
            logs.open("x", Principal::anonymous(), Clock::start()),
        );
        end(&b);
        end(&a);
        let d = logs.open("x", Principal::anonymous(), Clock::start());
        assert!(!kept(&logs, &b), "b ended first");
        assert!(kept(&logs, &a) && kept(&logs, &c) && kept(&logs, &d));
        let e = logs.open("x", Principal::anonymous(), Clock::start());
        assert!(!kept(&logs, &a), "then a");
        assert!(kept(&logs, &c) && kept(&logs, &d) && kept(&logs, &e));
    }

    #[test]
    fn a_running_run_goes_when_none_ended() {
        let logs = logs(2, Duration::from_secs(60));
        let (a, b) = (
            logs.open("x", Principal::anonymous(), Clock::start()),
            logs.open("x", Principal::anonymous(), Clock::start()),
        );
        let c = logs.open("x", Principal::anonymous(), Clock::start());
        assert_eq!([&a, &b].iter().filter(|l| kept(&logs, l)).count(), 1);
        assert!(kept(&logs, &c));
        // The run dropped while running ends later: it is not counted again.
        end(&a);
        end(&b);
        let d = logs.open("x", Principal::anonymous(), Clock::start());
        assert!(kept(&logs, &d));
        assert_eq!(lock(&logs.runs).len(), 2);
    }

    #[test]
    fn finished_runs_expire() {
        let logs = logs(100, Duration::ZERO);
        let (a, b) = (
            logs.open("x", Principal::anonymous(), Clock::start()),
            logs.open("x", Principal::anonymous(), Clock::start()),
        );
        end(&a);
        let c = logs.open("x", Principal::anonymous(), Clock::start());
        assert!(!kept(&logs, &a), "a ended longer ago than keep_finished");
        assert!(kept(&logs, &b) && kept(&logs, &c), "b and c still run");
        assert!(lock(&logs.ended).is_empty());
    }

    #[test]
    fn events_carry_when_they_were_sent_and_still_read_as_wire_events() {
        let logs = logs(100, Duration::from_secs(60));
        let clock = Clock::start();
        let log = logs.open("x", Principal::anonymous(), clock);
        std::thread::sleep(Duration::from_millis(5));
        let started = WireEvent::Filler {
            text: "first".into(),
        };
        let mut batch = Batch::default();
        log.write(&started, clock.started(), &mut batch);
        let at_start = log.keep(&mut batch);
        let later = log.push(&WireEvent::Filler {
            text: "later".into(),
        });

        let read = |frame: &Bytes| -> serde_json::Value {
            let frame = std::str::from_utf8(frame).unwrap_or_default();
            let data = frame.lines().find_map(|line| line.strip_prefix("data: "));
            serde_json::from_str(data.unwrap_or_default()).unwrap_or_default()
        };
        let (first, second) = (read(&at_start), read(&later));
        let (first_ms, second_ms) = (first["at_ms"].as_f64(), second["at_ms"].as_f64());
        let (Some(first_ms), Some(second_ms)) = (first_ms, second_ms) else {
            panic!("no at_ms: {first} {second}");
        };
        assert!(second_ms - first_ms >= 5.0, "{first_ms} then {second_ms}");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        assert!((now.as_secs_f64() * 1000.0 - second_ms).abs() < 60_000.0);
        let event: WireEvent = serde_json::from_value(second).unwrap_or(WireEvent::Unknown);
        assert_eq!(
            event,
            WireEvent::Filler {
                text: "later".into()
            }
        );
    }

    #[test]
    fn a_batch_goes_out_as_one_chunk_and_is_kept_event_by_event() {
        let logs = logs(100, Duration::from_secs(60));
        let log = logs.open("x", Principal::anonymous(), Clock::start());
        let mut batch = Batch::with_capacity(64);
        for text in ["a", "b", "c"] {
            let event = WireEvent::Filler { text: text.into() };
            log.write(&event, log.now(), &mut batch);
        }
        let chunk = log.keep(&mut batch);
        assert!(batch.is_empty());

        let (kept, ended) = log.since(1);
        assert!(!ended);
        assert_eq!(kept.iter().map(|e| e.seq).collect::<Vec<_>>(), [2, 3]);
        let frames: Vec<&[u8]> = kept.iter().map(|e| &e.frame[..]).collect();
        assert!(chunk.ends_with(&frames.concat()));
        let text = String::from_utf8_lossy(&chunk);
        assert_eq!(text.matches("\n\n").count(), 3, "{text}");
        assert!(
            text.starts_with("event: filler\nid: 1\ndata: {\"v\":1,"),
            "{text}"
        );
        assert!(String::from_utf8_lossy(frames[1]).starts_with("event: filler\nid: 3\n"));
    }

    #[test]
    fn a_cancelled_run_ends_once() {
        let logs = logs(100, Duration::from_secs(60));
        let a = logs.open("x", Principal::anonymous(), Clock::start());
        end(&a);
        a.cancel();
        assert_eq!(lock(&logs.ended).len(), 1);
        assert_eq!(a.since(0).0.len(), 1, "no `cancelled` error after the end");
    }
}
