//! `task_completed`: the built-in tool that ends the run with the model's closing text.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower_adk::handlers::{TaskCompleted, task_completed};
use tower_adk::model::ToolChoice;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, Message, RunStatus};

use crate::counting_tool;

fn closing_prompt() -> Message {
    Message::system(TaskCompleted::DEFAULT_CLOSING_PROMPT)
}

#[tokio::test]
async fn the_tool_is_added_to_every_run_with_no_parameters() {
    let model = ScriptedModel::new([Turn::text("hi")]);
    let agent = Agent::builder(model.clone()).build().unwrap();

    agent
        .run(AgentRequest::user("hi").with_handler(task_completed()))
        .await
        .unwrap();

    let offered = &model.requests()[0].tools;
    assert_eq!(offered.len(), 1);
    assert_eq!(offered[0].name, "task_completed");
    assert_eq!(offered[0].description, TaskCompleted::DEFAULT_DESCRIPTION);
    assert_eq!(offered[0].parameters["properties"], json!({}));
}

#[tokio::test]
async fn called_with_text_the_run_completes_with_that_text_without_another_model_call() {
    let model = ScriptedModel::new([
        Turn::call("c1", "task_completed", json!({})).with_text("Your table is booked."),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone()).build().unwrap();

    let result = agent
        .run(AgentRequest::user("book a table").with_handler(task_completed()))
        .await
        .unwrap();

    assert_eq!(model.calls(), 1);
    assert_eq!(model.remaining(), 1);
    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(
        result.final_message,
        Message::assistant("Your table is booked.")
    );
    assert_eq!(result.tool_records.len(), 1);
    assert_eq!(result.tool_records[0].content, "ok");
}

#[tokio::test]
async fn called_without_text_the_model_is_asked_once_more_without_tools_for_a_closing_line() {
    let model = ScriptedModel::new([
        Turn::call("c1", "task_completed", json!({})),
        // The closing reply calls the tool again: the call is dropped.
        Turn::text("Enjoy your dinner!").with_call("c2", "task_completed", json!({})),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .instruction("You book tables.")
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("book a table").with_handler(task_completed()))
        .await
        .unwrap();

    assert_eq!(model.calls(), 2, "exactly one extra, closing, model call");
    let requests = model.requests();
    assert_eq!(
        requests[0].tool_names().collect::<Vec<_>>(),
        ["task_completed"]
    );
    assert!(
        requests[1].tools.is_empty(),
        "no tools for the closing line"
    );
    assert_eq!(requests[1].options.tool_choice, ToolChoice::None);
    assert_eq!(requests[1].messages.last(), Some(&closing_prompt()));
    assert!(!requests[0].messages.contains(&closing_prompt()));
    assert!(
        !result.messages.contains(&closing_prompt()),
        "the closing prompt is for that call only"
    );

    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(
        result.final_message,
        Message::assistant("Enjoy your dinner!")
    );
    assert_eq!(result.messages.last(), Some(&result.final_message));
    assert_eq!(result.tool_records.len(), 1, "no second task_completed");
    assert_eq!(result.iterations, 2);
}

#[tokio::test]
async fn called_alongside_another_tool_the_other_call_runs_before_the_run_completes() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::call("c1", "send_receipt", json!({}))
            .with_call("c2", "task_completed", json!({}))
            .with_text("Paid; the receipt is on its way."),
        Turn::text("not reached"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("send_receipt", &calls))
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("pay").with_handler(task_completed()))
        .await
        .unwrap();

    assert_eq!(model.calls(), 1);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let records: Vec<(&str, &str)> = result
        .tool_records
        .iter()
        .map(|r| (r.name.as_str(), r.content.as_str()))
        .collect();
    assert_eq!(
        records,
        [("send_receipt", "done"), ("task_completed", "ok")]
    );
    assert_eq!(
        result.final_message,
        Message::assistant("Paid; the receipt is on its way.")
    );
}

#[tokio::test]
async fn called_without_text_alongside_another_tool_the_closing_call_sees_its_result() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::call("c1", "send_receipt", json!({})).with_call("c2", "task_completed", json!({})),
        Turn::text("Receipt sent. Goodbye!"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(counting_tool("send_receipt", &calls))
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("pay").with_handler(task_completed()))
        .await
        .unwrap();

    assert_eq!(model.calls(), 2);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let closing = &model.requests()[1].messages;
    let n = closing.len();
    assert_eq!(closing[n - 3], Message::tool("c1", "send_receipt", "done"));
    assert_eq!(closing[n - 2], Message::tool("c2", "task_completed", "ok"));
    assert_eq!(closing[n - 1], closing_prompt());
    assert_eq!(
        result.final_message,
        Message::assistant("Receipt sent. Goodbye!")
    );
}

#[tokio::test]
async fn the_description_and_the_closing_prompt_are_replaceable() {
    let model = ScriptedModel::new([
        Turn::call("c1", "task_completed", json!({})),
        Turn::text("Bye."),
    ]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let handler = task_completed()
        .description("Call when the ticket is closed.")
        .closing_prompt("Say goodbye in five words.");

    agent
        .run(AgentRequest::user("close it").with_handler(handler))
        .await
        .unwrap();

    let requests = model.requests();
    assert_eq!(
        requests[0].tools[0].description,
        "Call when the ticket is closed."
    );
    assert_eq!(
        requests[1].messages.last(),
        Some(&Message::system("Say goodbye in five words."))
    );
}

#[tokio::test]
async fn a_run_without_the_call_ends_as_usual() {
    let model = ScriptedModel::new([Turn::text("Just an answer.")]);
    let agent = Agent::builder(model.clone()).build().unwrap();

    let result = agent
        .run(AgentRequest::user("hi").with_handler(task_completed()))
        .await
        .unwrap();

    assert_eq!(model.calls(), 1);
    assert_eq!(result.final_message, Message::assistant("Just an answer."));
    assert!(result.tool_records.is_empty());
}
