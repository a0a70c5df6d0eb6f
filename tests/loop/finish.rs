//! A tool or a wrapper can end the run with `Finish`, once the turn's calls are done.

use futures::StreamExt;
use serde_json::json;
use tower_adk::handlers::{wrap_tool_invoke, wrap_tool_stream};
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool, text_tool};
use tower_adk::{Agent, AgentEvent, AgentRequest, Finish, Message, RunStatus};

fn finish_on(name: &'static str, finish: Finish) -> impl tower_adk::Handler {
    wrap_tool_invoke(move |req, next| {
        let finish = finish.clone();
        async move {
            let is_target = req.name == name;
            let output = next.run(req).await?;
            Ok(if is_target {
                output.finishing(finish)
            } else {
                output
            })
        }
    })
}

#[tokio::test]
async fn a_finishing_call_ends_the_run_with_its_result_after_the_turns_other_calls() {
    let model = ScriptedModel::new([
        Turn::call("c1", "done", json!({})).with_call("c2", "other", json!({})),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("done", "all set"))
        .tool(text_tool("other", "side work"))
        .build()
        .unwrap();
    let request = AgentRequest::user("go").with_handler(finish_on("done", Finish::WithResult));

    let result = agent.run(request).await.unwrap();

    assert_eq!(model.calls(), 1, "no model call after the finishing turn");
    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(result.final_message, Message::tool("c1", "done", "all set"));
    assert_eq!(
        result.tool_records.len(),
        2,
        "the other call of the turn ran"
    );
    // Finishing from a handler is not a topology change: one variant, the tools loop.
    assert_eq!(agent.compiled_variants(), 1);
}

#[tokio::test]
async fn finishing_with_the_turn_text_makes_the_models_text_the_final_message() {
    let model = ScriptedModel::new([Turn::call("c1", "done", json!({})).with_text("All booked.")]);
    let agent = Agent::builder(model)
        .tool(text_tool("done", "ok"))
        .build()
        .unwrap();
    let request = AgentRequest::user("go").with_handler(finish_on("done", Finish::WithTurnText));

    let result = agent.run(request).await.unwrap();

    assert_eq!(result.final_message, Message::assistant("All booked."));
}

#[tokio::test]
async fn finishing_with_a_message_makes_it_the_final_message() {
    let model = ScriptedModel::new([Turn::call("c1", "done", json!({}))]);
    let agent = Agent::builder(model)
        .tool(text_tool("done", "ok"))
        .build()
        .unwrap();
    let closing = Message::assistant("Thanks, goodbye.");
    let request =
        AgentRequest::user("go").with_handler(finish_on("done", Finish::With(closing.clone())));

    let result = agent.run(request).await.unwrap();

    assert_eq!(result.final_message, closing);
}

#[tokio::test]
async fn a_failed_call_does_not_finish_the_run() {
    let model = ScriptedModel::new([
        Turn::call("c1", "done", json!({"x": 1})),
        Turn::text("retry later"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(tower_adk::testing::failing_tool("done", "nope"))
        .build()
        .unwrap();
    let request = AgentRequest::user("go").with_handler(finish_on("done", Finish::WithResult));

    let result = agent.run(request).await.unwrap();

    assert_eq!(model.calls(), 2);
    assert_eq!(result.final_message.content(), "retry later");
}

#[tokio::test]
async fn a_streamed_call_can_finish_the_run_and_its_result_is_the_last_tool_event() {
    let model = ScriptedModel::new([
        Turn::call("c1", "report", json!({})).with_call("c2", "other", json!({})),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(chunk_tool("report", &["a", "b"], std::time::Duration::ZERO))
        .tool(text_tool("other", "x"))
        .build()
        .unwrap();
    let finish = wrap_tool_stream(|req, next| async move {
        Ok(next.run(req).await?.finishing(Finish::WithResult))
    });

    let events: Vec<AgentEvent> = agent
        .run(AgentRequest::user("go").with_handler(finish))
        .map(Result::unwrap)
        .collect()
        .await;

    let results: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult(r) => Some(r.call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["c2", "c1"]);
    let Some(AgentEvent::Completed(result)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(result.final_message, Message::tool("c1", "report", "ab"));
    assert_eq!(model.calls(), 1);
}
