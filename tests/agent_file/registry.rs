//! The program's own tools, handlers and models, used by the names a file gives them.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tower::ServiceExt;
use tower_adk::file::{AgentFile, Registry};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{AgentConfig, AgentRequest, BoxError, Handler, RunContext, Tool, ToolContext};

#[derive(Deserialize, JsonSchema)]
struct Order {
    id: u32,
}

fn lookup_order() -> Tool {
    Tool::typed(
        "lookup_order",
        "Looks an order up",
        |_: ToolContext, order: Order| async move { Ok(format!("order {} has shipped", order.id)) },
    )
}

/// A handler of the program's own: prefixes the instruction, with the file's settings.
struct Prefix(String);

impl Handler for Prefix {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("prefix")
    }

    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        let instruction = format!("{} {}", self.0, config.instruction());
        config.set_instruction(instruction);
        Ok(config)
    }
}

#[derive(Deserialize)]
struct PrefixSettings {
    text: String,
}

const FILE: &str = "\
description: You help with orders.
model: {provider: registered, name: mine}
tools: [lookup_order]
handlers:
  - prefix: {text: '[${TENANT}]'}
";

#[tokio::test]
async fn a_rust_tool_handler_and_model_are_used_by_their_names_in_the_file() {
    let model = ScriptedModel::new([
        Turn::call("c1", "lookup_order", json!({"id": 7})),
        Turn::text("It has shipped."),
    ]);
    let registry = Registry::new()
        .tool(lookup_order())
        .handler("prefix", |settings| {
            let PrefixSettings { text } = settings.deserialize()?;
            Ok::<_, BoxError>(Prefix(text))
        })
        .model("mine", model.clone());
    let file = AgentFile::reader()
        .registry(&registry)
        .env(|name| (name == "TENANT").then(|| "acme".to_owned()))
        .read_str(FILE, "agent.yaml")
        .unwrap_or_else(|e| panic!("{e}"));
    let loaded = file.load(&registry).await.expect("loads");
    assert_eq!(loaded.handler_names(), ["prompt_template", "prefix"]);
    assert!(
        loaded.scripted_model().is_none(),
        "the model is the program's"
    );
    let agent = loaded.build().expect("builds");

    let result = agent
        .oneshot(AgentRequest::user("order 7?"))
        .await
        .expect("starts")
        .await
        .expect("runs");
    assert_eq!(
        result.tool_record("c1").expect("record").content,
        "order 7 has shipped"
    );
    assert_eq!(result.final_message.content(), "It has shipped.");
    // The handler ran after the prompt template, with the file's settings.
    assert_eq!(
        model.requests()[0].messages[0].content(),
        "[acme] You help with orders."
    );
}

#[tokio::test]
async fn the_files_handlers_run_before_the_requests_own() {
    let registry = Registry::new().handler("prefix", |settings| {
        let PrefixSettings { text } = settings.deserialize()?;
        Ok::<_, BoxError>(Prefix(text))
    });
    let text = "description: base\nmodel: {provider: scripted, turns: [{text: ok}]}\nhandlers: [prefix: {text: file}]\n";
    let agent = super::support::build(
        AgentFile::from_str(text, "a.yaml").expect("reads"),
        &registry,
    )
    .await;
    let request = AgentRequest::user("hi").with_handler(Prefix("request".to_owned()));
    agent
        .clone()
        .oneshot(request)
        .await
        .expect("starts")
        .await
        .expect("runs");
    let seen = agent.scripted_model().expect("scripted").requests();
    assert_eq!(seen[0].messages[0].content(), "request file base");
}

#[tokio::test]
async fn into_parts_gives_the_builder_and_the_handlers_for_the_programs_own_settings() {
    let text = "description: parts\nmodel: {provider: scripted, turns: [{text: ok}]}\nhandlers: [task_completed]\n";
    let loaded = AgentFile::from_str(text, "a.yaml")
        .expect("reads")
        .load(&Registry::new())
        .await
        .expect("loads");
    let model = loaded.scripted_model().cloned().expect("scripted");
    let (builder, handlers) = loaded.into_parts();
    assert_eq!(handlers.len(), 2);
    let agent = builder.max_iterations(3).build().expect("builds");
    let agent = tower::Layer::layer(&tower_adk::file::HandlersLayer::new(handlers), agent);
    agent
        .oneshot(AgentRequest::user("hi"))
        .await
        .expect("starts")
        .await
        .expect("runs");
    assert_eq!(model.requests()[0].messages[0].content(), "parts");
    assert_eq!(
        model.requests()[0].tool_names().collect::<Vec<_>>(),
        ["task_completed"]
    );
}

#[test]
fn a_registry_lists_its_names_and_the_built_in_handlers() {
    let registry = Registry::new()
        .tool(lookup_order())
        .handler("prefix", |_| Ok::<_, BoxError>(()));
    assert_eq!(registry.tool_names().collect::<Vec<_>>(), ["lookup_order"]);
    assert_eq!(registry.handler_names().collect::<Vec<_>>(), ["prefix"]);
    assert!(Registry::BUILT_IN_HANDLERS.contains(&"slots"));
}

#[test]
fn the_public_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Registry>();
    send_sync::<AgentFile>();
    send_sync::<tower_adk::file::LoadedAgent>();
    send_sync::<tower_adk::file::FileAgent>();
    send_sync::<tower_adk::file::FileErrors>();
    send_sync::<tower_adk::file::LoadError>();
}
