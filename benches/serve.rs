//! Serving over HTTP: streamed runs of the `server` feature's router over loopback, driven
//! by a real HTTP load generator (`wrk`, Debian's package; `scripts/setup-load` installs
//! it), side by side with the same agent called in-process.
//!
//! ```text
//! scripts/setup-load
//! cargo bench --features server --bench serve
//! ```
//!
//! The agent (`stream`): a scripted model whose first turn says `Let me track it.` and
//! calls `track` with `{"order": 7}`, and whose second turn streams its answer in three
//! chunks (`Order 7 `, `arrives `, `tomorrow.`); `track` answers `in transit` at once. A
//! run is `POST /agents/stream/runs` with `{"input": "Where is order 7?"}` and `Accept:
//! text/event-stream`: 10 SSE events, about 1 KB. `wrk` keeps every connection busy (a
//! new run as soon as the last one's stream ended); its latency is from the request sent
//! to the last byte of the stream; a 2xx body without the `completed` event counts as an
//! error, so do non-2xx answers and socket errors (all must be 0).
//!
//! Each round measures, for 1 and for 1,000 at a time: the agent in-process (`agent.run`,
//! every event read; one task per concurrent caller, on the server's runtime), then the
//! same runs over HTTP, then the floor: a bare axum handler on the same `axum::serve`
//! that answers every `POST` with the SSE events of one of our runs, the same bytes
//! (captured from a run before the rounds), through axum's `Sse`, with no agent: what
//! HTTP and SSE cost by themselves. The server, `wrk` and the in-process callers share the machine's
//! cores. 3 rounds; the table gives each figure's median. Besides runs per second and
//! latency, the CPU time this process used per run (user and system, all threads, from
//! `/proc/self/stat`): over HTTP that is the server's share (wrk is another process); it
//! moves less than the wall-clock figures when other work shares the machine.
//!
//! Before the rounds, the memory per open stream: a second agent (`hold`) whose tool
//! waits 10 s holds `wrk`'s 1,000 connections open in the tool call (each stream has sent
//! its first 5 events); the figure is (resident set of this process with all 1,000 open -
//! resident set before) / 1,000: the connection, the run, its task and its replay log.
//! `wrk` then closes them, and every run must be cancelled. The floor's figure is taken
//! the same way, its handler sending the same first 5 events and then waiting 10 s. Each
//! figure comes from a process of its own (the bench runs itself again): in one process
//! the streams measured second would reuse the memory the first ones freed, which the
//! allocator keeps, and look smaller than they are.
//!
//! With the feature `a2a` (`cargo bench --features server,a2a --bench serve`), two more
//! rows: the same run over A2A, `SendStreamingMessage` on `POST /agents/stream/a2a`
//! (JSON-RPC, `A2A-Version: 1.0`), its stream read until `TASK_STATE_COMPLETED`; the
//! body benches/peers/a2a-sdk posts to a2a-sdk's own server, by the same wrk script.
//!
//! `cargo test --features server --bench serve` (no `--bench` argument) does a quick run
//! instead: 10 connections for 1 s each, and asserts the same (no errors, runs done,
//! disconnected runs cancelled); timings are printed, not checked.
//!
//! # Some rows only
//!
//! `SERVE_ROWS` names the rows to run, by key, comma-separated: `local-1`, `http-1`,
//! `floor-1`, `local-n`, `http-n`, `floor-n`, `a2a-1`, `a2a-n`, `memory` (both memory
//! figures), `memory-ours` and `memory-floor` (one of them); `SERVE_ROUNDS` and `SERVE_SECS` set the rounds and each row's seconds,
//! `SERVE_STREAMS` the streams held open for the memory figures. The
//! process prints its id first, for `perf stat -p` or `perf record -p` while a row runs:
//!
//! ```text
//! SERVE_ROWS=http-n,floor-n SERVE_ROUNDS=1 cargo bench --features server --bench serve
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod workloads;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::response::sse::{Event, Sse};
use axum::routing::post;
use futures::StreamExt;
use serde_json::{Value, json};
use tower_adk::server::{ServedAgent, Server};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentEvent, AgentRequest, Tool, ToolInfo, ToolOutput, ToolRequest};

