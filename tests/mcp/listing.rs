//! A server's tools, with their names, descriptions and JSON Schemas.

use serde_json::json;
use tower_adk::ToolRequest;
use tower_adk::providers::mcp::{McpError, McpServer};

use crate::support::{self, HttpServer, tool};

#[tokio::test]
async fn a_stdio_server_lists_its_tools_with_their_schemas() {
    let tools = support::everything()
        .connect()
        .await
        .unwrap()
        .into_tools()
        .unwrap();

    let echo = tool(&tools, "echo");
    assert!(
        echo.info().description.contains("Echo"),
        "{:?}",
        echo.info()
    );
    assert_eq!(echo.info().parameters["type"], "object");
    assert_eq!(
        echo.info().parameters["properties"]["message"]["type"],
        "string"
    );
    assert_eq!(echo.info().parameters["required"], json!(["message"]));
    assert!(echo.is_invokable() && echo.is_streamable());
    let sum = tool(&tools, "get-sum");
    assert_eq!(sum.info().parameters["properties"]["a"]["type"], "number");
    tool(&tools, "trigger-long-running-operation");
}

#[tokio::test]
async fn a_streamable_http_server_lists_its_tools_and_answers_calls() {
    let server = HttpServer::everything();
    let tools = McpServer::http(server.url())
        .name("everything")
        .connect()
        .await
        .unwrap()
        .into_tools()
        .unwrap();

    let sum = tool(&tools, "get-sum");
    assert_eq!(sum.info().parameters["required"], json!(["a", "b"]));
    let output = sum
        .invoke(ToolRequest::new("c1", "get-sum", json!({"a": 2, "b": 40})))
        .await
        .unwrap();
    assert!(output.content.contains("42"), "{}", output.content);
}

#[tokio::test]
async fn a_python_server_over_http_lists_its_tools_with_their_schemas() {
    let server = HttpServer::toolbox();
    let tools = McpServer::http(server.url())
        .connect()
        .await
        .unwrap()
        .into_tools()
        .unwrap();

    let add = tool(&tools, "add");
    assert_eq!(add.info().description, "Adds two integers.");
    assert_eq!(add.info().parameters["properties"]["b"]["type"], "integer");
    let output = add
        .invoke(ToolRequest::new("c1", "add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(output.content, "5");
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_invalid_arguments() {
    let tools = support::toolbox()
        .connect()
        .await
        .unwrap()
        .into_tools()
        .unwrap();

    let error = tool(&tools, "add")
        .invoke(ToolRequest::new("c1", "add", json!([2, 3])))
        .await
        .unwrap_err();

    let error = error.downcast::<tower_adk::ToolError>().unwrap();
    assert_eq!(error.kind(), tower_adk::ToolErrorKind::InvalidArguments);
}

#[test]
fn public_types_are_send_sync_and_debug() {
    fn assert_send_sync_debug<T: Send + Sync + std::fmt::Debug>() {}
    assert_send_sync_debug::<McpServer>();
    assert_send_sync_debug::<McpError>();
}
