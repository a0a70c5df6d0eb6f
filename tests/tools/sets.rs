//! Tool sources filtered with an include or an exclude list.

use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::tool::ToolSet;
use tower_adk::{Agent, AgentRequest, BuildError, Tool, ToolErrorKind};

fn source() -> Vec<Tool> {
    vec![
        text_tool("read", "r"),
        text_tool("write", "w"),
        text_tool("delete", "d"),
    ]
}

#[tokio::test]
async fn an_include_list_keeps_only_the_named_tools_for_the_model_and_for_execution() {
    let model = ScriptedModel::new([Turn::call("c1", "delete", json!({})), Turn::text("ok")]);
    let agent = Agent::builder(model.clone())
        .tool_set(ToolSet::new("files", source()).include(["read", "write"]))
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(
        model.requests()[0].tool_names().collect::<Vec<_>>(),
        ["read", "write"]
    );
    assert_eq!(
        result.tool_records[0].error.as_ref().unwrap().kind(),
        ToolErrorKind::UnknownTool
    );
}

#[test]
fn an_exclude_list_drops_the_named_tools() {
    let agent = Agent::builder(ScriptedModel::default())
        .tool_set(ToolSet::new("files", source()).exclude(["delete"]))
        .tool(text_tool("clock", "noon"))
        .build()
        .unwrap();

    assert_eq!(
        agent.config().tool_names().collect::<Vec<_>>(),
        ["clock", "read", "write"]
    );
}

#[test]
fn include_and_exclude_together_are_rejected_when_the_agent_is_built() {
    let set = ToolSet::new("files", source())
        .include(["read"])
        .exclude(["delete"]);

    let error = Agent::builder(ScriptedModel::default())
        .tool_set(set)
        .build()
        .unwrap_err();

    assert!(
        matches!(&error, BuildError::IncludeAndExclude(name) if name == "files"),
        "{error}"
    );
}

#[test]
fn an_unknown_name_in_a_list_is_reported_when_the_agent_is_built() {
    for set in [
        ToolSet::new("files", source()).include(["read", "shred"]),
        ToolSet::new("files", source()).exclude(["shred"]),
    ] {
        let error = Agent::builder(ScriptedModel::default())
            .tool_set(set)
            .build()
            .unwrap_err();
        assert!(
            matches!(&error, BuildError::UnknownToolInSet { set, tool } if set == "files" && tool == "shred"),
            "{error}"
        );
    }
}

#[test]
fn two_sources_with_the_same_tool_name_are_a_duplicate() {
    let error = Agent::builder(ScriptedModel::default())
        .tool_set(ToolSet::new("a", [text_tool("read", "")]))
        .tool_set(ToolSet::new("b", [text_tool("read", "")]))
        .build()
        .unwrap_err();

    assert!(
        matches!(&error, BuildError::DuplicateTool(name) if name == "read"),
        "{error}"
    );
}
