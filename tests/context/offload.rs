//! Old, large tool results offloaded from the history and read back by the model, in the
//! same run and in the thread's next run; or cleared.

use serde_json::json;
use tower_adk::handlers::{READ_TOOL, ToolResultOffload};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentRequest};

use crate::assert_paired;

fn report() -> String {
    "line of the quarterly report; ".repeat(40)
}

#[tokio::test]
async fn an_offloaded_result_is_replaced_by_a_reference_and_read_back_on_the_thread() {
    let model = ScriptedModel::new([
        // Run 1: two reports, then an answer.
        Turn::call("c1", "report", json!({"quarter": 1})),
        Turn::call("c2", "report", json!({"quarter": 2})),
        Turn::text("Both quarters are in."),
        // Run 2, on the same thread: the model reads the first report back.
        Turn::call("c3", READ_TOOL, json!({"id": "c1"})),
        Turn::call("c4", READ_TOOL, json!({"id": "nope"})),
        Turn::text("Q1 said: line of the quarterly report."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("report", &report()))
        .build()
        .unwrap();
    let offload = ToolResultOffload::new().keep_recent(1).min_tokens(100);

    let first = AgentRequest::user("Get Q1 and Q2.")
        .on_thread("t")
        .with_handler(offload.clone());
    agent.run(first).await.unwrap();
    let second = AgentRequest::user("What did Q1 say?")
        .on_thread("t")
        .with_handler(offload);
    let result = agent.run(second).await.unwrap();

    let requests = model.requests();
    assert!(requests[0].tool_names().any(|n| n == READ_TOOL));
    // The third call of run 1: c1's result is a reference, c2's (the most recent) whole.
    let third = &requests[2].messages;
    let c1 = third.tool_result("c1").unwrap().content();
    assert_eq!(
        c1,
        "[offloaded: the result of `report` (300 tokens). Call read_tool_result with {\"id\": \"c1\"} to read it again.]"
    );
    assert_eq!(third.tool_result("c2").unwrap().content(), report());
    assert_paired(third);
    // Run 2 starts from the thread's history as run 1 left it; once the read-back
    // result follows c2's, c2's is old too.
    let fourth = &requests[3].messages;
    assert!(
        fourth
            .tool_result("c1")
            .unwrap()
            .content()
            .starts_with("[offloaded:")
    );
    assert_eq!(fourth.tool_result("c2").unwrap().content(), report());
    let fifth = &requests[4].messages;
    assert!(
        fifth
            .tool_result("c2")
            .unwrap()
            .content()
            .starts_with("[offloaded:")
    );
    assert_eq!(fifth.tool_result("c3").unwrap().content(), report());
    assert_paired(fifth);
    // Read back in the thread's next run, from the thread's store.
    assert_eq!(result.tool_record("c3").unwrap().content, report());
    let unknown = result.tool_record("c4").unwrap();
    assert!(!unknown.is_success());
    assert!(
        unknown
            .content
            .contains("no offloaded result has the id `nope`"),
        "{}",
        unknown.content
    );
}

#[tokio::test]
async fn cleared_results_are_gone_and_no_read_tool_is_offered() {
    let model = ScriptedModel::new([
        Turn::call("c1", "report", json!({})),
        Turn::call("c2", "report", json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("report", &report()))
        .build()
        .unwrap();
    let clear = ToolResultOffload::new()
        .keep_recent(1)
        .min_tokens(100)
        .clear();

    let result = agent
        .run(AgentRequest::user("go").with_handler(clear))
        .await
        .unwrap();

    let requests = model.requests();
    assert!(!requests[0].tool_names().any(|n| n == READ_TOOL));
    let c1 = requests[2]
        .messages
        .tool_result("c1")
        .unwrap()
        .content()
        .to_owned();
    assert_eq!(
        c1,
        "[cleared: the result of `report` (300 tokens) is no longer available.]"
    );
    assert!(result.locals.is_empty(), "nothing is stored");
    // Small results are never touched.
    assert_eq!(
        requests[2].messages.tool_result("c2").unwrap().content(),
        report()
    );
}

#[tokio::test]
async fn offloaded_results_survive_an_interrupt_and_are_read_back_after_the_resume() {
    use tower_adk::RunStatus;
    use tower_adk::handlers::{ApprovalRule, HumanApproval};
    use tower_adk::interrupt::Decision;

    let model = ScriptedModel::new([
        Turn::call("c1", "report", json!({})),
        Turn::call("c2", "report", json!({})),
        // The third call is offloaded c1 already; then a refund that waits for a person.
        Turn::call("c3", "refund", json!({"order": 7})),
        Turn::call("c4", READ_TOOL, json!({"id": "c1"})),
        Turn::text("Refunded, and here is Q1 again."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("report", &report()))
        .tool(text_tool("refund", "refunded"))
        .build()
        .unwrap();
    let offload = ToolResultOffload::new().keep_recent(1).min_tokens(100);
    let approval = HumanApproval::new().tool("refund", ApprovalRule::new());

    let request = AgentRequest::user("go")
        .with_handler(offload.clone())
        .with_handler(approval.clone());
    let stopped = agent.run(request).await.unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert!(stopped.locals.contains(tower_adk::handlers::STORE_KEY));

    let id = stopped.interrupts[0].id.clone();
    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [(id, Decision::Approve)],
    )
    .with_handler(offload)
    .with_handler(approval);
    let done = agent.run(resume).await.unwrap();

    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(done.tool_record("c4").unwrap().content, report());
    let last = &model.requests()[4].messages;
    assert!(
        last.tool_result("c1")
            .unwrap()
            .content()
            .starts_with("[offloaded:")
    );
    assert_paired(last);
}
