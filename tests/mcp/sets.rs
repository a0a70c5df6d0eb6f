//! Per-server include and exclude lists: a server's tools are a `ToolSet`, checked when the
//! agent is built.

use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, BuildError, ToolErrorKind};

use crate::support;

#[tokio::test]
async fn an_include_list_keeps_only_the_named_tools_for_the_model_and_for_execution() {
    let model = ScriptedModel::new([
        Turn::call("c1", "get-env", json!({})).with_call("c2", "echo", json!({"message": "hi"})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool_set(
            support::everything()
                .include(["echo", "get-sum"])
                .connect()
                .await
                .unwrap(),
        )
        .build()
        .unwrap();

    let result = agent.run(AgentRequest::user("go")).await.unwrap();

    assert_eq!(
        model.requests()[0].tool_names().collect::<Vec<_>>(),
        ["echo", "get-sum"]
    );
    let refused = result.tool_records[0].error.as_ref().unwrap();
    assert_eq!(refused.kind(), ToolErrorKind::UnknownTool);
    assert_eq!(result.tool_records[1].content, "Echo: hi");
}

#[tokio::test]
async fn an_exclude_list_drops_the_named_tools() {
    let agent = Agent::builder(ScriptedModel::default())
        .tool_set(
            support::toolbox()
                .exclude(["crash", "slow"])
                .connect()
                .await
                .unwrap(),
        )
        .build()
        .unwrap();

    let names: Vec<&str> = agent.config().tool_names().collect();
    assert!(
        names.contains(&"add") && names.contains(&"countdown"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"crash") && !names.contains(&"slow"),
        "{names:?}"
    );
}

#[tokio::test]
async fn an_include_and_an_exclude_list_on_one_server_fail_the_build() {
    let set = support::toolbox()
        .include(["add"])
        .exclude(["crash"])
        .connect()
        .await
        .unwrap();

    let error = Agent::builder(ScriptedModel::default())
        .tool_set(set)
        .build()
        .unwrap_err();

    assert!(
        matches!(&error, BuildError::IncludeAndExclude(server) if server == "toolbox"),
        "{error}"
    );
}

#[tokio::test]
async fn a_listed_name_the_server_lacks_fails_the_build_naming_server_and_tool() {
    let set = support::everything()
        .include(["echo", "ecoh"])
        .connect()
        .await
        .unwrap();

    let error = Agent::builder(ScriptedModel::default())
        .tool_set(set)
        .build()
        .unwrap_err();

    assert_eq!(
        error.to_string(),
        "tool source `everything` has no tool named `ecoh`"
    );
    assert!(matches!(error, BuildError::UnknownToolInSet { .. }));
}
