//! What a finished run reports: history, records, iterations.

use futures::StreamExt;
use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, AgentResult, Message, ToolCall};

use crate::{Relay, tool_results};

/// One turn calls three tools that finish in the reverse of the model's order, then the
/// model answers.
async fn reverse_finishing_run() -> (ScriptedModel, Vec<AgentEvent>, AgentResult) {
    let relay = Relay::new();
    let model = ScriptedModel::new([
        Turn::calls([
            ToolCall::new("c1", "slow", json!({})),
            ToolCall::new("c2", "medium", json!({})),
            ToolCall::new("c3", "fast", json!({})),
        ]),
        Turn::text("all done"),
    ]);
    let agent = Agent::builder(model.clone())
        .instruction("Be helpful.")
        .tool(relay.tool("slow", 2, "S"))
        .tool(relay.tool("medium", 1, "M"))
        .tool(relay.tool("fast", 0, "F"))
        .build()
        .unwrap();
    let events: Vec<_> = agent
        .run(AgentRequest::user("go"))
        .map(Result::unwrap)
        .collect()
        .await;
    let Some(AgentEvent::Completed(result)) = events.last().cloned() else {
        panic!("the run must complete: {events:?}");
    };
    assert_eq!(relay.calls(), 3);
    (model, events, *result)
}

#[tokio::test]
async fn tool_results_are_appended_in_call_order_not_completion_order() {
    let (model, events, result) = reverse_finishing_run().await;

    // The calls did finish in reverse order...
    let finished: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult(r) => Some(r.call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(finished, ["c3", "c2", "c1"]);

    // ...but the model sees the results in the order of its calls.
    let second = &model.requests()[1];
    assert_eq!(
        tool_results(&second.messages),
        [
            ("c1".into(), "S".into(), false),
            ("c2".into(), "M".into(), false),
            ("c3".into(), "F".into(), false),
        ]
    );
    assert_eq!(
        tool_results(&result.messages),
        tool_results(&second.messages)
    );
}

#[tokio::test]
async fn the_result_holds_the_whole_history_records_and_iteration_count() {
    let (model, _, result) = reverse_finishing_run().await;

    assert_eq!(result.iterations, 2);
    assert_eq!(model.calls(), 2);
    assert_eq!(result.final_message, Message::assistant("all done"));

    let history = &result.messages;
    assert_eq!(history.len(), 7, "{history:?}");
    assert_eq!(history[0], Message::system("Be helpful."));
    assert_eq!(history[1], Message::user("go"));
    let calls: Vec<_> = history[2]
        .tool_calls()
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(calls, ["c1", "c2", "c3"]);
    assert_eq!(history[3], Message::tool("c1", "slow", "S"));
    assert_eq!(history[4], Message::tool("c2", "medium", "M"));
    assert_eq!(history[5], Message::tool("c3", "fast", "F"));
    assert_eq!(history[6], Message::assistant("all done"));
    // The second model call saw everything but the answer.
    assert_eq!(model.requests()[1].messages[..], history[..6]);

    assert_eq!(result.tool_records.len(), 3);
    for record in &result.tool_records {
        assert!(record.is_success(), "{record:?}");
        assert_eq!(record.arguments, "{}");
    }
    let mut records: Vec<_> = result
        .tool_records
        .iter()
        .map(|r| (r.call_id.as_str(), r.name.as_str(), r.content.as_str()))
        .collect();
    records.sort_unstable();
    assert_eq!(
        records,
        [
            ("c1", "slow", "S"),
            ("c2", "medium", "M"),
            ("c3", "fast", "F")
        ]
    );
}

#[tokio::test]
async fn tool_records_are_in_call_order_not_completion_order() {
    // `AgentResult::tool_records` is documented as "in the order of the calls": turn by
    // turn, in the model's order within a turn, like the history.
    let (_, _, result) = reverse_finishing_run().await;

    let order: Vec<_> = result
        .tool_records
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(order, ["c1", "c2", "c3"]);
}
