//! The framework's overhead on a three-turn run (W1): the agent with 0, 4 and 16
//! handlers against the same run written by hand with no framework.
//!
//! ```text
//! cargo bench --bench overhead
//! ```
//!
//! The model is the scripted model, so the numbers are the loop's own cost.

use std::convert::Infallible;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tower::ServiceExt;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentRequest, BoxHandler, Message, Messages, ModelRequest, Tool, ToolInfo, ToolOutput,
    ToolRequest, handlers,
};

#[derive(Clone, Copy, PartialEq)]
enum Role {
    Admin,
}

fn script() -> ScriptedModel {
    ScriptedModel::per_run([
        Turn::call("c1", "tool_0", json!({"q": "a"})).with_call("c2", "tool_1", json!({"q": "b"})),
        Turn::call("c3", "tool_2", json!({"q": "c"})),
        Turn::text("done"),
    ])
    .without_records()
}

fn tools() -> Vec<Tool> {
    (0..8)
        .map(|i| {
            Tool::from_fn(
                ToolInfo::new(format!("tool_{i}"), "a tool"),
                |req: ToolRequest| async move {
                    Ok::<_, Infallible>(ToolOutput::new(format!("ok {}", req.arguments["q"])))
                },
            )
        })
        .collect()
}

/// The four cheap handlers of W1: a role filter, an instruction append, a before-model
/// rewrite that keeps the history, and a tool wrapper that counts calls.
fn four_handlers(count: &Arc<AtomicUsize>) -> [BoxHandler; 4] {
    let count = Arc::clone(count);
    [
        handlers::filter_tools(|ext, _| ext.get::<Role>() == Some(&Role::Admin)).into(),
        handlers::instruction_fn(|_, current| format!("{current} Be brief.")).into(),
        handlers::before_model(|_, _| Ok(())).into(),
        handlers::wrap_tool_invoke(move |req, next| {
            count.fetch_add(1, Ordering::Relaxed);
            next.run(req)
        })
        .into(),
    ]
}

/// The same run with no framework: call the model, run the tools, loop.
async fn hand_written(model: &ScriptedModel, tools: &[Tool]) -> Message {
    let mut messages = vec![Message::system("You are a bench."), Message::user("go")];
    loop {
        let request = ModelRequest::new(Messages::from(messages.clone()));
        let reply = model.clone().oneshot(request).await.ok();
        let reply = match reply {
            Some(response) => response
                .into_message()
                .await
                .unwrap_or_else(|_| Message::assistant("")),
            None => Message::assistant(""),
        };
        let calls = reply.tool_calls().to_vec();
        messages.push(reply);
        if calls.is_empty() {
            return messages.pop().unwrap_or_else(|| Message::assistant(""));
        }
        for call in calls {
            let Some(tool) = tools.iter().find(|t| t.name() == call.name) else {
                continue;
            };
            let arguments = serde_json::from_str(&call.arguments).unwrap_or_default();
            let output = tool
                .invoke(ToolRequest::new(&call.id, &call.name, arguments))
                .await;
            let content = output.map(|o| o.content).unwrap_or_default();
            messages.push(Message::tool(call.id, call.name, content));
        }
    }
}

fn w1(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("w1_three_turn_run");

    let model = script();
    let tools = tools();
    group.bench_function("hand_written", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(hand_written(&model, &tools).await) });
    });

    let agent = Agent::builder(script())
        .instruction("You are a bench.")
        .tools(self::tools())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let count = Arc::new(AtomicUsize::new(0));
    for n in [0, 4, 16] {
        let chain: Vec<BoxHandler> = (0..n / 4).flat_map(|_| four_handlers(&count)).collect();
        group.bench_function(format!("agent_{n}_handlers"), |b| {
            b.to_async(&runtime).iter(|| async {
                let mut request = AgentRequest::user("go").with_extension(Role::Admin);
                request.handlers_mut().extend(chain.iter().cloned());
                let result = agent.run(request).await.unwrap_or_else(|e| panic!("{e}"));
                black_box(result)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, w1);
criterion_main!(benches);
