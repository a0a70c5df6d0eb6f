//! Rule 3: the run's extensions reach every stage; values hooks insert are seen by every
//! later stage; run-local values persist across iterations of one run.

use std::convert::Infallible;

use serde_json::json;
use tower::{ServiceBuilder, ServiceExt};
use tower_adk::handlers::wrap_tool_invoke;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentConfig, AgentRequest, BoxError, Handler, HandlerLayer, ModelNext};
use tower_adk::{History, ModelRequest, ModelResponse, RunContext, Tool, ToolInfo, ToolOutput};

use crate::support::Log;

/// Put in the request by the caller.
#[derive(Debug, Clone, PartialEq)]
struct Caller(&'static str);

/// Inserted by `before_agent`.
#[derive(Debug, Clone, PartialEq)]
struct Tenant(&'static str);

/// Inserted by `after_model` in the first iteration.
#[derive(Debug, Clone, PartialEq)]
struct Approved(bool);

fn describe(ext: &http::Extensions) -> String {
    format!(
        "caller={:?} tenant={:?} approved={:?}",
        ext.get::<Caller>().map(|c| c.0),
        ext.get::<Tenant>().map(|t| t.0),
        ext.get::<Approved>().map(|a| a.0),
    )
}

/// Inserts `Tenant` in `before_agent` and `Approved` in the first `after_model`.
struct Inserts;

impl Handler for Inserts {
    async fn before_agent(
        &self,
        cx: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        let tenant = match cx.extensions().get::<Caller>() {
            Some(Caller("ada")) => "acme",
            _ => "unknown",
        };
        cx.extensions_mut().insert(Tenant(tenant));
        Ok(config)
    }

    async fn after_model(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        if cx.iteration() == 1 {
            cx.extensions_mut().insert(Approved(true));
        }
        Ok(())
    }
}

/// Logs what every hook and the model wrapper see.
struct Observes(Log);

impl Observes {
    fn saw(&self, at: &str, cx: &RunContext) {
        self.0.push(format!(
            "{at}#{}: {}",
            cx.iteration(),
            describe(cx.extensions())
        ));
    }
}

impl Handler for Observes {
    async fn before_agent(
        &self,
        cx: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        self.saw("before_agent", cx);
        Ok(config)
    }

    async fn before_model(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        self.saw("before_model", cx);
        Ok(())
    }

    async fn wrap_model(
        &self,
        request: ModelRequest,
        next: ModelNext,
    ) -> Result<ModelResponse, BoxError> {
        self.0
            .push(format!("wrap_model: {}", describe(request.extensions())));
        next.run(request).await
    }

    async fn after_model(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        self.saw("after_model", cx);
        Ok(())
    }

    async fn after_agent(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        self.saw("after_agent", cx);
        Ok(())
    }
}

#[tokio::test]
async fn value_inserted_by_a_hook_is_seen_by_later_hooks_wrappers_model_and_tool() {
    let log = Log::default();
    let model = ScriptedModel::new([Turn::call("c1", "whoami", json!({})), Turn::text("ok")]);
    let tool_log = log.clone();
    let whoami = Tool::from_fn(ToolInfo::new("whoami", "Who is calling"), move |req| {
        tool_log.push(format!("tool: {}", describe(req.extensions())));
        async { Ok::<_, Infallible>(ToolOutput::new("ada")) }
    });
    let agent = Agent::builder(model.clone()).tool(whoami).build().unwrap();
    let wrapper_log = log.clone();
    let tool_wrapper = wrap_tool_invoke(move |req, next| {
        wrapper_log.push(format!("wrap_tool_invoke: {}", describe(req.extensions())));
        next.run(req)
    });

    let request = AgentRequest::user("who am I?")
        .with_extension(Caller("ada"))
        .with_handler(Inserts)
        .with_handler(Observes(log.clone()))
        .with_handler(tool_wrapper);
    agent.run(request).await.unwrap();

    let start = r#"caller=Some("ada") tenant=Some("acme") approved=None"#;
    let later = r#"caller=Some("ada") tenant=Some("acme") approved=Some(true)"#;
    assert_eq!(
        log.entries(),
        [
            format!("before_agent#0: {start}"),
            format!("before_model#1: {start}"),
            format!("wrap_model: {start}"),
            // `Inserts` is registered first, so its after_model runs after this one.
            format!("after_model#1: {start}"),
            format!("wrap_tool_invoke: {later}"),
            format!("tool: {later}"),
            format!("before_model#2: {later}"),
            format!("wrap_model: {later}"),
            format!("after_model#2: {later}"),
            format!("after_agent#2: {later}"),
        ]
    );
    let requests = model.requests();
    assert_eq!(describe(requests[0].extensions()), start, "model call 1");
    assert_eq!(describe(requests[1].extensions()), later, "model call 2");
}

/// Set by a tool wrapper for one call.
#[derive(Debug, Clone, PartialEq)]
struct CallScoped(&'static str);

#[tokio::test]
async fn values_a_wrapper_inserts_reach_the_inner_stages_of_that_call_only() {
    let model = ScriptedModel::new([
        Turn::calls([
            tower_adk::ToolCall::new("c1", "peek", json!({})),
            tower_adk::ToolCall::new("c2", "peek", json!({})),
        ]),
        Turn::text("ok"),
    ]);
    let peek = Tool::from_fn(ToolInfo::new("peek", "Reports the call's value"), |req| {
        let value = req.extensions().get::<CallScoped>().map(|v| v.0);
        async move { Ok::<_, Infallible>(ToolOutput::new(format!("{value:?}"))) }
    });
    let agent = Agent::builder(model.clone()).tool(peek).build().unwrap();
    let tag_c1 = wrap_tool_invoke(|mut req, next| {
        if req.call_id == "c1" {
            req.extensions_mut().insert(CallScoped("for c1"));
        }
        next.run(req)
    });

    let result = agent
        .run(AgentRequest::user("peek twice").with_handler(tag_c1))
        .await
        .unwrap();

    let mut outputs: Vec<_> = result
        .tool_records
        .iter()
        .map(|r| (r.call_id.as_str(), r.content.as_str()))
        .collect();
    outputs.sort_unstable();
    assert_eq!(outputs, [("c1", r#"Some("for c1")"#), ("c2", "None")]);
    let later_model_call = &model.requests()[1];
    assert_eq!(later_model_call.extensions().get::<CallScoped>(), None);
}

/// Counts model calls in a run-local value: reads it before each call and stores the
/// new count after it.
struct CountsModelCalls(Log);

impl Handler for CountsModelCalls {
    async fn before_model(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        let so_far: Option<u32> = cx.locals().get("model_calls")?;
        self.0
            .push(format!("iteration {}: {so_far:?}", cx.iteration()));
        Ok(())
    }

    async fn after_model(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        let so_far: u32 = cx.locals().get("model_calls")?.unwrap_or(0);
        cx.locals_mut().insert("model_calls", &(so_far + 1))?;
        Ok(())
    }
}

#[tokio::test]
async fn run_local_value_set_in_one_iteration_is_read_in_the_next() {
    let log = Log::default();
    let model = ScriptedModel::new([
        Turn::call("c1", "noop", json!({})),
        Turn::call("c2", "noop", json!({})),
        Turn::text("first run done"),
        Turn::call("c3", "noop", json!({})),
        Turn::text("second run done"),
    ]);
    let noop = Tool::from_fn(ToolInfo::new("noop", "Does nothing"), |_| async {
        Ok::<_, Infallible>(ToolOutput::new(""))
    });
    let agent = Agent::builder(model).tool(noop).build().unwrap();
    // One handler value shared by every run: the count must live in the run, not in it.
    let agent = ServiceBuilder::new()
        .layer(HandlerLayer::new(CountsModelCalls(log.clone())))
        .service(agent);

    for input in ["first", "second"] {
        let run = agent
            .clone()
            .oneshot(AgentRequest::user(input))
            .await
            .unwrap();
        run.await.unwrap();
    }

    assert_eq!(
        log.entries(),
        [
            "iteration 1: None",
            "iteration 2: Some(1)",
            "iteration 3: Some(2)",
            // A new run starts without the previous run's locals.
            "iteration 1: None",
            "iteration 2: Some(1)",
        ]
    );
}
