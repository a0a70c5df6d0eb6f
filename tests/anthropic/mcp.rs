//! An MCP server's image (the `mixed` tool of tests/mcp/servers/toolbox.py, over stdio,
//! from `scripts/setup-mcp-servers`) reaches Claude as an image in the tool result.

use std::path::{Path, PathBuf};

use serde_json::json;
use tower_adk::providers::mcp::McpServer;
use tower_adk::{Agent, AgentRequest};

use crate::replay::{Replay, Reply};
use crate::{blocks, builder};

/// The toolbox server, with the Python of `scripts/setup-mcp-servers`.
fn toolbox() -> McpServer {
    let servers = std::env::var_os("MCP_TEST_SERVERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/mcp"),
        PathBuf::from,
    );
    let python = servers.join("venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup-mcp-servers first",
        python.display()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/servers/toolbox.py");
    McpServer::stdio(python, [script]).name("toolbox").quiet()
}

/// A reply that calls the toolbox's `mixed` tool, in the stream grammar.
fn calls_mixed() -> Reply {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_01Mixed", "name": "mixed", "input": {}}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ];
    let body: String = (events.iter())
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    Reply::events(body)
}

#[tokio::test]
async fn an_mcp_tools_image_reaches_the_model_as_an_image_in_its_tool_result() {
    let server = Replay::start([calls_mixed(), Reply::stream("basic.sse")]);
    let agent = Agent::builder(builder(&server.base_url()).build().unwrap())
        .tool_set(toolbox().connect().await.unwrap())
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("Show me.")).await.unwrap();
    assert_eq!(result.final_message.content(), "Hello!");

    let results = blocks(&server.bodies()[1], 2);
    assert_eq!(
        results,
        [
            json!({"type": "tool_result", "tool_use_id": "toolu_01Mixed", "content": [
                {"type": "text", "text": "before\n[image: image/png, below]\nafter"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}}
            ]})
        ]
    );
}
