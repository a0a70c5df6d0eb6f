//! The peer workloads (see `../README.md`) on tower-llm 0.0.13.
//!
//! tower-llm builds an agent as a stack of tower services: a `ToolRouter` over the
//! tools' services, a `Step` (one model call plus the tool calls it asks for) over a
//! non-streaming provider (`tower::Service<CreateChatCompletionRequest, Response =
//! ProviderResponse>`), and an `AgentLoop` that repeats the step until its policy says
//! stop. `Agent::builder(..).build()` returns that stack as an `AgentSvc` (a
//! `BoxService`). The model here is `ScriptedModel`, a provider that picks its turn from
//! how many assistant messages the request already holds, so it is stateless, returns
//! the same three turns on every run and never touches the network.
//!
//! The four W1 handlers, with what tower-llm offers for each (it has no per-request
//! handler chain: everything is fixed when the agent is built, so a per-request input,
//! the role, has to travel in the request itself):
//! 1. role filter: a `map_request` tower layer around the whole agent, installed with
//!    `AgentBuilder::map_agent_service`. It reads the role from the request's `metadata`
//!    (`{"role": "admin"}`) and sets `request.tools` to the tool specs that role may
//!    see; the agent loop carries `request.tools` into every step and the step sends them
//!    to the model instead of its own list. The admin keeps all 8. This is most of the
//!    4-handler cost: the loop and the step clone `request.tools` (8 specs with their
//!    JSON schemas) on every step, where the agent's own list is cloned once per step.
//! 2. instruction append: an `LLMInstructionProvider` (`AgentBuilder::instruction_provider`)
//!    that returns `"{base} Be brief."`. The step asks it before every model call and puts
//!    its text in place of the request's system message. It does not see the request, so
//!    it appends to the base instruction it holds (the request's system message is the
//!    same `You are a bench.`).
//! 3. before-model rewrite that keeps the history: a `map_request` tower layer around the
//!    provider (`AgentBuilder::with_provider`), which takes the request's messages and
//!    puts them back before each model call (tower-llm's own `ModelApprovalLayer` wraps
//!    the step, which the builder does not let one reach).
//! 4. tool wrapper that counts calls: a `map_request` tower layer around each tool's
//!    service (`ToolDef::service`, a `BoxCloneService`) that bumps a shared counter.
//!
//! Tools run concurrently within a turn (`AgentBuilder::parallel_tools(true)`) in W1 and W4.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_openai::types::{
    ChatCompletionMessageToolCall, ChatCompletionRequestMessage,
    ChatCompletionRequestSystemMessageContent, ChatCompletionResponseMessage, ChatCompletionTool,
    ChatCompletionToolType, FunctionCall, Role,
};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tower::util::{BoxCloneService, BoxService};
use tower::{BoxError, Service, ServiceBuilder, ServiceExt};
use tower_llm::provider::ProviderResponse;
use tower_llm::{
    policies, simple_chat_request, tool_typed, Agent, AgentRun, AgentSvc, Client, CompositePolicy,
    CreateChatCompletionRequest, LLMInstructionProvider, OpenAIConfig, ToolDef,
};

const PEER: &str = "tower-llm";
const VERSION: &str = "0.0.13";
const TOOL_NAMES: [&str; 8] = [
    "tool_0", "tool_1", "tool_2", "tool_3", "tool_4", "tool_5", "tool_6", "tool_7",
];
const SYSTEM: &str = "You are a bench.";

// ---------------------------------------------------------------------------------------
// The scripted model
// ---------------------------------------------------------------------------------------

/// What the verification run saw in each model request: system text and number of tools.
type Seen = Arc<Mutex<Vec<(String, usize)>>>;

#[derive(Clone, Default)]
struct ScriptedModel {
    /// Only for the verification run; `None` while timing.
    seen: Option<Seen>,
}

fn call(id: &str, name: &str, q: &str) -> ChatCompletionMessageToolCall {
    ChatCompletionMessageToolCall {
        id: id.to_string(),
        r#type: ChatCompletionToolType::Function,
        function: FunctionCall {
            name: name.to_string(),
            arguments: json!({ "q": q }).to_string(),
        },
    }
}

