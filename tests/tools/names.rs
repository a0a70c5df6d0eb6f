//! Tool names: only names chat-completion providers accept (`^[a-zA-Z0-9_-]{1,64}$`),
//! unique, at build and when a handler adds tools; and a run's tools found by name after
//! a handler narrows them.

use serde_json::json;
use tower_adk::handlers::{add_tools, filter_tools};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentConfig, AgentError, AgentRequest, BuildError, ToolErrorKind};

const BAD_NAMES: [&str; 5] = ["", "has space", "météo", "dot.ted", "a/b"];

fn too_long() -> String {
    "x".repeat(65)
}

#[test]
fn an_agent_with_a_tool_name_providers_refuse_does_not_build() {
    let long = too_long();
    for name in BAD_NAMES.into_iter().chain([long.as_str()]) {
        let error = Agent::builder(ScriptedModel::new([]))
            .tool(text_tool(name, "out"))
            .build()
            .unwrap_err();

        assert!(
            matches!(&error, BuildError::InvalidToolName { name: n, .. } if n == name),
            "{name:?}: {error}"
        );
    }
}

#[test]
fn the_longest_and_widest_name_builds() {
    let name = format!("A-z_09{}", "x".repeat(58));
    assert_eq!(name.len(), 64);

    let agent = Agent::builder(ScriptedModel::new([]))
        .tool(text_tool(&name, "out"))
        .build();

    assert!(agent.is_ok());
}

#[tokio::test]
async fn a_handler_that_adds_a_badly_named_tool_fails_the_run_before_the_model_is_called() {
    let model = ScriptedModel::new([Turn::text("hi")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let request = AgentRequest::user("go").with_handler(add_tools([text_tool("has space", "x")]));

    let error = agent.run(request).await.unwrap_err();

    assert!(
        matches!(&error, AgentError::Config(BuildError::InvalidToolName { name, .. }) if name == "has space"),
        "{error}"
    );
    assert_eq!(model.calls(), 0);
}

#[tokio::test]
async fn a_handler_that_adds_a_second_tool_of_a_name_fails_the_run() {
    struct Twice;
    impl tower_adk::Handler for Twice {
        async fn before_agent(
            &self,
            _: &mut tower_adk::RunContext,
            mut config: AgentConfig,
        ) -> Result<AgentConfig, tower_adk::BoxError> {
            config.tools_mut().push(text_tool("read", "again"));
            Ok(config)
        }
    }
    let agent = Agent::builder(ScriptedModel::new([Turn::text("hi")]))
        .tool(text_tool("read", "r"))
        .build()
        .unwrap();

    let error = agent
        .run(AgentRequest::user("go").with_handler(Twice))
        .await
        .unwrap_err();

    assert!(
        matches!(&error, AgentError::Config(BuildError::DuplicateTool(name)) if name == "read"),
        "{error}"
    );
}

#[tokio::test]
async fn after_narrowing_kept_tools_run_and_removed_ones_are_unknown() {
    let model = ScriptedModel::new([
        Turn::call("c1", "tool_4", json!({}))
            .with_call("c2", "tool_5", json!({}))
            .with_call("c3", "", json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tools((0..8).map(|i| text_tool(&format!("tool_{i}"), &format!("out {i}"))))
        .build()
        .unwrap();
    // Two narrowings in a row: keep the even tools, then drop `tool_0`.
    let request = AgentRequest::user("go")
        .with_handler(filter_tools(|_, tool| {
            tool.name().ends_with(['0', '2', '4', '6'])
        }))
        .with_handler(filter_tools(|_, tool| tool.name() != "tool_0"));

    let result = agent.run(request).await.unwrap();

    let records = &result.tool_records;
    assert_eq!(records[0].content, "out 4");
    assert_eq!(
        records[1].error.as_ref().unwrap().kind(),
        ToolErrorKind::UnknownTool
    );
    assert_eq!(
        records[2].error.as_ref().unwrap().kind(),
        ToolErrorKind::UnknownTool
    );
    let shown: Vec<_> = model.requests()[0]
        .tool_names()
        .map(str::to_owned)
        .collect();
    assert_eq!(shown, ["tool_2", "tool_4", "tool_6"]);
}

#[test]
fn a_narrowed_config_finds_exactly_the_tools_it_holds() {
    // Short lists are scanned, long ones indexed: both must agree with the list.
    for size in [10, 40] {
        let agent = Agent::builder(ScriptedModel::new([]))
            .tools((0..size).map(|i| text_tool(&format!("t{i}"), "x")))
            .build()
            .unwrap();
        let mut config = agent.config().clone();
        config.retain_tools(|t| t.name() != "t3" && t.name() != "t7");
        config.remove_tool("t0");
        config.retain_tools(|t| t.name() != "t9");

        let held: Vec<&str> = config.tool_names().collect();
        assert_eq!(held.len(), size - 4);
        assert_eq!(held[..6], ["t1", "t2", "t4", "t5", "t6", "t8"]);
        for i in 0..size + 2 {
            let name = format!("t{i}");
            let found = config.tool(&name);
            assert_eq!(
                found.is_some(),
                held.contains(&name.as_str()),
                "{size}: {name}"
            );
            assert!(found.is_none_or(|tool| tool.name() == name));
        }
    }
}
