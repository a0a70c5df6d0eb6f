//! The call's options reach the server as OpenAI's fields, and llmock acts on
//! `tool_choice` as a model does.

use serde_json::json;
use tower::ServiceExt;
use tower_adk::model::{ModelOptions, ToolChoice};
use tower_adk::{Agent, AgentRequest, Message, ModelRequest, Tool, ToolInfo, ToolOutput};

use crate::servers::Llmock;
use crate::{clock, run, weather};

#[tokio::test]
async fn options_and_strict_tools_are_sent_as_openai_fields() {
    let server = Llmock::start();
    let strict = Tool::from_fn(
        ToolInfo::new("search", "Searches")
            .strict()
            .parameters(json!({
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query"]
            })),
        |_| async { Ok::<_, std::convert::Infallible>(ToolOutput::new("found")) },
    );
    let mut options = ModelOptions::default();
    options.temperature = Some(0.25);
    options.top_p = Some(0.5);
    options.max_tokens = Some(128);
    options.stop = vec!["END".into()];
    options.seed = Some(42);
    options.tool_choice = ToolChoice::Required;
    options.parallel_tool_calls = Some(false);
    let model = server
        .builder()
        .extra_body("user", "test-suite")
        .build()
        .unwrap();
    let mut request = ModelRequest::new(vec![Message::user("Search for rust")].into());
    request.tools = [strict.info(), weather().info()]
        .into_iter()
        .cloned()
        .map(Into::into)
        .collect();
    request.options = options;

    let reply = model
        .oneshot(request)
        .await
        .unwrap()
        .into_message()
        .await
        .unwrap();

    assert_eq!(
        reply.tool_calls().len(),
        1,
        "required: the server called a tool"
    );
    let body = &server.requests()[0];
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(body["temperature"], 0.25);
    assert_eq!(body["top_p"], 0.5);
    assert_eq!(body["max_tokens"], 128);
    assert_eq!(body["stop"], json!(["END"]));
    assert_eq!(body["seed"], 42);
    assert_eq!(body["tool_choice"], "required");
    assert_eq!(body["parallel_tool_calls"], false);
    assert_eq!(body["user"], "test-suite");
    let search = &body["tools"][0]["function"];
    assert_eq!(search["strict"], true);
    assert_eq!(search["parameters"]["additionalProperties"], false);
    assert_eq!(search["parameters"]["required"], json!(["query", "limit"]));
    assert_eq!(body["tools"][1]["function"]["strict"], false);
}

#[tokio::test]
async fn a_named_tool_choice_makes_the_server_call_that_tool() {
    let server = Llmock::start();
    let mut options = ModelOptions::default();
    // The prompt is about the weather, but the call must be `time`.
    options.tool_choice = ToolChoice::Tool("time".into());
    let agent = Agent::builder(server.model(true))
        .tools([weather(), clock()])
        .model_options(options)
        .max_iterations(1)
        .build()
        .unwrap();

    let (events, result) = run(&agent, AgentRequest::user("What is the weather in Paris?")).await;

    // Forced on every call, the model never stops calling: the run hits its limit.
    assert!(result.unwrap_err().is_max_iterations());
    let call = events.iter().find_map(|e| match e {
        tower_adk::AgentEvent::Message(m) => m.tool_calls().first().cloned(),
        _ => None,
    });
    assert_eq!(call.unwrap().name, "time");
    assert_eq!(
        server.requests()[0]["tool_choice"],
        json!({"type": "function", "function": {"name": "time"}})
    );
}

#[tokio::test]
async fn tool_choice_none_gets_text_although_tools_are_offered() {
    let server = Llmock::start();
    let mut options = ModelOptions::default();
    options.tool_choice = ToolChoice::None;
    let agent = Agent::builder(server.model(false))
        .tool(weather())
        .model_options(options)
        .build()
        .unwrap();

    let (_, result) = run(&agent, AgentRequest::user("What is the weather in Paris?")).await;
    let result = result.unwrap();

    assert!(result.tool_records.is_empty());
    assert!(!result.final_message.content().is_empty());
    assert_eq!(server.requests()[0]["tool_choice"], "none");
}