#[allow(deprecated)] // `function_call` is a deprecated field that must still be set
fn assistant(
    content: Option<&str>,
    calls: Vec<ChatCompletionMessageToolCall>,
) -> ChatCompletionResponseMessage {
    ChatCompletionResponseMessage {
        content: content.map(str::to_string),
        refusal: None,
        tool_calls: if calls.is_empty() { None } else { Some(calls) },
        role: Role::Assistant,
        function_call: None,
        audio: None,
    }
}

impl Service<CreateChatCompletionRequest> for ScriptedModel {
    type Response = ProviderResponse;
    type Error = BoxError;
    type Future = std::future::Ready<Result<ProviderResponse, BoxError>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), BoxError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: CreateChatCompletionRequest) -> Self::Future {
        if let Some(seen) = &self.seen {
            let system = match req.messages.first() {
                Some(ChatCompletionRequestMessage::System(s)) => match &s.content {
                    ChatCompletionRequestSystemMessageContent::Text(t) => t.clone(),
                    _ => String::new(),
                },
                _ => String::new(),
            };
            let tools = req.tools.as_ref().map_or(0, Vec::len);
            seen.lock().unwrap().push((system, tools));
        }
        let turn = req
            .messages
            .iter()
            .filter(|m| matches!(m, ChatCompletionRequestMessage::Assistant(_)))
            .count();
        let message = match turn {
            0 => assistant(
                None,
                vec![call("c1", "tool_0", "a"), call("c2", "tool_1", "b")],
            ),
            1 => assistant(None, vec![call("c3", "tool_2", "c")]),
            _ => assistant(Some("done"), vec![]),
        };
        std::future::ready(Ok(ProviderResponse {
            assistant: message,
            prompt_tokens: 0,
            completion_tokens: 0,
        }))
    }
}

// ---------------------------------------------------------------------------------------
// Tools and handlers
// ---------------------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct Args {
    q: String,
}

/// The 8 tools; each returns `ok <q>`, after sleeping `sleep` on tokio's timer if set.
fn tools(sleep: Option<Duration>) -> Vec<ToolDef> {
    TOOL_NAMES
        .iter()
        .map(|&name| {
            tool_typed(name, "a tool", move |args: Args| async move {
                if let Some(d) = sleep {
                    tokio::time::sleep(d).await;
                }
                Ok::<_, BoxError>(format!("ok {}", json!(args.q)))
            })
        })
        .collect()
}

/// Handler 2: the instruction append.
struct AppendBrief {
    base: String,
}

#[async_trait]
impl LLMInstructionProvider for AppendBrief {
    async fn instructions(&self) -> Option<String> {
        Some(format!("{} Be brief.", self.base))
    }
}

/// The roles of the role filter; the request carries one in its `metadata`.
fn tools_for_role(role: &str, specs: &[ChatCompletionTool]) -> Vec<ChatCompletionTool> {
    if role == "admin" {
        specs.to_vec()
    } else {
        specs
            .iter()
            .filter(|t| t.function.name == "tool_0")
            .cloned()
            .collect()
    }
}

/// Handler 3: sees and returns the messages before each model call.
fn keep_history(messages: Vec<ChatCompletionRequestMessage>) -> Vec<ChatCompletionRequestMessage> {
    messages
}

