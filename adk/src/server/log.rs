//! The events of streamed runs, kept for a while so that a client that reconnects with
//! `Last-Event-ID` gets the ones it missed.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::response::sse::Event;
use futures::Stream;
use serde::Serialize;
use tokio::sync::Notify;

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

/// One event as sent: its sequence number, type and JSON.
#[derive(Debug, Clone)]
pub(crate) struct Logged {
    seq: u64,
    kind: &'static str,
    data: Arc<str>,
}

impl Logged {
    /// The SSE event: `event:` the type, `id:` the sequence number, `data:` the JSON.
    pub(crate) fn to_sse(&self) -> Event {
        Event::default()
            .event(self.kind)
            .id(self.seq.to_string())
            .data(&*self.data)
    }
}

/// The runs that ended, in the order they ended: each log adds itself when its run ends.
type Ended = Arc<Mutex<VecDeque<(Instant, Arc<str>)>>>;

/// The logs of the streamed runs, by run id.
#[derive(Debug, Default)]
pub(crate) struct RunLogs {
    runs: Mutex<HashMap<Arc<str>, Arc<RunLog>>>,
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
            id: uuid::Uuid::new_v4().simple().to_string().into(),
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
        runs.insert(Arc::clone(&log.id), Arc::clone(&log));
        log
    }

    /// The log of a run, if it is still kept.
    pub(crate) fn get(&self, run_id: &str) -> Option<Arc<RunLog>> {
        lock(&self.runs).get(run_id).cloned()
    }

    /// Drops the runs that finished too long ago, then the oldest while there are too
    /// many (finished ones first, in the order they finished; else a running one). Runs
    /// in the order they ended, so this costs what it drops, not what it keeps.
    fn evict(&self, runs: &mut HashMap<Arc<str>, Arc<RunLog>>) {
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
                    Some(running) => Arc::clone(running),
                    None => break,
                },
            };
            runs.remove(&oldest);
        }
    }
}

/// The events of one streamed run.
#[derive(Debug)]
pub(crate) struct RunLog {
    pub(crate) id: Arc<str>,
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
    sent: u64,
    ended_at: Option<Instant>,
}

impl RunLog {
    /// Appends an event (numbered from 1) and wakes the clients that follow the run.
    /// Its JSON carries `at_ms`, when it was sent (see [`Clock`]).
    pub(crate) fn push(&self, event: &WireEvent) -> Logged {
        self.push_at(event, self.clock.now_ms())
    }

    /// Appends an event that happened at `at_ms`, when the run started (see
    /// [`Clock::started_ms`]).
    pub(crate) fn push_at(&self, event: &WireEvent, at_ms: f64) -> Logged {
        let stamped = Stamped { event, at_ms };
        let data = serde_json::to_string(&stamped).unwrap_or_else(|e| format!("{e}"));
        let mut state = lock(&self.state);
        state.sent += 1;
        let logged = Logged {
            seq: state.sent,
            kind: event.kind(),
            data: data.into(),
        };
        if state.events.len() == self.limit {
            state.events.pop_front();
        }
        state.events.push_back(logged.clone());
        let ends = event.is_last() && state.ended_at.is_none();
        let now = Instant::now();
        if ends {
            state.ended_at = Some(now);
        }
        drop(state);
        if ends {
            lock(&self.ended).push_back((now, Arc::clone(&self.id)));
        }
        self.changed.notify_waiters();
        logged
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

    /// The events after `after`, then the run's next ones as they come, until it ends.
    pub(crate) fn follow(self: Arc<Self>, mut after: u64) -> impl Stream<Item = Logged> {
        async_stream::stream! {
            loop {
                let mut changed = std::pin::pin!(self.changed.notified());
                changed.as_mut().enable();
                let (events, ended) = self.since(after);
                if events.is_empty() {
                    if ended {
                        break;
                    }
                    changed.await;
                    continue;
                }
                for event in events {
                    after = event.seq;
                    yield event;
                }
            }
        }
    }
}

/// An event as sent: its wire form, then `at_ms`.
#[derive(Serialize)]
struct Stamped<'a> {
    #[serde(flatten)]
    event: &'a WireEvent,
    at_ms: f64,
}

/// A run's clock: the wall clock when the server took the run's request, moved on by a
/// monotonic clock, so that its events' times never go back within the run, and the
/// times of runs that follow one another (a run, then its resume) line up on one axis.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// Milliseconds since the Unix epoch when the run started.
    started_ms: f64,
    started: Instant,
}

impl Clock {
    /// A clock from now: start it when the run's request is taken, before the run's
    /// first event (which its stream waits for) is in.
    pub(crate) fn start() -> Self {
        let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH);
        Clock {
            started_ms: since_epoch.unwrap_or_default().as_secs_f64() * 1000.0,
            started: Instant::now(),
        }
    }

    /// When the run started, in milliseconds since the Unix epoch.
    pub(crate) fn started_ms(&self) -> f64 {
        micros(self.started_ms)
    }

    /// Milliseconds since the Unix epoch, to the microsecond.
    fn now_ms(&self) -> f64 {
        micros(self.started_ms + self.started.elapsed().as_secs_f64() * 1000.0)
    }
}

/// Milliseconds rounded to the microsecond.
fn micros(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
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
        logs.get(&log.id).is_some()
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
        let at_start = log.push_at(&started, clock.started_ms());
        let later = log.push(&WireEvent::Filler {
            text: "later".into(),
        });

        let read = |logged: &Logged| -> serde_json::Value {
            serde_json::from_str(&logged.data).unwrap_or_default()
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
    fn a_cancelled_run_ends_once() {
        let logs = logs(100, Duration::from_secs(60));
        let a = logs.open("x", Principal::anonymous(), Clock::start());
        end(&a);
        a.cancel();
        assert_eq!(lock(&logs.ended).len(), 1);
        assert_eq!(a.since(0).0.len(), 1, "no `cancelled` error after the end");
    }
}
