//! Full agent runs on the scripted model: MCP tools are called, and their results (or
//! errors) flow back to the model.

use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, ToolErrorKind};

use crate::support::{self, tool_result};

#[tokio::test]
async fn the_model_calls_an_mcp_tool_and_reads_its_result() {
    let model = ScriptedModel::new([
        Turn::call("c1", "echo", json!({"message": "hello MCP"})),
        Turn::text("It echoed."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool_set(support::everything().connect().await.unwrap())
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("echo hello")).await.unwrap();

    assert_eq!(result.final_message.content(), "It echoed.");
    let record = &result.tool_records[0];
    assert!(record.is_success(), "{record:?}");
    assert_eq!(record.content, "Echo: hello MCP");
    // The model was shown the server's tools with their schemas, and read the result.
    let shown = &model.requests()[0];
    assert!(shown.tool_names().any(|name| name == "echo"));
    assert_eq!(
        tool_result(&model.requests()[1], "c1"),
        ("Echo: hello MCP".to_owned(), false)
    );
}

#[tokio::test]
async fn a_sandbox_denial_from_server_filesystem_is_a_failed_tool_error_with_its_text() {
    let allowed = std::env::temp_dir().join(format!("tower-adk-mcp-fs-{}", std::process::id()));
    std::fs::create_dir_all(&allowed).unwrap();
    std::fs::write(allowed.join("notes.txt"), "inside the sandbox").unwrap();
    let model = ScriptedModel::new([
        Turn::call(
            "c1",
            "read_text_file",
            json!({"path": allowed.join("notes.txt")}),
        ),
        Turn::call("c2", "read_text_file", json!({"path": "/etc/hostname"})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool_set(support::filesystem(&allowed).connect().await.unwrap())
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("read")).await.unwrap();

    assert_eq!(result.tool_records[0].content, "inside the sandbox");
    let denied = &result.tool_records[1];
    let error = denied
        .error
        .as_ref()
        .expect("the read outside the sandbox failed");
    assert_eq!(error.kind(), ToolErrorKind::Failed);
    assert!(error.message().contains("Access denied"), "{error}");
    let (content, is_error) = tool_result(&model.requests()[2], "c2");
    assert!(is_error && content.contains("Access denied"), "{content}");
    let _ = std::fs::remove_dir_all(&allowed);
}

#[tokio::test]
async fn structured_content_and_text_blocks_reach_the_model_as_text_and_an_image_as_an_image() {
    let model = ScriptedModel::new([
        Turn::call("c1", "measurements", json!({}))
            .with_call("c2", "forecast", json!({"city": "Oslo"}))
            .with_call("c3", "mixed", json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool_set(support::toolbox().connect().await.unwrap())
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    let content = |i: usize| result.tool_records[i].content.as_str();
    // No content blocks: the structured content, as JSON.
    assert_eq!(content(0), r#"{"readings":[1,2,3]}"#);
    // Both: the text blocks, which carry the same JSON.
    let forecast: serde_json::Value = serde_json::from_str(content(1)).unwrap();
    assert_eq!(forecast, json!({"city": "Oslo", "celsius": 21.5}));
    // An image: named in its place in the text, and itself a part the model sees.
    assert_eq!(content(2), "before\n[image: image/png, below]\nafter");
    let image = &result.tool_records[2].parts;
    assert!(
        matches!(image.as_slice(), [tower_adk::Part::Image(source)] if source.media_type() == Some("image/png")),
        "{image:?}"
    );
    let seen = &model.requests()[1].messages;
    let mixed = seen.tool_result("c3").unwrap();
    assert_eq!(mixed.parts().len(), 2, "{mixed:?}");
}

#[tokio::test]
async fn a_json_rpc_error_is_a_model_visible_tool_error_and_the_run_goes_on() {
    let model = ScriptedModel::new([
        Turn::call("c1", "protocol_error", json!({})),
        Turn::call("c2", "refuse", json!({"reason": "not today"})),
        Turn::call("c3", "shout", json!({"text": ""})),
        Turn::call("c4", "add", json!({"a": 1, "b": 1})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool_set(support::toolbox().connect().await.unwrap())
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    let protocol = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(protocol.kind(), ToolErrorKind::Failed);
    assert!(protocol.message().contains("-32001"), "{protocol}");
    assert!(
        protocol.message().contains("refuses at the protocol level"),
        "{protocol}"
    );
    let source = std::error::Error::source(protocol)
        .and_then(|s| s.downcast_ref::<tower_adk::providers::mcp::McpError>());
    assert!(
        matches!(
            source,
            Some(tower_adk::providers::mcp::McpError::Protocol { code: -32001, .. })
        ),
        "{source:?}"
    );
    // isError: kind Failed, the server's text.
    let refused = result.tool_records[1].error.as_ref().unwrap();
    assert_eq!(refused.kind(), ToolErrorKind::Failed);
    assert!(refused.message().contains("not today"), "{refused}");
    // JSON-RPC "invalid params": the model's arguments were wrong.
    let invalid = result.tool_records[2].error.as_ref().unwrap();
    assert_eq!(invalid.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(invalid.message(), "text must not be empty");
    assert_eq!(result.tool_records[3].content, "2");
    assert_eq!(result.final_message.content(), "done");
}
