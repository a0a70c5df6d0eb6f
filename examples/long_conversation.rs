//! A 200-turn support conversation that stays within a 4,000-token budget.
//!
//! One thread, 200 questions about orders. Each turn the model looks the order up (some
//! lookups return a long shipping log) and answers. Three things keep it going:
//!
//! - `ToolResultOffload`: old, large tool results leave the history for a reference
//!   the model can read back with `read_tool_result`;
//! - `Summarizer`: when the history passes the budget, its older turns are replaced by a
//!   summary written by a second (cheap) model, never splitting a tool call from its
//!   result;
//! - `Fallback`: the main model fails now and then (a 503); a backup model answers those
//!   calls.
//!
//! Tokens are counted with OpenAI's tokenizer for `gpt-4o-mini` when built with the
//! `tiktoken` feature, else estimated. The models here are small fakes that answer from
//! the request, so it needs no API key:
//!
//! ```text
//! cargo run --example long_conversation
//! cargo run --example long_conversation --features tiktoken
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower::service_fn;
use tower_adk::handlers::{Fallback, Summarizer, ToolResultOffload, counter_for_model};
use tower_adk::{Agent, AgentRequest, BoxError, Message, ModelRequest, ModelResponse, Tool};
use tower_adk::{ToolInfo, ToolOutput, ToolRequest};

const BUDGET: usize = 4_000;
const TURNS: usize = 200;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    demo().await
}

/// The whole example (also run by `tests/examples`).
pub(crate) async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    let counter = counter_for_model("gpt-4o-mini");
    let seen = Arc::new(AtomicUsize::new(0));
    let backup_calls = Arc::new(AtomicUsize::new(0));
    let model = Fallback::new(support_model(Some(10), Arc::clone(&seen)))
        .or(support_model(None, Arc::clone(&backup_calls)));
    let agent = Agent::builder(model)
        .instruction("You answer questions about orders. Look each order up first.")
        .tool(lookup())
        .build()?;
    let offload = ToolResultOffload::new()
        .keep_recent(2)
        .min_tokens(200)
        .counter(Arc::clone(&counter));
    let summaries = Arc::new(AtomicUsize::new(0));
    let summarizer = Summarizer::new(summary_model(Arc::clone(&summaries)), BUDGET)
        .counter(Arc::clone(&counter));

    let mut largest = 0;
    for turn in 0..TURNS {
        let request = AgentRequest::user(format!("Where is order {turn}?"))
            .on_thread("customer-7")
            .with_handler(offload.clone())
            .with_handler(summarizer.clone());
        let result = agent.run(request).await?;
        let tokens = counter.count_messages(&result.messages);
        largest = largest.max(tokens);
        if turn % 25 == 0 || turn == TURNS - 1 {
            println!(
                "turn {turn:>3}: {:>2} messages, {tokens:>4} tokens; {} summaries so far; {}",
                result.messages.len(),
                summaries.load(Ordering::Relaxed),
                result.final_message.content(),
            );
        }
    }
    println!(
        "\nlargest history: {largest} tokens (budget {BUDGET}); {} summaries; \
         {} model calls answered by the backup",
        summaries.load(Ordering::Relaxed),
        backup_calls.load(Ordering::Relaxed),
    );
    if largest > BUDGET {
        return Err(format!("the history reached {largest} tokens, over {BUDGET}").into());
    }
    Ok(())
}

/// Looks an order up; every fifth order has a long shipping log.
fn lookup() -> Tool {
    let info = ToolInfo::new("lookup", "Looks an order up").parameters(json!({
        "type": "object",
        "properties": {"order": {"type": "integer"}},
        "required": ["order"]
    }));
    Tool::from_fn(info, |request: ToolRequest| async move {
        let order = request.arguments["order"].as_u64().unwrap_or(0);
        let log = if order.is_multiple_of(5) {
            "scanned at a sorting centre on the way; ".repeat(60)
        } else {
            String::new()
        };
        let text = format!("order {order}: shipped from the north warehouse. {log}");
        Ok::<_, std::convert::Infallible>(ToolOutput::new(text))
    })
}

/// A fake support model: looks up the order of the user's last question, then answers
/// from the lookup. With `fail_every`, every such call fails with a 503. Counts its
/// answers in `calls`.
fn support_model(
    fail_every: Option<usize>,
    calls: Arc<AtomicUsize>,
) -> impl tower::Service<
    ModelRequest,
    Response = ModelResponse,
    Error = BoxError,
    Future = impl Send + 'static,
> + Clone
+ Send
+ Sync
+ 'static {
    let attempts = Arc::new(AtomicUsize::new(0));
    service_fn(move |request: ModelRequest| {
        let attempt = attempts.fetch_add(1, Ordering::Relaxed) + 1;
        let failed = fail_every.is_some_and(|every| attempt.is_multiple_of(every));
        if !failed {
            calls.fetch_add(1, Ordering::Relaxed);
        }
        let reply = reply_to(&request.messages);
        async move {
            if failed {
                return Err(BoxError::from("503 Service Unavailable"));
            }
            Ok(ModelResponse::message(reply))
        }
    })
}

/// The fake model's reply: a lookup after a question, an answer after the lookup.
fn reply_to(messages: &[Message]) -> Message {
    let question = messages
        .iter()
        .rev()
        .find(|m| matches!(m, Message::User { .. }));
    let order: u64 = question
        .and_then(|q| q.content().trim_end_matches('?').rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    match messages.last() {
        Some(Message::Tool { .. }) => {
            Message::assistant(format!("Order {order} shipped from the north warehouse."))
        }
        _ => Message::assistant_with_calls(
            "",
            vec![tower_adk::ToolCall::new(
                format!("call_{order}"),
                "lookup",
                json!({"order": order}),
            )],
        ),
    }
}

/// A fake summary model: names the range of orders the older turns asked about.
fn summary_model(
    summaries: Arc<AtomicUsize>,
) -> impl tower::Service<
    ModelRequest,
    Response = ModelResponse,
    Error = BoxError,
    Future = impl Send + 'static,
> + Clone
+ Send
+ Sync
+ 'static {
    service_fn(move |request: ModelRequest| {
        summaries.fetch_add(1, Ordering::Relaxed);
        let transcript = request.messages.last().map_or("", |m| m.content());
        let orders: Vec<u64> = transcript
            .lines()
            .filter_map(|line| line.strip_prefix("user: Where is order "))
            .filter_map(|n| n.trim_end_matches('?').parse().ok())
            .collect();
        let first = orders.first().map_or("?".to_owned(), u64::to_string);
        let summary = format!(
            "The customer asked where orders {first} to {} are; each was looked up and \
             had shipped from the north warehouse.",
            orders.last().map_or("?".to_owned(), u64::to_string),
        );
        async move { Ok::<_, BoxError>(ModelResponse::message(Message::assistant(summary))) }
    })
}