/// The question of every run.
const INPUT: &str = "Where is order 7?";
/// The `wrk` script: POSTs the run, checks the streamed body, prints JSON.
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/serve/stream.lua");
/// How long the `hold` agent's tool keeps its stream open.
const HOLD: Duration = Duration::from_secs(10);

/// How much to measure: `cargo bench` or the quick run of `cargo test`.
struct Plan {
    concurrency: usize,
    secs: u64,
    rounds: usize,
    open_streams: usize,
}

impl Plan {
    fn new() -> Self {
        let plan = if std::env::args().any(|arg| arg == "--bench") {
            Plan {
                concurrency: 1_000,
                secs: 10,
                rounds: 3,
                open_streams: 1_000,
            }
        } else {
            Plan {
                concurrency: 10,
                secs: 1,
                rounds: 1,
                open_streams: 10,
            }
        };
        let number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        Plan {
            secs: number("SERVE_SECS").unwrap_or(plan.secs),
            rounds: number("SERVE_ROUNDS").map_or(plan.rounds, |r| r.max(1) as usize),
            open_streams: number("SERVE_STREAMS").map_or(plan.open_streams, |n| n.max(1) as usize),
            ..plan
        }
    }

    /// Whether `SERVE_ROWS` (all rows when unset) names the row of this key.
    fn runs(key: &str) -> bool {
        std::env::var("SERVE_ROWS").map_or(true, |rows| rows.split(',').any(|r| r.trim() == key))
    }
}

/// The scripted model: a tool call, then a streamed answer; the same on every run.
fn model() -> ScriptedModel {
    ScriptedModel::per_run([
        Turn::text("Let me track it.").with_call("c1", "track", json!({"order": 7})),
        Turn::stream(["Order 7 ", "arrives ", "tomorrow."]),
    ])
    .without_records()
}

fn agent(name: &str, track: Tool) -> Agent {
    Agent::builder(model())
        .name(name)
        .tool(track)
        .build()
        .expect("the bench agent builds")
}

/// Counts the runs inside the `hold` agent's tool; dropped (the run ended or was
/// cancelled), it counts them out again.
struct Inside(Arc<AtomicUsize>);

impl Inside {
    fn enter(open: &Arc<AtomicUsize>) -> Self {
        open.fetch_add(1, Ordering::SeqCst);
        Inside(Arc::clone(open))
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// `track` as the `hold` agent has it: answers after [`HOLD`], counted in `open` while it
/// waits.
fn holding_track(open: Arc<AtomicUsize>) -> Tool {
    Tool::from_fn(
        ToolInfo::new("track", "Tracks an order."),
        move |_: ToolRequest| {
            let inside = Inside::enter(&open);
            async move {
                tokio::time::sleep(HOLD).await;
                drop(inside);
                Ok::<_, std::convert::Infallible>(ToolOutput::new("in transit"))
            }
        },
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Serves `server` on a free port of 127.0.0.1 until the task is aborted.
fn serve(
    rt: &tokio::runtime::Runtime,
    server: Server,
) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    serve_router(rt, server.into_router())
}

/// The floor: what serving the same run costs with no agent at all. A bare axum handler
/// (`POST /stream`) that answers with the same SSE events, of the same bytes (event
/// names, ids and JSON, captured from a run of ours), one by one, through axum's `Sse`
/// on the same `axum::serve`; and `POST /hold`, which sends the first 5 and then waits
/// [`HOLD`] (counted in `open` meanwhile), as the `hold` agent's streams do.
fn floor(events: Vec<Event>, open: Arc<AtomicUsize>) -> axum::Router {
    let events: Arc<[Event]> = events.into();
    let all = Arc::clone(&events);
    axum::Router::new()
        .route(
            "/stream",
            post(move |_: Bytes| {
                let events = Arc::clone(&all);
                async move {
                    let events =
                        (0..events.len()).map(move |i| Ok::<_, Infallible>(events[i].clone()));
                    Sse::new(futures::stream::iter(events))
                }
            }),
        )
        .route(
            "/hold",
            post(move |_: Bytes| {
                let (events, open) = (Arc::clone(&events), Arc::clone(&open));
                async move {
                    let first: Vec<_> = events
                        .iter()
                        .take(5)
                        .cloned()
                        .map(Ok::<_, Infallible>)
                        .collect();
                    let held = futures::stream::once(async move {
                        let inside = Inside::enter(&open);
                        tokio::time::sleep(HOLD).await;
                        drop(inside);
                        futures::stream::iter((5..events.len()).map(move |i| Ok(events[i].clone())))
                    })
                    .flatten();
                    Sse::new(futures::stream::iter(first).chain(held))
                }
            }),
        )
}

/// The events of a streamed body of ours, as axum `Event`s of the same bytes.
fn events_of(body: &str) -> Vec<Event> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            block.lines().fold(Event::default(), |event, line| {
                match line.split_once(": ") {
                    Some(("event", name)) => event.event(name),
                    Some(("id", id)) => event.id(id),
                    Some(("data", data)) => event.data(data),
                    _ => panic!("a line of our SSE that the floor does not know: {line:?}"),
                }
            })
        })
        .collect()
}

