//! Handlers that change the loop's topology: the agent compiles each new variant once,
//! however many runs need it (DESIGN.md §4).

use serde_json::json;
use tower_adk::handlers::{add_tools, return_directly};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentRequest, Message};

use crate::support::{Calls, counting_tool};

const RUNS: usize = 50;

#[tokio::test]
async fn handler_adding_a_tool_to_a_toolless_agent_makes_the_loop_run_it() {
    let model = ScriptedModel::new([]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let clock = Calls::default();
    let with_clock = add_tools([counting_tool("clock", &clock)]);
    assert_eq!(
        agent.compiled_variants(),
        0,
        "nothing is compiled before a run"
    );

    for run in 0..RUNS {
        model.push(Turn::call(format!("c{run}"), "clock", json!({})));
        model.push(Turn::text("It is noon."));
        let request = AgentRequest::user("time?").with_handler(with_clock.clone());
        let result = agent.run(request).await.unwrap();

        assert_eq!(clock.get(), run + 1, "run {run} ran the added tool");
        assert_eq!(result.tool_records.len(), 1);
        assert_eq!(result.tool_records[0].content, "clock ran");
        assert_eq!(result.iterations, 2, "the loop went back to the model");
        assert_eq!(result.final_message.content(), "It is noon.");
        assert_eq!(
            agent.compiled_variants(),
            1,
            "run {run} reused the tools variant"
        );
    }

    // A run without the handler needs the tool-less variant: one more, once.
    for _ in 0..RUNS {
        model.push(Turn::text("plain"));
        agent.run(AgentRequest::user("hi")).await.unwrap();
    }
    assert_eq!(agent.compiled_variants(), 2);
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn handler_adding_the_first_return_directly_tool_ends_the_run_after_it() {
    let model = ScriptedModel::new([]);
    let lookups = Calls::default();
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("lookup", &lookups))
        .tool(text_tool("answer", "42"))
        .build()
        .unwrap();

    // A plain run: the model answers after the tool, in the tools variant.
    model.push(Turn::call("c0", "lookup", json!({})));
    model.push(Turn::text("looked it up"));
    let plain = agent.run(AgentRequest::user("look")).await.unwrap();
    assert_eq!(plain.final_message.content(), "looked it up");
    assert_eq!(agent.compiled_variants(), 1);

    let direct = return_directly(["answer"]);
    for run in 0..RUNS {
        let calls_before = model.calls();
        model.push(Turn::call(format!("c{run}"), "answer", json!({})));
        let request = AgentRequest::user("answer").with_handler(direct.clone());
        let result = agent.run(request).await.unwrap();

        assert_eq!(
            result.final_message,
            Message::tool(format!("c{run}"), "answer", "42"),
            "run {run} ends with the tool's result"
        );
        assert_eq!(
            model.calls(),
            calls_before + 1,
            "no model call after the tool"
        );
        assert_eq!(result.iterations, 1);
        assert_eq!(agent.compiled_variants(), 2, "run {run} reused the variant");
    }
    assert_eq!(lookups.get(), 1);
    assert_eq!(agent.compiled_variants(), 2);
    assert!(
        agent.config().return_directly().is_empty(),
        "the handler changed the runs, not the agent"
    );
}

/// Runs the same mix of configurations (plain, with a return-directly tool, tool-less)
/// `RUNS` times each; returns the agent's count of compiled variants and the answers.
async fn mixed_runs(recompile: bool) -> (usize, Vec<String>) {
    let model = ScriptedModel::new([]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("answer", "42"))
        .recompile_every_run(recompile)
        .build()
        .unwrap();
    let direct = return_directly(["answer"]);
    let no_tools = tower_adk::handlers::filter_tools(|_, _| false);
    let mut answers = Vec::new();
    for run in 0..RUNS {
        model.push(Turn::call(format!("a{run}"), "answer", json!({})));
        model.push(Turn::text("plain"));
        let plain = agent.run(AgentRequest::user("go")).await.unwrap();
        model.push(Turn::call(format!("b{run}"), "answer", json!({})));
        let request = AgentRequest::user("go").with_handler(direct.clone());
        let returned = agent.run(request).await.unwrap();
        model.push(Turn::text("no tools"));
        let request = AgentRequest::user("go").with_handler(no_tools.clone());
        let toolless = agent.run(request).await.unwrap();
        for result in [plain, returned, toolless] {
            answers.push(result.final_message.content().to_owned());
        }
    }
    assert_eq!(model.remaining(), 0);
    (agent.compiled_variants(), answers)
}

#[tokio::test]
async fn recompiling_every_run_compiles_once_per_run_and_changes_nothing_else() {
    let (cached, cached_answers) = mixed_runs(false).await;
    assert_eq!(cached, 3, "one variant per distinct key");
    let (recompiled, recompiled_answers) = mixed_runs(true).await;
    assert_eq!(recompiled, 3 * RUNS, "one compilation per run");
    assert_eq!(cached_answers, recompiled_answers);
}
