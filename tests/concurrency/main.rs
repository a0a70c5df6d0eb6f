#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Concurrency: one agent shared by many tasks at once.
//!
//! - role-based filtering holds under 1,000 concurrent runs with mixed roles (DESIGN.md §3
//!   rule 5): no run is shown or executes a tool its role lacks, whether the filter comes
//!   from a `HandlerLayer` or from each request;
//! - loop variants are compiled once, however many runs race for them (§4);
//! - the public types can be shared between tasks (§6).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::Barrier;
use tokio::task::JoinSet;
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
use tower_adk::handlers::{add_tools, filter_tools, return_directly};
use tower_adk::{Agent, AgentConfig, AgentRequest, AgentResult, AgentRun, BoxError, Handler};
use tower_adk::{HandlerLayer, Message, ModelRequest, ModelResponse, RunContext, Tool, ToolCall};
use tower_adk::{ToolErrorKind, ToolInfo, ToolOutput, ToolRequest};

/// How many runs each test starts at once.
const RUNS: usize = 1_000;

/// Turns a deadlock (a run that never reaches the start barrier) into a failure. Far
/// above the time the runs need on a slow machine; nothing asserts on timing.
const DEADLOCK_GUARD: Duration = Duration::from_secs(600);

/// Every tool of the shared agent.
const TOOLS: [&str; 4] = ["read", "write", "delete", "audit"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Admin,
    Editor,
    Viewer,
    Guest,
}

const ROLES: [Role; 4] = [Role::Admin, Role::Editor, Role::Viewer, Role::Guest];

impl Role {
    /// Nobody may `audit`; guests may use nothing.
    fn may_use(self, tool: &str) -> bool {
        match self {
            Role::Admin => matches!(tool, "read" | "write" | "delete"),
            Role::Editor => matches!(tool, "read" | "write"),
            Role::Viewer => tool == "read",
            Role::Guest => false,
        }
    }

    /// The tools the role may use, in the agent's order.
    fn allowed(self) -> Vec<&'static str> {
        TOOLS.into_iter().filter(|t| self.may_use(t)).collect()
    }
}

/// Which run a model call or tool call belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct RunId(usize);

/// The run and role a model or tool call found in the run's extensions.
#[derive(Debug, Clone, Copy)]
struct Caller {
    run: Option<RunId>,
    role: Option<Role>,
}

impl Caller {
    fn of(extensions: &http::Extensions) -> Self {
        Caller {
            run: extensions.get::<RunId>().copied(),
            role: extensions.get::<Role>().copied(),
        }
    }

    /// Both, or a failure naming what is missing: rule 3 says they reach every stage.
    fn expect(self) -> (RunId, Role) {
        match (self.run, self.role) {
            (Some(run), Some(role)) => (run, role),
            _ => panic!("the run's extensions did not arrive: {self:?}"),
        }
    }
}