/// Serves `router` on a free port of 127.0.0.1 until the task is aborted.
fn serve_router(
    rt: &tokio::runtime::Runtime,
    router: axum::Router,
) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a free port on 127.0.0.1");
    let addr = listener.local_addr().expect("the listener's address");
    // A connection shares the router (`into_make_service`): given the `Router` itself,
    // `axum::serve` would copy every route of it for each connection, which costs ours
    // (many routes) more than the floor (two).
    let task = rt.spawn(async move {
        axum::serve(listener, router.into_make_service())
            .await
            .expect("the server runs");
    });
    (addr, task)
}

/// The figures of one measurement.
#[derive(Debug, Clone, Copy, Default)]
struct Figures {
    runs: u64,
    runs_per_sec: f64,
    p50_us: f64,
    p99_us: f64,
    errors: u64,
    /// CPU time of this process (the server, or the in-process callers) per run.
    cpu_us_per_run: f64,
}

/// What `wrk` posts, where, and how it tells a run that finished.
#[derive(Debug, Clone)]
struct Target {
    url: String,
    body: String,
    /// Text that only the body of a run that finished holds.
    done: &'static str,
    /// One more request header, `Name: value`.
    header: Option<&'static str>,
}

impl Target {
    /// A run over A2A (feature `a2a`): `SendStreamingMessage` on the agent's JSON-RPC
    /// endpoint, `POST /agents/{agent}/a2a`, the body benches/peers/a2a-sdk posts too.
    #[cfg(feature = "a2a")]
    fn a2a(addr: SocketAddr, agent: &str) -> Self {
        let message = json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": INPUT}]});
        Target {
            url: format!("http://{addr}/agents/{agent}/a2a"),
            body: json!({
                "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                "params": {"message": message},
            })
            .to_string(),
            done: "TASK_STATE_COMPLETED",
            header: Some("A2A-Version: 1.0"),
        }
    }

    /// A run of our own route, `POST /agents/{agent}/runs`.
    fn runs(addr: SocketAddr, agent: &str) -> Self {
        Target {
            url: format!("http://{addr}/agents/{agent}/runs"),
            body: json!({ "input": INPUT }).to_string(),
            done: "event: completed",
            header: None,
        }
    }
}