fn build_agent(
    handlers: bool,
    sleep: Option<Duration>,
    count: &Arc<AtomicUsize>,
    seen: Option<Seen>,
) -> AgentSvc {
    // Never used: the provider below replaces the OpenAI one (no network).
    let client = Arc::new(Client::<OpenAIConfig>::new());
    let model = ScriptedModel { seen };
    let mut tools = tools(sleep);
    let builder = Agent::builder(client)
        .model("scripted")
        .parallel_tools(true)
        .policy(CompositePolicy::new(vec![
            policies::until_no_tool_calls(),
            policies::max_steps(10),
        ]));
    if !handlers {
        return builder.with_provider(model).tools(tools).build();
    }
    // 1. role filter, around the agent
    let specs: Arc<Vec<ChatCompletionTool>> =
        Arc::new(tools.iter().map(ToolDef::to_openai_tool).collect());
    let role_filter = move |agent: AgentSvc| -> AgentSvc {
        let specs = specs.clone();
        BoxService::new(
            ServiceBuilder::new()
                .map_request(move |mut req: CreateChatCompletionRequest| {
                    let role = req
                        .metadata
                        .as_ref()
                        .and_then(|m| m.get("role"))
                        .and_then(|r| r.as_str())
                        .unwrap_or("");
                    req.tools = Some(tools_for_role(role, &specs));
                    req
                })
                .service(agent),
        )
    };
    // 3. before-model rewrite, around the model
    let model = ServiceBuilder::new()
        .map_request(|mut req: CreateChatCompletionRequest| {
            req.messages = keep_history(std::mem::take(&mut req.messages));
            req
        })
        .service(model);
    // 4. tool wrapper that counts calls, around each tool
    for tool in &mut tools {
        let count = count.clone();
        let inner = std::mem::replace(
            &mut tool.service,
            BoxCloneService::new(tower::service_fn(|_| async {
                Err::<tower_llm::ToolOutput, BoxError>("placeholder".into())
            })),
        );
        tool.service = BoxCloneService::new(
            ServiceBuilder::new()
                .map_request(move |inv: tower_llm::ToolInvocation| {
                    count.fetch_add(1, Ordering::Relaxed);
                    inv
                })
                .service(inner),
        );
    }
    builder
        .with_provider(model)
        .tools(tools)
        // 2. instruction append
        .instruction_provider(Arc::new(AppendBrief {
            base: SYSTEM.to_string(),
        }))
        .map_agent_service(role_filter)
        .build()
}

fn request() -> CreateChatCompletionRequest {
    let mut req = simple_chat_request(SYSTEM, "go");
    req.metadata = Some(json!({ "role": "admin" }));
    req
}

async fn run_once<S>(agent: &mut S) -> AgentRun
where
    S: Service<CreateChatCompletionRequest, Response = AgentRun, Error = BoxError>,
{
    agent
        .ready()
        .await
        .expect("agent ready")
        .call(request())
        .await
        .expect("agent run")
}

fn final_text(run: &AgentRun) -> Option<String> {
    match run.messages.last()? {
        ChatCompletionRequestMessage::Assistant(a) => match a.content.as_ref()? {
            async_openai::types::ChatCompletionRequestAssistantMessageContent::Text(t) => {
                Some(t.clone())
            }
            _ => None,
        },
        _ => None,
    }
}

fn tool_messages(run: &AgentRun) -> usize {
    run.messages
        .iter()
        .filter(|m| matches!(m, ChatCompletionRequestMessage::Tool(_)))
        .count()
}

/// One run with a recording model: 3 model calls, 3 tool calls, final answer `done`, and
/// with handlers the appended instruction, all 8 tools and 3 counted calls.
fn verify(handlers: bool) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let seen: Seen = Arc::default();
    let mut agent = build_agent(handlers, None, &count, Some(seen.clone()));
    let run = rt.block_on(run_once(&mut agent));
    let seen = seen.lock().unwrap().clone();
    let want_system = if handlers {
        "You are a bench. Be brief."
    } else {
        SYSTEM
    };
    let ok = final_text(&run).as_deref() == Some("done")
        && run.steps == 3
        && tool_messages(&run) == 3
        && seen.len() == 3
        && seen.iter().all(|(s, n)| s == want_system && *n == 8)
        && count.load(Ordering::Relaxed) == if handlers { 3 } else { 0 };
    eprintln!(
        "verify handlers={}: final={:?} steps={} tool_messages={} model_calls={:?} counted={}",
        if handlers { 4 } else { 0 },
        final_text(&run),
        run.steps,
        tool_messages(&run),
        seen,
        count.load(Ordering::Relaxed)
    );
    assert!(ok, "the run is not the W1 run");
}

// ---------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn quick() -> bool {
    std::env::var("PEERS_QUICK").is_ok_and(|v| v == "1")
}