/// What the model was shown and what the tools executed, and for whom.
#[derive(Debug, Default)]
struct Seen {
    shown: Mutex<Vec<(Caller, Vec<String>)>>,
    executed: Mutex<Vec<(Caller, &'static str)>>,
}

/// A tool that records the run and role of each call that executes it.
fn recording_tool(name: &'static str, seen: &Arc<Seen>) -> Tool {
    let seen = Arc::clone(seen);
    Tool::from_fn(
        ToolInfo::new(name, "Records who ran it"),
        move |req: ToolRequest| {
            let seen = Arc::clone(&seen);
            async move {
                // Give other runs a chance to interleave with this call.
                tokio::task::yield_now().await;
                let caller = Caller::of(req.extensions());
                seen.executed.lock().unwrap().push((caller, name));
                Ok::<_, Infallible>(ToolOutput::new(format!("{name} done")))
            }
        },
    )
}

/// An agent with every tool, whose model records what it is shown and, in its first
/// turn, calls every tool it was shown and then every tool it was not. The first turn
/// of every run waits at `start`, so all runs are in flight together.
fn shared_agent(seen: &Arc<Seen>, start: &Arc<Barrier>) -> Agent {
    let model_seen = Arc::clone(seen);
    let start = Arc::clone(start);
    let model = service_fn(move |req: ModelRequest| {
        let seen = Arc::clone(&model_seen);
        let start = Arc::clone(&start);
        async move {
            let caller = Caller::of(req.extensions());
            let shown: Vec<String> = req.tool_names().map(str::to_owned).collect();
            seen.shown.lock().unwrap().push((caller, shown.clone()));
            if matches!(req.messages.last(), Some(Message::Tool { .. })) {
                return Ok::<_, BoxError>(ModelResponse::message(Message::assistant("done")));
            }
            start.wait().await;
            let hidden = TOOLS.into_iter().filter(|t| !shown.iter().any(|s| s == t));
            let calls = shown
                .iter()
                .map(String::as_str)
                .chain(hidden)
                .enumerate()
                .map(|(i, name)| ToolCall::new(format!("c{i}"), name, json!({})))
                .collect();
            Ok(ModelResponse::message(Message::assistant_with_calls(
                "", calls,
            )))
        }
    });
    Agent::builder(model)
        .tools(TOOLS.map(|name| recording_tool(name, seen)))
        .build()
        .unwrap()
}

/// Starts `RUNS` runs at once on clones of `service`, roles in turn, and waits for all.
async fn run_concurrently<S>(
    service: S,
    request_for: impl Fn(Role) -> AgentRequest,
) -> Vec<(RunId, Role, AgentResult)>
where
    S: Service<AgentRequest, Response = AgentRun, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    let mut runs = JoinSet::new();
    for i in 0..RUNS {
        let (run, role) = (RunId(i), ROLES[i % ROLES.len()]);
        let request = request_for(role).with_extension(run).with_extension(role);
        let service = service.clone();
        runs.spawn(async move {
            let result = service.oneshot(request).await.unwrap().await;
            (run, role, result)
        });
    }
    let all = async {
        let mut results = Vec::with_capacity(RUNS);
        while let Some(joined) = runs.join_next().await {
            let (run, role, result) = joined.unwrap();
            let result = result.unwrap_or_else(|e| panic!("{run:?} ({role:?}) failed: {e}"));
            results.push((run, role, result));
        }
        results
    };
    tokio::time::timeout(DEADLOCK_GUARD, all)
        .await
        .expect("the runs deadlocked: some run never reached its first model call")
}