/// `wrk` against `target`: `connections` at a time for `secs`, its body posted each time.
fn wrk(target: &Target, connections: usize, secs: u64) -> (Figures, Value) {
    let program = std::env::var("WRK").unwrap_or_else(|_| "wrk".to_owned());
    let threads = connections.clamp(1, 2);
    let mut command = Command::new(&program);
    if let Some(header) = target.header {
        command.env("SERVE_HEADER", header);
    }
    let output = command
        .args([
            format!("--threads={threads}"),
            format!("--connections={connections}"),
            format!("--duration={secs}s"),
            "--timeout=30s".to_owned(),
            format!("--script={SCRIPT}"),
            target.url.clone(),
        ])
        .env("SERVE_BODY", &target.body)
        .env("SERVE_DONE", target.done)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot start `{program}` ({e}): run scripts/setup-load, or set WRK")
        });
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "wrk failed ({}): {stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("no JSON line in wrk's output: {stdout}"));
    let count = |key: &str| {
        report[key]
            .as_u64()
            .unwrap_or_else(|| panic!("no {key}: {report}"))
    };
    let errors = [
        "connect",
        "read",
        "write",
        "status",
        "timeout",
        "incomplete",
    ]
    .iter()
    .map(|key| count(key))
    .sum();
    let secs = count("duration_us") as f64 / 1e6;
    let figures = Figures {
        runs: count("requests"),
        runs_per_sec: count("requests") as f64 / secs,
        p50_us: count("p50_us") as f64,
        p99_us: count("p99_us") as f64,
        errors,
        cpu_us_per_run: 0.0,
    };
    (figures, report)
}

/// `concurrency` tasks calling the agent in-process for `secs`, each run read to its end.
async fn in_process(agent: Agent, concurrency: usize, secs: u64) -> Figures {
    let start = Instant::now();
    let until = start + Duration::from_secs(secs);
    let callers: Vec<_> = (0..concurrency)
        .map(|_| {
            let agent = agent.clone();
            tokio::spawn(async move {
                let (mut latencies, mut errors) = (Vec::new(), 0u64);
                while Instant::now() < until {
                    let begun = Instant::now();
                    let mut run = agent.run(AgentRequest::user(INPUT));
                    let mut failed = false;
                    while let Some(event) = run.next().await {
                        failed |= std::hint::black_box(event).is_err();
                    }
                    errors += u64::from(failed);
                    latencies.push(begun.elapsed().as_micros() as u64);
                }
                (latencies, errors)
            })
        })
        .collect();
    let (mut latencies, mut errors) = (Vec::new(), 0);
    for caller in futures::future::join_all(callers).await {
        let (some, failed) = caller.expect("a caller task");
        latencies.extend(some);
        errors += failed;
    }
    let elapsed = start.elapsed().as_secs_f64();
    latencies.sort_unstable();
    Figures {
        runs: latencies.len() as u64,
        runs_per_sec: latencies.len() as f64 / elapsed,
        p50_us: percentile(&latencies, 50.0),
        p99_us: percentile(&latencies, 99.0),
        errors,
        cpu_us_per_run: 0.0,
    }
}

/// The CPU time this process has used so far (all its threads, user and system), in
/// seconds: fields 14 and 15 of `/proc/self/stat`, in clock ticks of 1/100 s (Linux's
/// USER_HZ).
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses: state is the first.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (ticks(11) + ticks(12)) as f64 / 100.0
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = (p / 100.0 * (sorted.len() - 1) as f64).round() as usize;
    sorted[at] as f64
}

/// The resident set of this process with `streams` streams held open, against before.
struct Memory {
    idle_kib: usize,
    open_kib: usize,
    open: usize,
}

/// Holds `streams` streamed runs open on `target` (wrk's connections; the server counts
/// in `open` those waiting) and samples the resident set; then checks that the runs wrk
/// left behind were cancelled.
fn memory_per_stream(name: &str, target: &Target, open: &AtomicUsize, streams: usize) -> Memory {
    let wait_closed = || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while open.load(Ordering::SeqCst) > 0 {
            assert!(
                Instant::now() < deadline,
                "{} runs still in their tool 60 s after their clients went away",
                open.load(Ordering::SeqCst)
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    // A few streams first: the runtime, the allocator and the server warm up.
    wrk(target, 10.min(streams), 1);
    wait_closed();
    std::thread::sleep(Duration::from_millis(200));
    let idle_kib = workloads::rss_kib("VmRSS");

    let done = AtomicBool::new(false);
    let (figures, (most, open_kib)) = std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            // The largest resident set seen while the most streams were open.
            let (mut most, mut kib) = (0, 0);
            while !done.load(Ordering::SeqCst) {
                let now = open.load(Ordering::SeqCst);
                let rss = workloads::rss_kib("VmRSS");
                if now > most || (now == most && rss > kib) {
                    (most, kib) = (now, rss);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            (most, kib)
        });
        // Shorter than HOLD: every connection's first run is still waiting when wrk
        // closes the connections.
        let secs = if streams > 100 { 5 } else { 2 };
        let (figures, _) = wrk(target, streams, secs);
        done.store(true, Ordering::SeqCst);
        (figures, sampler.join().expect("the sampler"))
    });
    assert_eq!(figures.runs, 0, "a held run ended before wrk closed it");
    assert_eq!(most, streams, "not every connection's run reached its wait");
    wait_closed();
    let memory = Memory {
        idle_kib,
        open_kib,
        open: most,
    };
    println!(
        "serve: memory per open stream, {name}: {:.1} KiB ({} streams open: resident set \
         {:.1} MiB, {:.1} MiB before)",
        memory.per_stream_kib(),
        memory.open,
        memory.open_kib as f64 / 1024.0,
        memory.idle_kib as f64 / 1024.0,
    );
    println!(
        "{MEMORY_LINE} {} {} {}",
        memory.idle_kib, memory.open_kib, memory.open
    );
    memory
}