fn w1(handlers: bool) {
    verify(handlers);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let mut agent = build_agent(handlers, None, &count, None);
    let (warm, sample) = if quick() {
        (Duration::from_millis(20), Duration::from_millis(20))
    } else {
        (Duration::from_millis(500), Duration::from_secs(1))
    };
    let runs_per_sample = rt.block_on(async {
        // Warm-up, which also sizes a sample.
        let start = Instant::now();
        let mut done = 0u64;
        while start.elapsed() < warm {
            std::hint::black_box(run_once(&mut agent).await);
            done += 1;
        }
        let per_run = start.elapsed().as_secs_f64() / done as f64;
        ((sample.as_secs_f64() / per_run).ceil() as u64).max(1)
    });
    let mut samples: Vec<f64> = (0..5)
        .map(|_| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..runs_per_sample {
                    std::hint::black_box(run_once(&mut agent).await);
                }
                start.elapsed().as_secs_f64() * 1e6 / runs_per_sample as f64
            })
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    eprintln!(
        "W1 handlers={}: samples us/run {:?}",
        if handlers { 4 } else { 0 },
        samples
    );
    println!(
        "{}",
        json!({
            "peer": PEER, "version": VERSION, "workload": "W1",
            "handlers": if handlers { 4 } else { 0 },
            "runs": runs_per_sample * 5,
            "us_per_run": (samples[2] * 10.0).round() / 10.0,
            "peak_rss_kib": status_kib("VmHWM:"),
        })
    );
}

/// W4: concurrent W1 runs on one shared agent, tools sleeping 50 ms.
///
/// The agent (a `BoxService`, neither `Clone` nor `Sync`) is shared the tower way, behind
/// a `tower::buffer::Buffer`. Note that tower-llm's `AgentLoop` keeps its step service in
/// an `Arc<tokio::sync::Mutex<_>>` and holds that lock while a step runs, tool calls
/// included (and `Step` likewise holds its provider's lock across the tool calls), so the
/// steps of concurrent runs on one agent run one at a time: about 100 ms per run.
/// 10,000 runs would take about 17 minutes, so by default this runs 100 concurrent runs
/// (`TOWER_LLM_W4_RUNS` changes it) and says so in `runs`.
fn w4() {
    let runs: usize = std::env::var("TOWER_LLM_W4_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick() { 10 } else { 100 });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let agent = build_agent(false, Some(Duration::from_millis(50)), &count, None);
    let (wall, peak, before, ok) = rt.block_on(async {
        let agent = tower::buffer::Buffer::new(agent, runs.max(1));
        // One run first, so the runtime, the buffer's worker and the allocator are warm.
        let first = run_once(&mut agent.clone()).await;
        assert_eq!(final_text(&first).as_deref(), Some("done"));

        let before = status_kib("VmRSS:");
        let peak = Arc::new(AtomicUsize::new(before as usize));
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (peak, stop) = (peak.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    peak.fetch_max(status_kib("VmRSS:") as usize, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
        };
        let start = Instant::now();
        let handles: Vec<_> = (0..runs)
            .map(|_| {
                let agent = agent.clone();
                tokio::spawn(agent.oneshot(request()))
            })
            .collect();
        let mut ok = 0;
        for h in handles {
            let run = h.await.expect("join").expect("agent run");
            if final_text(&run).as_deref() == Some("done") && tool_messages(&run) == 3 {
                ok += 1;
            }
        }
        let wall = start.elapsed();
        stop.store(true, Ordering::Relaxed);
        sampler.join().unwrap();
        peak.fetch_max(status_kib("VmRSS:") as usize, Ordering::Relaxed);
        (wall, peak.load(Ordering::Relaxed) as u64, before, ok)
    });
    assert_eq!(
        ok, runs,
        "not every W4 run finished with `done` after 3 tool calls"
    );
    eprintln!(
        "W4: {runs} concurrent runs on one shared agent: {:.1} ms (ideal 100 ms; the agent loop runs one step at a time)",
        wall.as_secs_f64() * 1e3
    );
    println!(
        "{}",
        json!({
            "peer": PEER, "version": VERSION, "workload": "W4", "handlers": 0,
            "runs": runs,
            "wall_ms": (wall.as_secs_f64() * 1e4).round() / 10.0,
            "kib_per_run": ((peak.saturating_sub(before)) as f64 / runs as f64 * 10.0).round() / 10.0,
        })
    );
}

fn main() {
    w1(false);
    w1(true);
    w4();
}
