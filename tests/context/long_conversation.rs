//! A 200-turn conversation on a thread, held under a 4k-token budget by the summariser.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tower::service_fn;
use tower_adk::handlers::{CharEstimate, SUMMARY_PREFIX, Summarizer, TokenCounter};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentRequest, BoxError, Message, ModelRequest, ModelResponse, Tool, ToolInfo, ToolOutput,
};

use crate::assert_paired;

const BUDGET: usize = 4_000;
const TURNS: usize = 200;

/// Looks an order up: about a hundred tokens of text.
fn lookup() -> Tool {
    Tool::from_fn(
        ToolInfo::new("lookup", "Looks an order up"),
        |request: tower_adk::ToolRequest| async move {
            let n = request.arguments["n"].as_u64().unwrap_or(0);
            let text = format!(
                "order {n}: {}",
                "shipped from the north warehouse; ".repeat(12)
            );
            Ok::<_, std::convert::Infallible>(ToolOutput::new(text))
        },
    )
}

/// Each turn of the user: one or two lookups (two in parallel every third turn), then an
/// answer.
fn script() -> Vec<Turn> {
    let mut turns = Vec::new();
    for i in 0..TURNS {
        let mut call = Turn::call(format!("a{i}"), "lookup", json!({"n": i}));
        if i.is_multiple_of(3) {
            call = call.with_call(format!("b{i}"), "lookup", json!({"n": i + 1000}));
        }
        turns.push(call);
        turns.push(Turn::text(format!(
            "Order {i} shipped from the north warehouse."
        )));
    }
    turns
}

#[tokio::test]
async fn a_200_turn_conversation_stays_under_4k_tokens_with_every_call_paired() {
    let model = ScriptedModel::new(script());
    let agent = Agent::builder(model.clone())
        .instruction("You answer questions about orders.")
        .tool(lookup())
        .build()
        .unwrap();
    let transcripts = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&transcripts);
    let summary_model = service_fn(move |request: ModelRequest| {
        let transcript = request.messages[1].content().to_owned();
        seen.lock().unwrap().push(transcript);
        let n = seen.lock().unwrap().len();
        let summary = format!(
            "Summary {n}: the user asked about many orders; all shipped from the north warehouse."
        );
        async move { Ok::<_, BoxError>(ModelResponse::message(Message::assistant(summary))) }
    });
    let summarizer = Summarizer::new(summary_model, BUDGET);

    for i in 0..TURNS {
        let request = AgentRequest::user(format!("Where is order {i}?"))
            .on_thread("customer-7")
            .with_handler(summarizer.clone());
        let result = agent.run(request).await.unwrap();
        assert_eq!(
            result.final_message.content(),
            format!("Order {i} shipped from the north warehouse.")
        );
    }

    let requests = model.requests();
    assert_eq!(requests.len(), 2 * TURNS);
    let mut largest = 0;
    for (at, request) in requests.iter().enumerate() {
        let tokens = CharEstimate.count_messages(&request.messages);
        assert!(tokens <= BUDGET, "request {at} has {tokens} tokens");
        largest = largest.max(tokens);
        assert_paired(&request.messages);
        assert_eq!(
            request.messages[0].content(),
            "You answer questions about orders."
        );
    }
    // The budget was used, not sidestepped: the history grew close to it.
    assert!(
        largest > BUDGET * 3 / 4,
        "largest request: {largest} tokens"
    );

    // Summaries were made, each of whole turns, and each folded the previous one in.
    let transcripts = transcripts.lock().unwrap();
    assert!(transcripts.len() >= 10, "{} summaries", transcripts.len());
    for (n, transcript) in transcripts.iter().enumerate().skip(1) {
        assert!(
            transcript.contains(&format!("Summary {n}:")),
            "{transcript}"
        );
    }
    for transcript in transcripts.iter() {
        let calls = transcript.matches("assistant called `lookup`").count();
        let results = transcript.matches("tool `lookup` answered").count();
        assert_eq!(calls, results, "{transcript}");
    }

    // The last request: the instruction, the latest summary, then recent turns whole.
    let last = &requests.last().unwrap().messages;
    assert!(
        last[1].content().starts_with(SUMMARY_PREFIX),
        "{:?}",
        last[1]
    );
    assert!(
        last[1]
            .content()
            .contains(&format!("Summary {}:", transcripts.len()))
    );
    assert_eq!(
        last[last.len() - 3].content(),
        format!("Where is order {}?", TURNS - 1)
    );
}

#[tokio::test]
async fn a_summary_over_its_budget_is_cut_and_a_failed_summary_fails_the_run() {
    let input: Vec<Message> = (0..40)
        .map(|i| Message::user(format!("message {i}: {}", "words ".repeat(10))))
        .collect();
    let model = ScriptedModel::new([Turn::text("ok")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let wordy = ScriptedModel::new([Turn::text("summary ".repeat(100))]);
    let summarizer = Summarizer::new(wordy.clone(), 400).summary_tokens(50);

    agent
        .run(AgentRequest::new(input.clone()).with_handler(summarizer))
        .await
        .unwrap();

    let summary = model.requests()[0].messages[0].content().to_owned();
    let text = summary.strip_prefix(SUMMARY_PREFIX).unwrap().trim();
    assert!(CharEstimate.count(text) <= 50, "{summary}");
    assert_eq!(wordy.requests()[0].options.max_tokens, Some(50));
    assert!(CharEstimate.count_messages(&model.requests()[0].messages) <= 400);

    let failing = ScriptedModel::new([Turn::error("summary model down")]);
    let agent = Agent::builder(ScriptedModel::new([Turn::text("never")]))
        .build()
        .unwrap();
    let request = AgentRequest::new(input).with_handler(Summarizer::new(failing, 400));
    let error = agent.run(request).await.unwrap_err();
    let failed = error.as_handler().unwrap();
    assert_eq!(failed.handler(), "summarizer");
    assert!(error.to_string().contains("summary model down"), "{error}");
}