/// How a process that measured memory says what it found, for [`memory_apart`].
const MEMORY_LINE: &str = "serve-memory:";

/// The memory figure `which` (`memory-ours` or `memory-floor`), measured by this bench
/// in a process of its own: in one process, the streams measured second would reuse
/// memory the first ones freed (the allocator keeps it), and look smaller than they are.
fn memory_apart(which: &str) -> Memory {
    let bench = std::env::current_exe().expect("the bench's own path");
    let output = Command::new(bench)
        .args(std::env::args().skip(1))
        .env("SERVE_ROWS", which)
        .output()
        .expect("the bench runs again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{which} failed: {stdout}");
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix(MEMORY_LINE));
    let figures: Vec<usize> = line
        .unwrap_or_else(|| panic!("no memory figure from {which}: {stdout}"))
        .split_whitespace()
        .map(|n| n.parse().expect("a number"))
        .collect();
    let memory = Memory {
        idle_kib: figures[0],
        open_kib: figures[1],
        open: figures[2],
    };
    let name = if which == "memory-ours" {
        "ours"
    } else {
        "the floor"
    };
    println!(
        "serve: memory per open stream, {name}: {:.1} KiB (in a process of its own)",
        memory.per_stream_kib()
    );
    memory
}

impl Memory {
    fn per_stream_kib(&self) -> f64 {
        self.open_kib.saturating_sub(self.idle_kib) as f64 / self.open as f64
    }
}

