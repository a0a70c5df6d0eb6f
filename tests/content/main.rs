//! Content parts, reasoning and usage in the core: a reasoning part of one turn is in the
//! next turn's request byte for byte (streamed or whole, across a checkpoint read back
//! from its bytes), its text streams as its own event, images reach the model, old
//! text-only records still resume, and every call's usage adds up into the run's result,
//! its events and its thread's record, costed by a price table.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use serde_json::json;
use tower::{BoxError, service_fn};
use tower_adk::agent::Checkpoint;
use tower_adk::checkpoint::{CheckpointStore, MemoryStore};
use tower_adk::content::{Content, Part, Reasoning, Source};
use tower_adk::interrupt::{Decision, Interrupt};
use tower_adk::model::{ModelResponse, Price, Prices, Usage};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{
    Agent, AgentEvent, AgentRequest, Message, ModelRequest, RunStatus, Tool, ToolInfo, ToolOutput,
    ToolRequest,
};

/// A thinking block as Anthropic sends it: readable text and an opaque signature, whose
/// bytes (padding, slashes, a unicode escape's worth of text) must come back unchanged.
fn thinking(text: &str) -> Reasoning {
    Reasoning::new("anthropic", text).with_data("signature", "EqQBCkYIARgCIkB+/x==\u{00e9}")
}

/// The reasoning parts of the assistant messages of a request.
fn reasoning_in(request: &ModelRequest) -> Vec<Reasoning> {
    request
        .messages
        .iter()
        .filter(|m| m.is_assistant())
        .flat_map(|m| m.full_content().reasoning().cloned().collect::<Vec<_>>())
        .collect()
}

fn three_turns(streamed: bool) -> ScriptedModel {
    let turn = |t: Turn| if streamed { t.streamed() } else { t };
    ScriptedModel::new([
        turn(
            Turn::call("c1", "look", json!({})).with_part(Part::Reasoning(thinking("First look."))),
        ),
        turn(Turn::call("c2", "look", json!({})).with_part(Part::Reasoning(thinking("Again.")))),
        turn(Turn::text("Done.")),
    ])
}

