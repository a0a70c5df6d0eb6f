//! fakellm's Anthropic format: a tool loop over its scripted conversation (turn 1 calls a
//! tool, turn 2 answers from its result), whole and streamed, and its error replies.

use serde_json::json;
use tower_adk::providers::anthropic::AnthropicError;
use tower_adk::{Agent, AgentRequest};

use crate::servers::fakellm;
use crate::{MODEL, anthropic_error, builder, run, weather};

const RULES: &str = r#"
version: 1
rules:
  - name: ask_weather
    when: {turn: 1, messages_contain: "weather"}
    respond:
      content: "Let me check."
      tool_calls:
        - {name: get_weather, arguments: {location: "Paris"}}
  - name: answer_weather
    when: {turn: 2, tool_result_contains: "foggy"}
    respond:
      content: "It is foggy in Paris."
  - name: broken
    when: {messages_contain: "break"}
    respond:
      status: 500
      error: "fakellm exploded"
"#;

#[tokio::test]
async fn a_tool_loop_runs_on_fakellms_anthropic_format_whole_and_streamed() {
    let server = fakellm("loop", RULES);
    for stream in [false, true] {
        let (status, _) = server.http("POST", "/_fakellm/reset");
        assert_eq!(status, 200);
        let model = builder(&server.base_url()).stream(stream).build().unwrap();
        let agent = Agent::builder(model).tool(weather()).build().unwrap();

        let (_, result) = run(&agent, AgentRequest::user("What is the weather in Paris?")).await;
        let result = result.unwrap();

        assert_eq!(
            result.final_message.content(),
            "It is foggy in Paris.",
            "stream: {stream}"
        );
        let record = &result.tool_records[0];
        assert_eq!(record.name, "get_weather");
        assert_eq!(record.content, "15C and foggy in Paris", "stream: {stream}");
        assert!(record.call_id.starts_with("toolu_"), "{}", record.call_id);
        // fakellm counts tokens: both calls reported usage under our model name.
        assert_eq!(result.usage.calls, 2, "stream: {stream}");
        assert!(result.usage.by_model[MODEL].total_tokens > 0);
    }
    let (_, stats) = server.http("GET", "/_fakellm/stats");
    assert_eq!(
        stats["by_rule"],
        json!({"ask_weather": 2, "answer_weather": 2})
    );
}

#[tokio::test]
async fn an_error_reply_is_a_status_error_with_anthropics_message_and_kind() {
    let server = fakellm("broken", RULES);
    // Whole: fakellm streams an error rule as an ordinary reply.
    let model = builder(&server.base_url()).stream(false).build().unwrap();
    let agent = Agent::builder(model).build().unwrap();

    let (_, result) = run(&agent, AgentRequest::user("Please break")).await;

    let error = result.unwrap_err();
    match anthropic_error(&error) {
        AnthropicError::Status {
            status,
            message,
            kind,
            ..
        } => assert_eq!(
            (status.as_u16(), message.as_str(), kind.as_deref()),
            (500, "fakellm exploded", Some("mock_error"))
        ),
        other => panic!("{other:?}"),
    }
    assert!(anthropic_error(&error).is_retryable());
}
