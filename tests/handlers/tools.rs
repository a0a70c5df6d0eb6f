//! `before_agent` hooks add, remove and filter the run's tools; what the model is shown
//! and what can execute come from the same per-run config (rule 5).

use serde_json::json;
use tower_adk::handlers::{add_tools, filter_tools};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentConfig, AgentRequest, BoxError, BoxHandler, Handler, Message};
use tower_adk::{RunContext, ToolErrorKind};

use crate::support::{Calls, counting_tool};

/// Removes one tool from the run with [`AgentConfig::remove_tool`].
struct RemoveTool(&'static str);

impl Handler for RemoveTool {
    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        config
            .remove_tool(self.0)
            .ok_or_else(|| format!("no tool named {}", self.0))?;
        Ok(config)
    }
}

fn shown(model: &ScriptedModel, call: usize) -> Vec<String> {
    model.requests()[call]
        .tool_names()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn tools_added_removed_and_filtered_per_request() {
    let model = ScriptedModel::new((0..4).map(|_| Turn::text("ok")));
    let agent = Agent::builder(model.clone())
        .tool(text_tool("read", "r"))
        .tool(text_tool("write", "w"))
        .tool(text_tool("delete", "d"))
        .build()
        .unwrap();

    let added = AgentRequest::user("a").with_handler(add_tools([text_tool("search", "s")]));
    let removed = AgentRequest::user("b").with_handler(RemoveTool("write"));
    let filtered =
        AgentRequest::user("c").with_handler(filter_tools(|_, tool| tool.name().starts_with('r')));
    let plain = AgentRequest::user("d");
    for request in [added, removed, filtered, plain] {
        agent.run(request).await.unwrap();
    }

    assert_eq!(shown(&model, 0), ["read", "write", "delete", "search"]);
    assert_eq!(shown(&model, 1), ["read", "delete"]);
    assert_eq!(shown(&model, 2), ["read"]);
    // No request changed the agent's own tools.
    assert_eq!(shown(&model, 3), ["read", "write", "delete"]);
    assert_eq!(
        agent.config().tool_names().collect::<Vec<_>>(),
        ["read", "write", "delete"]
    );
}

#[tokio::test]
async fn tool_added_per_request_executes() {
    let model = ScriptedModel::new([
        Turn::call("c1", "search", json!({"q": "tower"})),
        Turn::text("found it"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("read", "r"))
        .build()
        .unwrap();
    let search = Calls::default();

    let request = AgentRequest::user("find tower")
        .with_handler(add_tools([counting_tool("search", &search)]));
    let result = agent.run(request).await.unwrap();

    assert_eq!(search.get(), 1);
    assert_eq!(result.tool_records.len(), 1);
    assert!(result.tool_records[0].is_success());
    assert_eq!(result.tool_records[0].content, "search ran");
    assert_eq!(result.final_message.content(), "found it");
}

/// A model that calls `delete` although `hide` removed it gets an "unknown tool" result,
/// and `delete` never runs; the run goes on.
async fn assert_hidden_tool_is_not_executable(hide: BoxHandler) {
    let model = ScriptedModel::new([
        Turn::call("c1", "delete", json!({"id": 7})),
        Turn::text("I cannot delete that."),
    ]);
    let delete = Calls::default();
    let read = Calls::default();
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("read", &read))
        .tool(counting_tool("delete", &delete))
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("delete 7").with_handler(hide))
        .await
        .unwrap();

    assert_eq!(
        shown(&model, 0),
        ["read"],
        "the model is not shown `delete`"
    );
    assert_eq!(delete.get(), 0, "`delete` must never run");
    assert_eq!(read.get(), 0);
    let record = &result.tool_records[..];
    assert_eq!(record.len(), 1);
    assert_eq!(record[0].name, "delete");
    assert_eq!(record[0].call_id, "c1");
    let kind = record[0].error.as_ref().map(|e| e.kind());
    assert_eq!(kind, Some(ToolErrorKind::UnknownTool));
    // The model sees the failure as the call's result and answers in the next turn.
    let answer = model.requests()[1].messages.last().cloned().unwrap();
    assert!(
        matches!(&answer, Message::Tool { call_id, is_error: true, .. } if call_id == "c1"),
        "{answer:?}"
    );
    assert!(answer.content().contains("unknown tool"), "{answer:?}");
    assert_eq!(result.final_message.content(), "I cannot delete that.");
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn tool_hidden_by_filter_tools_is_neither_shown_nor_executable() {
    let hide = filter_tools(|_, tool| tool.name() != "delete");
    assert_hidden_tool_is_not_executable(hide.into()).await;
}

#[tokio::test]
async fn tool_removed_by_a_handler_is_neither_shown_nor_executable() {
    assert_hidden_tool_is_not_executable(RemoveTool("delete").into()).await;
}

#[tokio::test]
async fn tool_filter_reads_the_callers_role_from_the_request_extensions() {
    #[derive(Clone, PartialEq)]
    enum Role {
        Admin,
        Viewer,
    }
    let model = ScriptedModel::new([Turn::text("ok"), Turn::text("ok")]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("read", "r"))
        .tool(text_tool("delete", "d"))
        .build()
        .unwrap();
    let by_role = || {
        filter_tools(|ext, tool| tool.name() != "delete" || ext.get::<Role>() == Some(&Role::Admin))
    };

    for role in [Role::Viewer, Role::Admin] {
        let request = AgentRequest::user("hi")
            .with_extension(role)
            .with_handler(by_role());
        agent.run(request).await.unwrap();
    }

    assert_eq!(shown(&model, 0), ["read"]);
    assert_eq!(shown(&model, 1), ["read", "delete"]);
}