#[tokio::test]
async fn reasoning_of_each_turn_is_in_the_next_requests_byte_for_byte_streamed_or_whole() {
    for streamed in [true, false] {
        let model = three_turns(streamed);
        let agent = Agent::builder(model.clone())
            .tool(text_tool("look", "seen"))
            .build()
            .unwrap();

        let result = agent.run(AgentRequest::user("go")).await.unwrap();

        assert_eq!(result.final_message.content(), "Done.");
        let requests = model.requests();
        assert_eq!(requests.len(), 3);
        assert!(reasoning_in(&requests[0]).is_empty());
        assert_eq!(
            reasoning_in(&requests[1]),
            [thinking("First look.")],
            "streamed: {streamed}"
        );
        assert_eq!(
            reasoning_in(&requests[2]),
            [thinking("First look."), thinking("Again.")],
            "streamed: {streamed}"
        );
        let sent = serde_json::to_string(&requests[2].messages[1]).unwrap();
        assert!(sent.contains(r#""data":"EqQBCkYIARgCIkB+/x==é""#), "{sent}");
    }
}

#[tokio::test]
async fn reasoning_text_streams_as_its_own_event_apart_from_the_answer() {
    let model = ScriptedModel::new([Turn::stream(["The answer ", "is 4."])
        .with_part(Part::Reasoning(thinking("2 and 2 make 4.")))]);
    let agent = Agent::builder(model).build().unwrap();

    let events: Vec<_> = agent.run(AgentRequest::user("2+2?")).collect().await;

    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e.as_ref().unwrap() {
            AgentEvent::ReasoningDelta(_) => "reasoning",
            AgentEvent::TextDelta(_) => "text",
            AgentEvent::Message(_) => "message",
            AgentEvent::Completed(_) => "completed",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["reasoning", "text", "text", "message", "completed"]);
    let Ok(AgentEvent::ReasoningDelta(text)) = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(text, "2 and 2 make 4.");
    let Ok(AgentEvent::Message(message)) = &events[3] else {
        panic!("{events:?}")
    };
    assert_eq!(
        message.content(),
        "The answer is 4.",
        "the answer's text has no reasoning"
    );
    assert_eq!(message.full_content().reasoning().count(), 1);
}

/// A tool that asks before it runs.
fn asking(name: &str) -> Tool {
    Tool::from_fn(
        ToolInfo::new(name, "Asks first"),
        |request: ToolRequest| async move {
            if request.decision().is_none() {
                return Err(Interrupt::new(json!({"question": "Go on?"})).into());
            }
            Ok::<_, BoxError>(ToolOutput::new("went on"))
        },
    )
}

#[tokio::test]
async fn reasoning_survives_a_checkpoint_read_back_from_its_bytes_by_another_agent() {
    let store = MemoryStore::new();
    let script = || {
        ScriptedModel::per_run([
            Turn::call("c1", "pay", json!({})).with_part(Part::Reasoning(thinking("Pay it."))),
            Turn::text("Paid."),
        ])
    };
    let first = Agent::builder(script())
        .checkpoints(store.clone())
        .tool(asking("pay"))
        .build()
        .unwrap();
    let stopped = first
        .run(AgentRequest::user("pay the bill").on_thread("bills"))
        .await
        .unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);

    // The record as another host reads it: bytes, decoded.
    let head = store.head("bills").await.unwrap().unwrap();
    let record = Checkpoint::decode(&head.bytes).unwrap();
    let kept: Vec<Reasoning> = (record.run.history().messages.iter())
        .flat_map(|m| m.full_content().reasoning().cloned().collect::<Vec<_>>())
        .collect();
    assert_eq!(kept, [thinking("Pay it.")]);

    let model = script();
    let second = Agent::builder(model.clone())
        .checkpoints(store.clone())
        .tool(asking("pay"))
        .build()
        .unwrap();
    let id = stopped.interrupts[0].id.clone();
    let checkpoint = stopped.checkpoint.unwrap();
    let done = second
        .run(AgentRequest::resume(checkpoint, [(id, Decision::Approve)]))
        .await
        .unwrap();

    assert_eq!(done.final_message.content(), "Paid.");
    let requests = model.requests();
    assert_eq!(
        reasoning_in(requests.last().unwrap()),
        [thinking("Pay it.")]
    );
}

#[tokio::test]
async fn an_image_of_the_user_reaches_the_model_and_a_text_only_record_of_format_1_resumes() {
    let model = ScriptedModel::new([Turn::text("A cat.")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let mut content = Content::from("What is this?");
    content.push(Part::image(Source::base64("image/png", "iVBORw0KGgo=")));

    agent
        .run(AgentRequest::user(content.clone()))
        .await
        .unwrap();

    let sent = model.requests()[0]
        .messages
        .last()
        .unwrap()
        .full_content()
        .into_owned();
    assert_eq!(sent, content);

    // A record written before parts: every content a string.
    let old = json!({"role": "user", "content": "hello"});
    let message: Message = serde_json::from_value(old).unwrap();
    assert!(message.full_content().is_text());
    assert_eq!(message.content(), "hello");
}

/// A model that reports this usage with every whole reply, under its name.
fn metered(name: &'static str, usage: Usage, replies: Vec<Message>) -> ScriptedReplies {
    ScriptedReplies {
        name,
        usage,
        replies: std::sync::Arc::new(std::sync::Mutex::new(replies.into())),
    }
}

#[derive(Clone)]
struct ScriptedReplies {
    name: &'static str,
    usage: Usage,
    replies: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<Message>>>,
}

impl ScriptedReplies {
    fn service(
        self,
    ) -> impl tower::Service<
        ModelRequest,
        Response = ModelResponse,
        Error = BoxError,
        Future = impl Send + 'static,
    > + Clone
    + Send
    + 'static {
        service_fn(move |_: ModelRequest| {
            let reply = self.replies.lock().unwrap().pop_front();
            let (name, usage) = (self.name, self.usage);
            async move {
                let reply = reply.ok_or("no replies left")?;
                Ok::<_, BoxError>(
                    ModelResponse::message(reply).with_usage(Some(name.into()), usage),
                )
            }
        })
    }
}

#[tokio::test]
async fn usage_adds_up_per_run_in_events_result_and_thread_and_is_costed() {
    let store = MemoryStore::new();
    let replies = vec![
        Message::assistant_with_calls("", vec![tower_adk::ToolCall::new("c1", "look", json!({}))]),
        Message::assistant("Seen."),
        Message::assistant("Again."),
    ];
    let call = Usage::new(1_000, 100, 1_100)
        .with_cache(400, 0)
        .with_reasoning(30);
    let model = metered("small", call, replies);
    let prices = Prices::new().with("small", Price::per_million(2.0, 8.0).with_cache(0.5, 2.5));
    let agent = Agent::builder(model.service())
        .checkpoints(store.clone())
        .tool(text_tool("look", "seen"))
        .prices(prices.clone())
        .build()
        .unwrap();

    let events: Vec<_> = agent
        .run(AgentRequest::user("look").on_thread("t"))
        .collect()
        .await;
    let usages: Vec<Usage> = events
        .iter()
        .filter_map(|e| match e.as_ref().unwrap() {
            AgentEvent::Usage { model, usage } => {
                assert_eq!(model.as_deref(), Some("small"));
                Some(*usage)
            }
            _ => None,
        })
        .collect();
    assert_eq!(usages, [call, call]);
    let Some(Ok(AgentEvent::Completed(result))) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(result.usage.calls, 2);
    assert_eq!(result.usage.total, call + call);
    assert_eq!(result.usage.by_model["small"], call + call);
    // Per run: 2 x (600 fresh x $2 + 400 cached x $0.5 + 100 out x $8) / 1M.
    let expected = 2.0 * (600.0 * 2.0 + 400.0 * 0.5 + 100.0 * 8.0) / 1e6;
    let cost = result.cost.clone().unwrap();
    assert!((cost.usd - expected).abs() < 1e-12, "{cost:?}");
    assert!(cost.unpriced.is_empty());

    // A second run on the thread: the thread's record adds both runs up.
    let second = agent
        .run(AgentRequest::user("again").on_thread("t"))
        .await
        .unwrap();
    assert_eq!(second.usage.calls, 1);
    let (_, record) = agent.last_checkpoint("t").await.unwrap().unwrap();
    let thread = record.thread_usage();
    assert_eq!(thread.calls, 3);
    assert_eq!(thread.total, call + call + call);
    assert!((thread.cost(&prices).usd - expected * 1.5).abs() < 1e-12);
}

#[tokio::test]
async fn a_model_that_reports_no_usage_adds_nothing_and_has_no_cost_without_prices() {
    let agent = Agent::builder(ScriptedModel::new([Turn::text("Hi.")]))
        .build()
        .unwrap();
    let result = agent.run(AgentRequest::user("hello")).await.unwrap();
    assert_eq!(result.usage.calls, 0);
    assert!(result.usage.total.is_empty());
    assert!(result.cost.is_none());
}
