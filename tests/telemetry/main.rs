//! With the `tracing` feature, a run, each model call and each tool call get a span with
//! the OpenTelemetry `gen_ai.*` attribute names.
#![cfg(feature = "tracing")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn, failing_tool, text_tool};
use tower_adk::{Agent, AgentRequest};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

#[derive(Debug, Clone, Default)]
struct SeenSpan {
    name: String,
    parent: Option<String>,
    fields: BTreeMap<String, String>,
}

/// Records every span with its parent's name and its fields.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<(u64, SeenSpan)>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_owned(),
            format!("{value:?}").trim_matches('"').to_owned(),
        );
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, cx: Context<'_, S>) {
        let mut seen = SeenSpan {
            name: attrs.metadata().name().to_owned(),
            ..SeenSpan::default()
        };
        seen.parent = cx
            .span(id)
            .and_then(|s| s.parent())
            .map(|p| p.name().to_owned());
        attrs.record(&mut Fields(&mut seen.fields));
        self.0.lock().unwrap().push((id.into_u64(), seen));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, seen)) = spans.iter_mut().rev().find(|(i, _)| *i == id.into_u64()) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn runs_model_calls_and_tool_calls_get_gen_ai_spans() {
    let recorder = Recorder::default();
    let _default = tracing::subscriber::set_default(Registry::default().with(recorder.clone()));

    let model = ScriptedModel::new([
        Turn::call("c1", "lookup", json!({})).with_call("c2", "broken", json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .name("desk")
        .tool(text_tool("lookup", "found"))
        .tool(failing_tool("broken", "nope"))
        .build()
        .unwrap();
    agent.run(AgentRequest::user("go")).await.unwrap();

    let spans: Vec<SeenSpan> = recorder
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|(_, s)| s.clone())
        .collect();
    let named = |name: &str| {
        spans
            .iter()
            .filter(|s| s.name == name)
            .cloned()
            .collect::<Vec<_>>()
    };

    let runs = named("invoke_agent");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].fields["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(runs[0].fields["gen_ai.agent.name"], "desk");

    let chats = named("chat");
    assert_eq!(chats.len(), 2, "one span per model call");
    for (i, chat) in chats.iter().enumerate() {
        assert_eq!(chat.parent.as_deref(), Some("invoke_agent"));
        assert_eq!(chat.fields["gen_ai.operation.name"], "chat");
        assert_eq!(chat.fields["adk.iteration"], (i + 1).to_string());
        assert_eq!(chat.fields["gen_ai.provider.name"], "scripted");
        // Content only when the program opts in.
        assert!(!chat.fields.contains_key("gen_ai.input.messages"));
    }
    // With `otel`, finish reasons are OpenTelemetry's list attribute, not a field
    // (tests/phoenix reads them there).
    #[cfg(not(feature = "otel"))]
    {
        let reasons = |i: usize| chats[i].fields["gen_ai.response.finish_reasons"].clone();
        assert_eq!(reasons(0), "tool_calls");
        assert_eq!(reasons(1), "stop");
    }

    let mut tools = named("execute_tool");
    tools.sort_by(|a, b| a.fields["gen_ai.tool.call.id"].cmp(&b.fields["gen_ai.tool.call.id"]));
    assert_eq!(tools.len(), 2, "one span per tool call");
    assert_eq!(tools[0].parent.as_deref(), Some("invoke_agent"));
    assert_eq!(tools[0].fields["gen_ai.tool.name"], "lookup");
    assert_eq!(tools[0].fields["gen_ai.tool.call.id"], "c1");
    assert_eq!(tools[0].fields["gen_ai.operation.name"], "execute_tool");
    assert!(!tools[0].fields.contains_key("error.type"));
    assert_eq!(tools[1].fields["gen_ai.tool.name"], "broken");
    assert_eq!(tools[1].fields["error.type"], "tool_error");
}

#[tokio::test(flavor = "current_thread")]
async fn a_failed_model_call_marks_its_span_and_its_run_with_the_error() {
    let recorder = Recorder::default();
    let _default = tracing::subscriber::set_default(Registry::default().with(recorder.clone()));

    let agent = Agent::builder(ScriptedModel::new([Turn::error("overloaded")]))
        .build()
        .unwrap();
    let error = agent.run(AgentRequest::user("go")).await.unwrap_err();
    assert_eq!(error.code(), "model_failed");

    let spans = recorder.0.lock().unwrap();
    let span = |name: &str| {
        let found = spans.iter().find(|(_, s)| s.name == name);
        found.map(|(_, s)| s.fields.clone()).unwrap()
    };
    for name in ["chat", "invoke_agent"] {
        assert_eq!(span(name)["error.type"], "model_failed", "{name}");
        assert_eq!(span(name)["otel.status_code"], "error", "{name}");
    }
}
