//! Every tool execution leaves a record: name, call id, arguments, success, output or
//! error kind and message, and latency.

use std::time::Duration;

use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn, failing_tool, sleep_tool};
use tower_adk::{Agent, AgentRequest, ToolErrorKind};

#[tokio::test]
async fn records_carry_arguments_output_error_kind_and_latency() {
    let model = ScriptedModel::new([
        Turn::call("c1", "slow", json!({"n": 1}))
            .with_call("c2", "broken", json!({}))
            .with_raw_call("c3", "slow", "{not json"),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(sleep_tool("slow", Duration::from_millis(20), "rested"))
        .tool(failing_tool("broken", "disk full"))
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();
    let [slow, broken, malformed] = &result.tool_records[..] else {
        panic!("{:?}", result.tool_records)
    };

    assert_eq!((slow.call_id.as_str(), slow.name.as_str()), ("c1", "slow"));
    assert_eq!(slow.arguments, r#"{"n":1}"#);
    assert!(slow.is_success());
    assert_eq!(slow.content, "rested");
    assert!(
        slow.latency >= Duration::from_millis(20),
        "{:?}",
        slow.latency
    );

    let error = broken.error.as_ref().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Failed);
    assert_eq!(error.message(), "disk full");
    assert_eq!(broken.content, "error (tool_error): disk full");

    assert_eq!(malformed.arguments, "{not json");
    assert_eq!(
        malformed.error.as_ref().unwrap().kind(),
        ToolErrorKind::InvalidArguments
    );
}
