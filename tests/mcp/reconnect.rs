//! A server that dies mid-run: its calls fail with model-visible errors, the run goes on,
//! and a later call connects again.

use std::time::Duration;

use serde_json::json;
use tower_adk::providers::mcp::{McpError, McpServer};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, ToolErrorKind, ToolRecord, ToolRequest};

use crate::support::{self, HttpServer, tool, tool_result};

fn mcp_error(record: &ToolRecord) -> &McpError {
    let error = record
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("{record:?} succeeded"));
    assert_eq!(error.kind(), ToolErrorKind::Failed, "{error}");
    std::error::Error::source(error)
        .and_then(|s| s.downcast_ref::<McpError>())
        .unwrap_or_else(|| panic!("{error} does not come from an McpError"))
}

/// The `McpError` behind a tool's error.
fn mcp_error_of(error: tower::BoxError) -> McpError {
    match error.downcast::<McpError>() {
        Ok(error) => *error,
        Err(error) => panic!("{error} is not an McpError"),
    }
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_that_call_and_the_next_call_reconnects() {
    let model = ScriptedModel::new([
        Turn::call("c1", "pid", json!({})),
        Turn::call("c2", "crash", json!({})),
        Turn::call("c3", "pid", json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool_set(support::toolbox().connect().await.unwrap())
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    let records = &result.tool_records;
    let first_pid = &records[0].content;
    assert!(first_pid.parse::<u32>().is_ok(), "{first_pid}");
    assert!(
        matches!(mcp_error(&records[1]), McpError::Disconnected { server } if server == "toolbox")
    );
    let (content, is_error) = tool_result(&model.requests()[2], "c2");
    assert!(
        is_error && content.contains("closed the connection"),
        "{content}"
    );
    // A new server process answered the call after the crash.
    assert!(records[2].is_success(), "{:?}", records[2]);
    assert_ne!(&records[2].content, first_pid);
    assert_eq!(result.final_message.content(), "done");
}

#[tokio::test]
async fn concurrent_calls_after_a_death_share_one_reconnect() {
    let model = ScriptedModel::new([
        Turn::call("c1", "crash", json!({})),
        Turn::call("c2", "pid", json!({}))
            .with_call("c3", "pid", json!({}))
            .with_call("c4", "pid", json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool_set(support::toolbox().connect().await.unwrap())
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    let pids: Vec<&str> = result.tool_records[1..]
        .iter()
        .map(|r| r.content.as_str())
        .collect();
    assert!(
        result.tool_records[1..].iter().all(ToolRecord::is_success),
        "{result:?}"
    );
    assert_eq!(pids, [pids[0]; 3]);
}

#[tokio::test]
async fn calls_to_a_dead_http_server_fail_and_a_later_call_reconnects_when_it_is_back() {
    let mut server = HttpServer::everything();
    let port = server.port();
    let tools = McpServer::http(server.url())
        .name("everything")
        .connect_retries(1)
        .retry_backoff(Duration::from_millis(10))
        .connect_timeout(Duration::from_secs(5))
        .call_timeout(Duration::from_secs(10))
        .connect()
        .await
        .unwrap()
        .into_tools()
        .unwrap();
    let echo = tool(&tools, "echo");
    let call = |text: &str| echo.invoke(ToolRequest::new("c", "echo", json!({"message": text})));
    assert_eq!(call("one").await.unwrap().content, "Echo: one");

    server.kill();
    // The call that finds the server gone fails; so does the next, whose reconnect (two
    // attempts: one retry) finds nothing listening.
    let lost = mcp_error_of(call("two").await.unwrap_err());
    assert!(matches!(lost, McpError::Disconnected { .. }), "{lost:?}");
    let unavailable = mcp_error_of(call("three").await.unwrap_err());
    assert!(
        matches!(unavailable, McpError::Unavailable { attempts: 2, .. }),
        "{unavailable:?}"
    );

    let _server = HttpServer::everything_on(port);
    assert_eq!(call("four").await.unwrap().content, "Echo: four");
}