/// No run was shown or executed a tool outside its role, and each ran exactly its own.
fn assert_roles_held(seen: &Seen, results: &[(RunId, Role, AgentResult)]) {
    assert_eq!(results.len(), RUNS);

    let shown = seen.shown.lock().unwrap();
    for (caller, tools) in shown.iter() {
        let (run, role) = caller.expect();
        assert_eq!(tools, &role.allowed(), "{run:?} ({role:?}) was shown");
    }
    // Guests have no tools: one model call; everyone else: two.
    let guests = results.iter().filter(|(_, r, _)| *r == Role::Guest).count();
    assert_eq!(shown.len(), 2 * RUNS - guests);

    let executed = seen.executed.lock().unwrap();
    let mut by_run: BTreeMap<RunId, Vec<&str>> = BTreeMap::new();
    for (caller, tool) in executed.iter() {
        let (run, role) = caller.expect();
        assert!(role.may_use(tool), "{run:?} ({role:?}) executed `{tool}`");
        by_run.entry(run).or_default().push(tool);
    }

    for (run, role, result) in results {
        let mut ran = by_run.remove(run).unwrap_or_default();
        ran.sort_unstable();
        let mut allowed = role.allowed();
        allowed.sort_unstable();
        assert_eq!(ran, allowed, "{run:?} ({role:?}) ran");

        if *role == Role::Guest {
            // A run without tools makes one model call and runs nothing.
            assert_eq!(result.iterations, 1, "{run:?}");
            assert!(result.tool_records.is_empty(), "{run:?}");
            continue;
        }
        assert_eq!(result.iterations, 2, "{run:?}");
        assert_eq!(result.tool_records.len(), TOOLS.len(), "{run:?}");
        for record in &result.tool_records {
            if role.may_use(&record.name) {
                assert!(record.is_success(), "{run:?} {record:?}");
                assert_eq!(record.content, format!("{} done", record.name));
            } else {
                let kind = record.error.as_ref().map(|e| e.kind());
                assert_eq!(kind, Some(ToolErrorKind::UnknownTool), "{run:?} {record:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn role_filter_from_a_handler_layer_holds_across_1000_concurrent_runs() {
    let seen = Arc::new(Seen::default());
    let start = Arc::new(Barrier::new(RUNS));
    let agent = shared_agent(&seen, &start);
    let by_role = filter_tools(|ext, tool| {
        ext.get::<Role>()
            .is_some_and(|role| role.may_use(tool.name()))
    });
    let service = ServiceBuilder::new()
        .layer(HandlerLayer::new(by_role))
        .service(agent.clone());

    let results = run_concurrently(service, |_| AgentRequest::user("do everything")).await;

    assert_roles_held(&seen, &results);
    // With tools, and without (guests); never one per request.
    assert_eq!(agent.compiled_variants(), 2);
}

/// Removes, with [`AgentConfig::remove_tool`], every tool the role it was built for
/// lacks.
struct KeepRoleTools(Role);

impl Handler for KeepRoleTools {
    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        for tool in TOOLS.into_iter().filter(|t| !self.0.may_use(t)) {
            config.remove_tool(tool);
        }
        Ok(config)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn role_handlers_carried_by_each_request_hold_across_1000_concurrent_runs() {
    let seen = Arc::new(Seen::default());
    let start = Arc::new(Barrier::new(RUNS));
    let agent = shared_agent(&seen, &start);

    let results = run_concurrently(agent.clone(), |role| {
        AgentRequest::user("do everything").with_handler(KeepRoleTools(role))
    })
    .await;

    assert_roles_held(&seen, &results);
    assert_eq!(agent.compiled_variants(), 2);
}

/// Holds every run in `before_agent` until all have arrived, so they need their loop
/// variant at the same moment.
struct StartTogether(Arc<Barrier>);

impl Handler for StartTogether {
    async fn before_agent(
        &self,
        _: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        self.0.wait().await;
        Ok(config)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_runs_compile_each_loop_variant_once() {
    // Answers a tool-less run at once; otherwise calls `finish`, then answers.
    let model = service_fn(|req: ModelRequest| async move {
        let reply = if req.tools.is_empty() {
            Message::assistant("no tools")
        } else if matches!(req.messages.last(), Some(Message::Tool { .. })) {
            Message::assistant("after finish")
        } else {
            Message::assistant_with_calls("", vec![ToolCall::new("c1", "finish", json!({}))])
        };
        Ok::<_, BoxError>(ModelResponse::message(reply))
    });
    let agent = Agent::builder(model).build().unwrap();
    let finish = Tool::from_fn(ToolInfo::new("finish", "Finishes"), |_| async {
        Ok::<_, Infallible>(ToolOutput::new("finished"))
    });
    let service = ServiceBuilder::new()
        .layer(HandlerLayer::new(StartTogether(Arc::new(Barrier::new(
            RUNS,
        )))))
        .service(agent.clone());

    // Roles stand in for three kinds of run: none (no tools), one tool, one
    // return-directly tool. Guests, like admins, get no handler.
    let results = run_concurrently(service, |role| {
        let request = AgentRequest::user("go");
        match role {
            Role::Admin | Role::Guest => request,
            Role::Editor => request.with_handler(add_tools([finish.clone()])),
            Role::Viewer => request
                .with_handler(add_tools([finish.clone()]))
                .with_handler(return_directly(["finish"])),
        }
    })
    .await;

    assert_eq!(agent.compiled_variants(), 3);
    for (run, role, result) in &results {
        let (content, iterations) = match role {
            Role::Admin | Role::Guest => ("no tools", 1),
            Role::Editor => ("after finish", 2),
            Role::Viewer => ("finished", 1),
        };
        assert_eq!(
            result.final_message.content(),
            content,
            "{run:?} ({role:?})"
        );
        assert_eq!(result.iterations, iterations, "{run:?} ({role:?})");
    }
}

mod await_run;

mod types {
    use std::convert::Infallible;

    use tower::util::BoxCloneSyncService;
    use tower::{ServiceBuilder, ServiceExt};
    use tower_adk::agent::HandlerService;
    use tower_adk::agent::RunResult;
    use tower_adk::testing::{ScriptedModel, Turn};
    use tower_adk::{Agent, AgentConfig, AgentError, AgentEvent, AgentRequest, AgentResult};
    use tower_adk::{AgentRun, BoxHandler, BuildError, HandlerError, HandlerLayer, Messages};
    use tower_adk::{History, ModelError, ModelRequest, ModelResponse, RunContext, Tool};
    use tower_adk::{ToolError, ToolOutput, ToolRecord, ToolRequest, ToolStream};

    fn assert_send<T: Send>() {}
    fn assert_sync<T: Sync>() {}
    fn assert_clone<T: Clone>() {}
    fn assert_shared<T: Clone + Send + Sync + 'static>() {}
    fn assert_error<E: std::error::Error + Send + Sync + 'static>() {}

    #[test]
    fn agents_and_handler_layers_are_clone_send_and_sync() {
        assert_shared::<Agent>();
        assert_shared::<HandlerLayer>();
        assert_shared::<HandlerService<Agent>>();
        assert_shared::<HandlerService<HandlerService<Agent>>>();
        assert_shared::<BoxHandler>();
        assert_shared::<AgentConfig>();
        assert_shared::<Tool>();
        assert_shared::<ScriptedModel>();
    }

    #[test]
    fn runs_and_requests_can_move_between_tasks() {
        assert_send::<AgentRequest>();
        assert_send::<AgentRun>();
        assert_send::<RunResult>();
        assert_send::<ModelResponse>();
        assert_send::<ToolStream>();
        assert_send::<RunContext>();
        assert_sync::<RunContext>();
    }

    #[test]
    fn values_handed_to_hooks_and_callers_are_clone_send_and_sync() {
        assert_shared::<AgentResult>();
        assert_shared::<AgentEvent>();
        assert_shared::<ToolRecord>();
        assert_shared::<ToolError>();
        assert_shared::<ModelRequest>();
        assert_shared::<ToolRequest>();
        assert_shared::<ToolOutput>();
        assert_shared::<History>();
        assert_shared::<Messages>();
        assert_clone::<ScriptedModel>();
    }

    #[test]
    fn errors_convert_into_tower_box_error() {
        assert_error::<AgentError>();
        assert_error::<HandlerError>();
        assert_error::<ToolError>();
        assert_error::<ModelError>();
        assert_error::<BuildError>();
    }

    #[tokio::test]
    async fn layered_agent_boxes_into_a_clone_sync_tower_service() {
        let agent = Agent::builder(ScriptedModel::new([Turn::text("boxed")]))
            .build()
            .unwrap();
        let layered = ServiceBuilder::new()
            .layer(HandlerLayer::new(()))
            .service(agent);
        let boxed: BoxCloneSyncService<AgentRequest, AgentRun, Infallible> =
            BoxCloneSyncService::new(layered);

        // Runs on another task: the service, its future and the run are all `Send`.
        let result = tokio::spawn(async move {
            let run = boxed.oneshot(AgentRequest::user("hi")).await.unwrap();
            run.await
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(result.final_message.content(), "boxed");
    }
}
