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
//! Each iteration is one run of one model call (a model that answers at once, which costs
//! close to nothing) over the same 161-message history; the bookkeeping's cost is the
//! difference with `no_handler`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tower::service_fn;
use tower_adk::handlers::{CharEstimate, Summarizer, TokenCounter};
use tower_adk::{Agent, AgentRequest, BoxError, Message, ModelRequest, ModelResponse, ToolCall};

const BUDGET: usize = 4_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// 40 turns of a support conversation (question, lookup, result, answer), then a
/// question: 161 messages, about 3,500 tokens by the estimate.
fn history() -> Vec<Message> {
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
    messages
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

fn bookkeeping(c: &mut Criterion) {
    let runtime = runtime();
    let history = history();
    let tokens = CharEstimate.count_messages(&history);
    assert!(
        tokens < BUDGET && tokens > BUDGET * 3 / 4,
        "{tokens} tokens"
    );
    // Answers at once, whatever the history (the scripted model reads its turn from it).
    let model = service_fn(|_: ModelRequest| async {
        Ok::<_, BoxError>(ModelResponse::message(Message::assistant(
            "It has shipped.",
        )))
    });
    let agent = Agent::builder(model)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("summarizer_per_turn");

    let run = |summarizer: Option<Summarizer>| {
        let (agent, history) = (agent.clone(), history.clone());
        move || {
            let mut request = AgentRequest::new(history.clone());
            if let Some(summarizer) = &summarizer {
                request = request.with_handler(summarizer.clone());
            }
            let run = agent.run(request);
            async move { black_box(run.await.unwrap_or_else(|e| panic!("{e}"))) }
        }
    };
    let mut bench = |name: &str, summarizer: Option<Summarizer>| {
        let run = run(summarizer);
        group.bench_function(name, |b| b.to_async(&runtime).iter(&run));
    };
    bench("no_handler", None);
    bench("estimate", Some(Summarizer::new(summary_model(), BUDGET)));
    #[cfg(feature = "tiktoken")]
    {
        let counter = tower_adk::handlers::Tiktoken::for_model("gpt-4o-mini")
            .unwrap_or_else(|e| panic!("{e}"));
        let summarizer = Summarizer::new(summary_model(), BUDGET).counter(counter);
        bench("tiktoken", Some(summarizer));
    }
    // Over a 2,000-token budget: every run summarises its older turns.
    bench(
        "summarising_turn",
        Some(Summarizer::new(summary_model(), BUDGET / 2)),
    );
    group.finish();
}

criterion_group!(benches, bookkeeping);
criterion_main!(benches);