/// One run each way, checked: in-process, its events end with `completed` and stream
/// the answer; over HTTP, the SSE body does too. Returns the body.
fn check_one_run(rt: &tokio::runtime::Runtime, agent: &Agent, url: &str) -> String {
    let events: Vec<_> = rt.block_on(agent.run(AgentRequest::user(INPUT)).collect());
    let events: Vec<_> = events.into_iter().map(|e| e.expect("an event")).collect();
    let answer: String = events.iter().filter_map(|e| e.text_delta()).collect();
    assert!(answer.ends_with("Order 7 arrives tomorrow."), "{answer:?}");
    assert!(matches!(events.last(), Some(AgentEvent::Completed(_))));

    let body = rt.block_on(async {
        let response = reqwest::Client::new()
            .post(url)
            .header("accept", "text/event-stream")
            .json(&json!({ "input": INPUT }))
            .send()
            .await
            .expect("the server answers");
        assert_eq!(response.status(), 200);
        response.text().await.expect("the streamed body")
    });
    let kinds: Vec<_> = body
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(kinds.first(), Some(&"run_started"), "{body}");
    assert_eq!(kinds.last(), Some(&"completed"), "{body}");
    assert!(body.contains("tomorrow."), "{body}");
    body
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// How a row of the table runs its runs.
#[derive(Debug, Clone, Copy)]
enum Way {
    /// `agent.run` in this process.
    InProcess,
    /// `wrk` against the target of this index.
    Http(usize),
}

fn main() {
    let plan = Plan::new();
    assert!(
        Path::new(SCRIPT).is_file(),
        "the wrk script {SCRIPT} is missing"
    );
    let rt = runtime();
    println!(
        "serve: process {}, load average {} before",
        std::process::id(),
        load()
    );

    let stream = agent("stream", text_tool("track", "in transit"));
    let server = Server::new().agent("stream", ServedAgent::new(stream.clone()));
    #[cfg(feature = "a2a")]
    let server = server.a2a(tower_adk::server::a2a::A2a::new());
    let (addr, task) = serve(&rt, server);
    let ours = Target::runs(addr, "stream");
    let body = check_one_run(&rt, &stream, &ours.url);
    let events = events_of(&body);
    println!(
        "serve: one streamed run is {} SSE events, {} bytes",
        events.len(),
        body.len()
    );

    let open = Arc::new(AtomicUsize::new(0));
    let (floor_addr, floor_task) = serve_router(&rt, floor(events, Arc::clone(&open)));
    let floor_at = |path: &str| Target {
        url: format!("http://{floor_addr}/{path}"),
        done: "event: completed",
        ..ours.clone()
    };
    // Memory per open stream, each figure from a process of its own (see `memory_apart`).
    let measure = |which: &str| match which {
        "memory-ours" => {
            let hold = Server::new().agent(
                "hold",
                ServedAgent::new(agent("hold", holding_track(Arc::clone(&open)))),
            );
            let (hold_addr, hold_task) = serve(&rt, hold);
            let target = Target::runs(hold_addr, "hold");
            let memory = memory_per_stream("ours", &target, &open, plan.open_streams);
            hold_task.abort();
            memory
        }
        _ => memory_per_stream("the floor", &floor_at("hold"), &open, plan.open_streams),
    };
    let [memory, floor_memory] = ["memory-ours", "memory-floor"].map(|which| {
        if Plan::runs("memory") {
            Some(memory_apart(which))
        } else {
            Plan::runs(which).then(|| measure(which))
        }
    });

    #[allow(unused_mut)]
    let mut targets = vec![ours.clone(), floor_at("stream")];
    #[cfg(feature = "a2a")]
    targets.push(Target::a2a(addr, "stream"));
    let n = plan.concurrency;
    #[allow(unused_mut)]
    let mut rows = vec![
        ("local-1", "in-process, 1 caller", Way::InProcess, 1),
        ("http-1", "HTTP (wrk), 1 connection", Way::Http(0), 1),
        ("floor-1", "floor: bare axum, 1", Way::Http(1), 1),
        ("local-n", "in-process, N callers", Way::InProcess, n),
        ("http-n", "HTTP (wrk), N connections", Way::Http(0), n),
        ("floor-n", "floor: bare axum, N", Way::Http(1), n),
    ];
    #[cfg(feature = "a2a")]
    rows.extend([
        ("a2a-1", "A2A stream (wrk), 1", Way::Http(2), 1),
        ("a2a-n", "A2A stream (wrk), N", Way::Http(2), n),
    ]);
    rows.retain(|&(key, ..)| Plan::runs(key));
    // Warm-up: the runtime's threads, the allocator, the server's replay log.
    for (i, target) in targets.iter().enumerate() {
        if rows
            .iter()
            .any(|row| matches!(row.2, Way::Http(t) if t == i))
        {
            wrk(target, plan.concurrency.min(10), 1);
        }
    }
    let mut all: Vec<Vec<Figures>> = vec![Vec::new(); rows.len()];
    for round in 1..=plan.rounds {
        println!(
            "serve: round {round} of {}, load average {}",
            plan.rounds,
            load()
        );
        for (i, &(_, name, way, concurrency)) in rows.iter().enumerate() {
            all[i].push(row(&rt, &plan, &stream, &targets, (name, way, concurrency)));
        }
    }
    task.abort();
    floor_task.abort();
    println!("serve: load average {} after", load());

    let med = |key: &str, f: fn(&Figures) -> f64| {
        let i = rows.iter().position(|row| row.0 == key)?;
        Some(median(all[i].iter().map(f).collect()))
    };
    println!(
        "\nserve: median of {} round(s), {} s each (N = {})\n",
        plan.rounds, plan.secs, plan.concurrency
    );
    println!(
        "| {:<28} | {:>6} | {:>10} | {:>10} | {:>10} | {:>12} | {:>6} |",
        "", "c", "runs/s", "p50 ms", "p99 ms", "CPU µs/run", "errors"
    );
    println!(
        "|{:-<30}|{:->8}|{:->12}|{:->12}|{:->12}|{:->14}|{:->8}|",
        "", "", "", "", "", "", ""
    );
    for (i, &(key, name, _, concurrency)) in rows.iter().enumerate() {
        let errors: u64 = all[i].iter().map(|f| f.errors).sum();
        let med = |f| med(key, f).unwrap_or_default();
        println!(
            "| {:<28} | {:>6} | {:>10.0} | {:>10.3} | {:>10.3} | {:>12.1} | {:>6} |",
            name,
            concurrency,
            med(|f| f.runs_per_sec),
            med(|f| f.p50_us) / 1e3,
            med(|f| f.p99_us) / 1e3,
            med(|f| f.cpu_us_per_run),
            errors
        );
    }
    for label in ["1", "n"] {
        let at = |what: &str, f| med(&format!("{what}-{label}"), f);
        let latency = |f: fn(&Figures) -> f64| Some(at("http", f)? - at("local", f)?);
        if let (Some(p50), Some(p99)) = (latency(|f| f.p50_us), latency(|f| f.p99_us)) {
            println!(
                "\nat c={label}: added latency over HTTP p50 {:+.3} ms, p99 {:+.3} ms",
                p50 / 1e3,
                p99 / 1e3,
            );
        }
        let cpu = |what: &str| at(what, |f| f.cpu_us_per_run);
        if let (Some(http), Some(bare)) = (cpu("http"), cpu("floor")) {
            println!(
                "at c={label}: server CPU per run {:.2}x the floor's",
                http / bare
            );
        }
        let a2a = |f: fn(&Figures) -> f64| Some(at("a2a", f)? - at("http", f)?);
        if let (Some(p50), Some(p99), Some(cpu)) = (
            a2a(|f| f.p50_us),
            a2a(|f| f.p99_us),
            a2a(|f| f.cpu_us_per_run),
        ) {
            println!(
                "at c={label}: A2A against our route: p50 {:+.3} ms, p99 {:+.3} ms, CPU per run {:+.1} µs",
                p50 / 1e3,
                p99 / 1e3,
                cpu,
            );
        }
    }
    if let (Some(memory), Some(floor_memory)) = (memory, floor_memory) {
        println!(
            "memory per open stream: {:.1} KiB, {:.2}x the floor's {:.1} KiB ({} open)",
            memory.per_stream_kib(),
            memory.per_stream_kib() / floor_memory.per_stream_kib(),
            floor_memory.per_stream_kib(),
            memory.open
        );
    }
}

/// One row of one round: its runs, checked, and the CPU time they took.
fn row(
    rt: &tokio::runtime::Runtime,
    plan: &Plan,
    stream: &Agent,
    targets: &[Target],
    (name, way, concurrency): (&str, Way, usize),
) -> Figures {
    let cpu = cpu_secs();
    let mut figures = match way {
        Way::Http(target) => {
            let (figures, report) = wrk(&targets[target], concurrency, plan.secs);
            assert_eq!(figures.errors, 0, "{name}: errors over HTTP: {report}");
            figures
        }
        Way::InProcess => {
            let figures = rt.block_on(in_process(stream.clone(), concurrency, plan.secs));
            assert_eq!(figures.errors, 0, "{name}: runs failed in-process");
            figures
        }
    };
    assert!(figures.runs > 0, "{name}: no run finished");
    figures.cpu_us_per_run = (cpu_secs() - cpu) * 1e6 / figures.runs as f64;
    println!(
        "  {:<28} c={concurrency:<5} {:>9.0} runs/s  p50 {:>9.3} ms  p99 {:>9.3} ms  \
         {:>7.1} µs CPU/run  {} runs, {} errors",
        name,
        figures.runs_per_sec,
        figures.p50_us / 1e3,
        figures.p99_us / 1e3,
        figures.cpu_us_per_run,
        figures.runs,
        figures.errors
    );
    figures
}
