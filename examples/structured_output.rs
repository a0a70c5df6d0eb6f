//! Typed final answers: a support desk that triages each message into a `Ticket`.
//!
//! - **Tool mode** (the default): the model answers by calling a generated
//!   `final_answer` tool whose arguments are a `Ticket`. Its first answer puts the
//!   ticket in a category that does not exist, its second gives a priority out of range;
//!   each time the problems (path and reason) go back to the model as the call's error,
//!   and the third answer passes. The result holds a `Ticket`.
//! - **Native mode**: the schema goes as the model call's response format (the OpenAI
//!   provider sends it as `response_format` with a strict JSON Schema); the model answers
//!   in text, first in prose, which is given back as a user message, then in JSON.
//!
//! It runs on the scripted model from `tower_adk::testing`, so it needs no API key:
//!
//! ```text
//! cargo run --example structured_output
//! ```

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tower::ServiceExt;
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentRequest, Message, ModelRequest};

/// Which team handles a ticket.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Category {
    Billing,
    Shipping,
    Account,
}

/// A triaged support message.
#[derive(Debug, Deserialize, JsonSchema)]
struct Ticket {
    /// The team that handles it.
    category: Category,
    /// 1 (urgent) to 3 (whenever).
    #[schemars(range(min = 1, max = 3))]
    priority: u8,
    /// One line for the team.
    summary: String,
    /// The order it is about, if any.
    order: Option<String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    demo().await
}

/// The whole example (also run by `tests/examples`).
pub(crate) async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    let message = "My order A-1042 arrived broken and I was charged twice!";

    println!("=== tool mode");
    let model = ScriptedModel::new([
        Turn::call("c1", "order_status", json!({"order": "A-1042"})),
        Turn::call(
            "c2",
            "final_answer",
            json!({
                "category": "complaints", "priority": 1,
                "summary": "Broken delivery, double charge", "order": "A-1042"
            }),
        ),
        Turn::call(
            "c3",
            "final_answer",
            json!({
                "category": "billing", "priority": 0,
                "summary": "Broken delivery, double charge", "order": "A-1042"
            }),
        ),
        Turn::call(
            "c4",
            "final_answer",
            json!({
                "category": "billing", "priority": 1,
                "summary": "Broken delivery (A-1042) and charged twice", "order": "A-1042"
            }),
        ),
    ]);
    let triage = Agent::builder(model.clone())
        .instruction("Triage the customer's message into a ticket.")
        .tool(text_tool("order_status", "A-1042: delivered, 2 payments"))
        .output::<Ticket>()
        .retries(3)
        .build()?;
    let answer = triage.oneshot(AgentRequest::user(message)).await?;
    print_feedback(&model.requests());
    print_ticket(&answer.output);
    println!(
        "{} model calls, {} turns; the history keeps only the answer that passed",
        answer.result.model_calls, answer.result.iterations
    );

    println!("\n=== native mode");
    let model = ScriptedModel::new([
        Turn::text("This is a billing issue with an urgent priority."),
        Turn::text(
            r#"{"category": "billing", "priority": 1, "summary": "Charged twice", "order": "A-1042"}"#,
        ),
    ]);
    let triage = Agent::builder(model.clone())
        .instruction("Triage the customer's message into a ticket.")
        .output::<Ticket>()
        .native()
        .build()?;
    let answer = triage.oneshot(AgentRequest::user(message)).await?;
    let requests = model.requests();
    if let Some(format) = &requests[0].options.response_format {
        println!(
            "response format `{}` (strict: {}): {}",
            format.name, format.strict, format.schema
        );
    }
    print_feedback(&requests);
    print_ticket(&answer.output);
    Ok(())
}

/// Routes the ticket (here: prints where it goes).
fn print_ticket(ticket: &Ticket) {
    let order = ticket.order.as_deref().unwrap_or("no order");
    println!(
        "ticket for {:?}, priority {}: {} ({order})",
        ticket.category, ticket.priority, ticket.summary
    );
}

/// Prints what each retry told the model.
fn print_feedback(requests: &[ModelRequest]) {
    for (n, request) in requests.iter().enumerate().skip(1) {
        if let Some(feedback @ (Message::Tool { is_error: true, .. } | Message::User { .. })) =
            request.messages.last()
        {
            println!(
                "model call {}, after:\n  {}",
                n + 1,
                feedback.content().replace('\n', "\n  ")
            );
        }
    }
}
