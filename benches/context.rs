//! What keeping the history within a token budget costs per turn: the summariser's
//! bookkeeping (counting the history before each model call) on a history just under a
//! 4,000-token budget, with the estimate and (feature `tiktoken`) OpenAI's tokenizer;
//! and a turn that summarises (the cut, the transcript, an instant summary model, the
//! splice).
//!
//! ```text
//! cargo bench --bench context
//! cargo bench --bench context --features tiktoken
//! ```
//!
//! Each iteration is one `before_model` hook of the summariser, called as the loop calls
//! it, on a 161-message history (about 3,500 tokens) that the loop shares with the
//! model's request (so a summarising turn copies it, as in a run).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tower::service_fn;
use tower_adk::handlers::{CharEstimate, Summarizer, TokenCounter};
use tower_adk::{BoxError, Handler, Message, Messages, ModelRequest, ModelResponse};
use tower_adk::{History, RunContext, ToolCall};

const BUDGET: usize = 4_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// 40 turns of a support conversation (question, lookup, result, answer), then a
/// question: 161 messages, about 3,500 tokens by the estimate.
fn history() -> Messages {
    let mut messages = vec![Message::system("You answer questions about orders.")];
    for i in 0..40 {
        messages.push(Message::user(format!("Where is order {i}?")));
        let call = ToolCall::new(format!("c{i}"), "lookup", json!({"order": i}));
        messages.push(Message::assistant_with_calls("", vec![call]));
        let result = format!(
            "order {i}: {}",
            "shipped from the north warehouse; ".repeat(6)
        );
        messages.push(Message::tool(format!("c{i}"), "lookup", result));
        messages.push(Message::assistant(format!("Order {i} has shipped.")));
    }
    messages.push(Message::user("And order 41?"));
    Messages::from(messages)
}

fn summary_model() -> impl tower::Service<
    ModelRequest,
    Response = ModelResponse,
    Error = BoxError,
    Future = impl Send + 'static,
> + Clone
+ Send
+ Sync
+ 'static {
    service_fn(|_: ModelRequest| async {
        let summary = Message::assistant("The customer asked about orders 0 to 40; all shipped.");
        Ok::<_, BoxError>(ModelResponse::message(summary))
    })
}

fn summarizer_per_turn(c: &mut Criterion) {
    let runtime = runtime();
    let history = history();
    let tokens = CharEstimate.count_messages(&history);
    assert!(
        tokens < BUDGET && tokens > BUDGET * 3 / 4,
        "{tokens} tokens"
    );
    let mut group = c.benchmark_group("summarizer_per_turn");

    let mut bench = |name: &str, summarizer: Summarizer| {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let mut cx = RunContext::new(http::Extensions::new());
                let mut state = History::new(history.clone());
                let hook = summarizer.before_model(&mut cx, &mut state).await;
                hook.unwrap_or_else(|e| panic!("{e}"));
                black_box(state)
            });
        });
    };
    bench("count_estimate", Summarizer::new(summary_model(), BUDGET));
    #[cfg(feature = "tiktoken")]
    {
        let counter = tower_adk::handlers::Tiktoken::for_model("gpt-4o-mini")
            .unwrap_or_else(|e| panic!("{e}"));
        bench(
            "count_tiktoken",
            Summarizer::new(summary_model(), BUDGET).counter(counter),
        );
    }
    // Over a 2,000-token budget: every call summarises the older turns.
    bench(
        "summarising_turn",
        Summarizer::new(summary_model(), BUDGET / 2),
    );
    group.finish();
}

criterion_group!(benches, summarizer_per_turn);
criterion_main!(benches);
