//! fakellm: replies scripted by YAML rules over a multi-turn conversation (turn 1 calls
//! a tool, turn 2 answers from its result), whole and streamed; its conversation state is
//! reset between runs.

use std::convert::Infallible;

use serde_json::json;
use tower_adk::providers::openai::OpenAiError;
use tower_adk::{Agent, AgentRequest, Tool, ToolInfo, ToolOutput, ToolRequest};

use crate::servers::Fakellm;
use crate::{openai_error, run, streamed_text};

const RULES: &str = r#"
version: 1
rules:
  - name: compare
    when: {turn: 1, messages_contain: "compare"}
    respond:
      tool_calls:
        - {name: web_search, arguments: {query: "llmock"}}
        - {name: web_search, arguments: {query: "fakellm"}}
  - name: compare_summary
    when: {turn: 2, messages_contain: "compare"}
    respond:
      content: "Both are mock servers."
  - name: kickoff_research
    when: {turn: 1, messages_contain: "research"}
    respond:
      tool_calls:
        - {name: web_search, arguments: {query: "fakellm"}}
  - name: summarize_results
    when: {turn: 2, tool_result_contains: "found"}
    respond:
      content: "Based on the search, I found what you were looking for."
  - name: broken
    when: {messages_contain: "break"}
    respond:
      status: 500
      error: "fakellm exploded"
"#;

fn web_search() -> Tool {
    Tool::from_fn(
        ToolInfo::new("web_search", "Searches the web").parameters(json!({
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"]
        })),
        |req: ToolRequest| async move {
            let query = req.arguments["query"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            Ok::<_, Infallible>(ToolOutput::new(format!("found 3 pages about {query}")))
        },
    )
}

#[tokio::test]
async fn a_scripted_conversation_runs_whole_then_streamed_after_a_reset() {
    let server = Fakellm::start("research", RULES);
    let answer = "Based on the search, I found what you were looking for.";

    for stream in [false, true] {
        // The same first message is the same conversation: without the reset, the second
        // run would start at turn 3 and match no rule.
        server.reset();
        let agent = Agent::builder(server.model(stream))
            .tool(web_search())
            .build()
            .unwrap();

        let (events, result) = run(&agent, AgentRequest::user("Please research fakellm")).await;
        let result = result.unwrap();

        assert_eq!(result.final_message.content(), answer, "stream: {stream}");
        assert_eq!(streamed_text(&events), answer);
        let record = &result.tool_records[0];
        assert_eq!(record.name, "web_search");
        assert_eq!(record.content, "found 3 pages about fakellm");
    }
    assert_eq!(
        server.matched(),
        json!({"kickoff_research": 2, "summarize_results": 2})
    );
}

#[tokio::test]
async fn parallel_tool_calls_from_a_streamed_reply_all_run() {
    let server = Fakellm::start("parallel", RULES);
    server.reset();
    let agent = Agent::builder(server.model(true))
        .tool(web_search())
        .build()
        .unwrap();

    let (_, result) = run(
        &agent,
        AgentRequest::user("Please compare llmock and fakellm"),
    )
    .await;
    let result = result.unwrap();

    let outputs: Vec<_> = result
        .tool_records
        .iter()
        .map(|r| r.content.as_str())
        .collect();
    assert_eq!(
        outputs,
        ["found 3 pages about llmock", "found 3 pages about fakellm"]
    );
    assert_ne!(
        result.tool_records[0].call_id,
        result.tool_records[1].call_id
    );
    assert_eq!(result.final_message.content(), "Both are mock servers.");
}

#[tokio::test]
async fn an_error_rule_is_a_status_error_with_the_rules_message() {
    let server = Fakellm::start("broken", RULES);
    let agent = Agent::builder(server.model(false)).build().unwrap();

    let (_, result) = run(&agent, AgentRequest::user("Please break")).await;
    let error = result.unwrap_err();

    match openai_error(&error) {
        OpenAiError::Status {
            status, message, ..
        } => {
            assert_eq!(
                (status.as_u16(), message.as_str()),
                (500, "fakellm exploded")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(openai_error(&error).is_retryable());
}
