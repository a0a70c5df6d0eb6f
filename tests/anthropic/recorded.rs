//! The published streams of Anthropic's API reference (and replies made in their
//! grammar), replayed byte for byte; what we send back, read from the request bodies.

use serde_json::{Value, json};
use tower::ServiceExt;
use tower_adk::content::{Content, Part, Reasoning, Source};
use tower_adk::handlers::Fallback;
use tower_adk::model::{ModelRequest, UsageMeter};
use tower_adk::providers::anthropic::{AnthropicError, CacheBreakpoints, PromptCache};
use tower_adk::providers::openai::OpenAiModel;
use tower_adk::{Agent, AgentEvent, AgentRequest, Message};

use crate::replay::{Replay, Reply, recorded};
use crate::{
    MODEL, anthropic_error, blocks, builder, calculator, database, run, streamed_reasoning,
    thinking_blocks, weather,
};

/// The signature of the published thinking stream, as printed (cut short with `...`).
const PUBLISHED_SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...";

/// The three thinking blocks of `interleaved_1.sse` .. `interleaved_3.sse`.
fn interleaved_thinking(turn: usize) -> Value {
    let (text, signature) = [
        (
            "The user wants the revenue for 150 units at $50 each, then a comparison with the database. Calculator first.",
            "EuYBCkQYAiJAk3Nw1Ls4yYbmZ0eHzVx+interleaved/one==",
        ),
        (
            "7500 in revenue. Now the average monthly revenue from the database.",
            "EuYBCkQYAiJAvQ2p8Rk0Tq+interleaved/two==",
        ),
        (
            "7500 against an average of 5200: 44% above.",
            "EuYBCkQYAiJAm5YtU8+interleaved/three==",
        ),
    ][turn - 1];
    json!({"type": "thinking", "thinking": text, "signature": signature})
}

#[tokio::test]
async fn the_published_thinking_stream_keeps_its_signature_byte_for_byte() {
    let server = Replay::start([Reply::stream("thinking.sse")]);
    let agent = Agent::builder(builder(&server.base_url()).build().unwrap())
        .build()
        .unwrap();

    let (events, result) = run(
        &agent,
        AgentRequest::user("What is the GCD of 1071 and 462?"),
    )
    .await;
    let result = result.unwrap();

    let thinking = "I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n1071 = 2 × 462 + 147\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0\nThe remainder is 0, so GCD(1071, 462) = 21.";
    assert_eq!(streamed_reasoning(&events), thinking, "streamed as it came");
    let reply = result.final_message;
    assert_eq!(
        reply.content(),
        "The greatest common divisor of 1071 and 462 is **21**."
    );
    let reasoning: Vec<_> = reply.full_content().reasoning().cloned().collect();
    assert_eq!(
        reasoning,
        [Reasoning::new("anthropic", thinking).with_data("signature", PUBLISHED_SIGNATURE)]
    );
}

#[tokio::test]
async fn the_published_tool_use_stream_runs_its_call_and_usage_is_summed_per_run() {
    let server = Replay::start([Reply::stream("tool_use.sse"), Reply::stream("basic.sse")]);
    let agent = Agent::builder(builder(&server.base_url()).build().unwrap())
        .tool(weather())
        .build()
        .unwrap();
    let meter = UsageMeter::new();
    let request = AgentRequest::user("What is the weather like in San Francisco?")
        .with_extension(meter.clone());

    let (events, result) = run(&agent, request).await;
    let result = result.unwrap();

    // The arguments streamed as `input_json_delta` pieces, assembled.
    let record = &result.tool_records[0];
    assert_eq!(record.name, "get_weather");
    assert_eq!(record.content, "15C and foggy in San Francisco, CA");
    assert_eq!(result.final_message.content(), "Hello!");
    // Turn 1's text came before its tool ran.
    let filler = events
        .iter()
        .position(|e| matches!(e, AgentEvent::TextDelta(_)));
    let tool = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolCallStarted { .. }));
    assert!(filler < tool, "{events:?}");
    // Usage: 472 + 25 in, 89 + 15 out, under the configured model name, in the run's
    // totals, its events and the meter alike.
    let total = result.usage.total;
    assert_eq!((total.prompt_tokens, total.completion_tokens), (497, 104));
    assert_eq!(total.total_tokens, 601);
    assert_eq!(result.usage.calls, 2);
    assert_eq!(result.usage.by_model[MODEL], total);
    assert_eq!(meter.total(), total);
    let reported = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Usage { model: Some(m), .. } if m == MODEL))
        .count();
    assert_eq!(reported, 2);
    // The history went back with the call and its result.
    let second = &server.bodies()[1];
    assert_eq!(
        blocks(second, 1)[1],
        json!({"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather", "input": {"location": "San Francisco, CA"}})
    );
    assert_eq!(
        blocks(second, 2)[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "content": "15C and foggy in San Francisco, CA"})
    );
}

#[tokio::test]
async fn redacted_thinking_is_kept_and_sent_back_unchanged() {
    let server = Replay::start([
        Reply::stream("redacted_thinking.sse"),
        Reply::stream("basic.sse"),
    ]);
    let agent = Agent::builder(builder(&server.base_url()).build().unwrap())
        .build()
        .unwrap();
    let first = agent
        .run(AgentRequest::user("ANTHROPIC_MAGIC_STRING"))
        .await
        .unwrap();

    let mut history = first.messages.into_vec();
    history.push(Message::user("Go on."));
    let second = agent.run(AgentRequest::new(history)).await.unwrap();
    assert_eq!(second.final_message.content(), "Hello!");

    let sent = &server.bodies()[1];
    assert_eq!(
        blocks(sent, 1),
        [
            json!({"type": "thinking", "thinking": "Let me analyze this step by step...", "signature": "WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL...."}),
            json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB9URj2pLmN3kF8/dW5hR7xJ0aP1oLs9yTcMnKVf2wRpEGjH9XZaBt4UvDcPrQ..."}),
            json!({"type": "text", "text": "Based on my analysis..."}),
        ]
    );
}

#[tokio::test]
async fn a_three_turn_tool_loop_sends_every_thinking_block_back_byte_for_byte() {
    let server = Replay::start([
        Reply::stream("interleaved_1.sse"),
        Reply::stream("interleaved_2.sse"),
        Reply::stream("interleaved_3.sse"),
    ]);
    let model = builder(&server.base_url())
        .max_tokens(16_000)
        .thinking_budget(Some(10_000))
        .interleaved_thinking(true)
        .build()
        .unwrap();
    let agent = Agent::builder(model)
        .tool(calculator())
        .tool(database())
        .build()
        .unwrap();

    let (_, result) = run(
        &agent,
        AgentRequest::user("What's the total revenue if we sold 150 units of product A at $50 each, and how does this compare to our average monthly revenue from the database?"),
    )
    .await;
    let result = result.unwrap();
    assert!(result.final_message.content().contains("$7,500"));
    assert_eq!(result.tool_records[0].content, "7500");

    let requests = server.requests();
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 3);
    // Turn 1's thinking in turn 2's and turn 3's requests, then turn 2's, in order.
    assert_eq!(thinking_blocks(&bodies[1]), [interleaved_thinking(1)]);
    assert_eq!(
        thinking_blocks(&bodies[2]),
        [interleaved_thinking(1), interleaved_thinking(2)]
    );
    // Byte for byte: the signature's bytes are in the body as they came in the stream.
    for (at, turn) in [(1, 1), (2, 1), (2, 2)] {
        let signature = interleaved_thinking(turn)["signature"].to_string();
        assert!(requests[at].text().contains(&signature), "{turn} in {at}");
    }
    // Each assistant turn starts with its thinking, then its call.
    assert_eq!(blocks(&bodies[2], 1)[1]["type"], "tool_use");
    assert_eq!(blocks(&bodies[2], 3)[0], interleaved_thinking(2));
    assert_eq!(
        bodies[0]["thinking"],
        json!({"type": "enabled", "budget_tokens": 10000})
    );
    assert_eq!(
        requests[0].header("anthropic-beta"),
        Some("interleaved-thinking-2025-05-14")
    );
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(requests[0].path, "/v1/messages");
}

#[tokio::test]
async fn thinking_between_the_calls_of_one_reply_goes_back_in_its_place() {
    let server = Replay::start([
        Reply::stream("interleaved_within.sse"),
        Reply::stream("basic.sse"),
    ]);
    let agent = Agent::builder(builder(&server.base_url()).build().unwrap())
        .tool(calculator())
        .tool(database())
        .build()
        .unwrap();

    agent
        .run(AgentRequest::user("Both, please."))
        .await
        .unwrap();

    let order: Vec<Value> = blocks(&server.bodies()[1], 1)
        .iter()
        .map(|b| {
            json!([
                b["type"],
                b.get("signature").or(b.get("id")).or(b.get("data"))
            ])
        })
        .collect();
    assert_eq!(
        order,
        [
            json!(["thinking", "EuYBCkQYAiJA+within/first=="]),
            json!(["tool_use", "toolu_01Calc"]),
            json!(["thinking", "EuYBCkQYAiJA+within/second=="]),
            json!(["tool_use", "toolu_02Db"]),
            json!(["redacted_thinking", "EmwKAhgBEgy3va3pzix/within/redacted=="]),
        ]
    );
}

#[tokio::test]
async fn an_overloaded_error_event_fails_the_run_with_a_retryable_error() {
    let server = Replay::start([Reply::stream("overloaded.sse")]);
    let agent = Agent::builder(builder(&server.base_url()).build().unwrap())
        .build()
        .unwrap();

    let (_, result) = run(&agent, AgentRequest::user("Hello")).await;

    let error = result.unwrap_err();
    let error = anthropic_error(&error);
    assert!(error.is_overloaded() && error.is_retryable(), "{error:?}");
    assert_eq!(error.to_string(), "Anthropic is overloaded: Overloaded");
}

#[tokio::test]
async fn a_529_answer_is_overloaded_and_a_429_is_rate_limited_with_its_wait() {
    let server = Replay::start([
        Reply::json(529, recorded("overloaded_529.json")).header("retry-after", "3"),
        Reply::json(429, recorded("rate_limit_429.json")).header("retry-after", "7"),
    ]);
    let model = builder(&server.base_url()).build().unwrap();
    let request = || ModelRequest::new(vec![Message::user("Hello")].into());

    let overloaded = model.clone().oneshot(request()).await.unwrap_err();
    assert!(matches!(
        &overloaded,
        AnthropicError::Overloaded { message, retry_after: Some(wait) }
            if message == "Overloaded" && wait.as_secs() == 3
    ));
    assert!(overloaded.is_retryable());
    assert_eq!(overloaded.status().map(|s| s.as_u16()), Some(529));

    let limited = model.oneshot(request()).await.unwrap_err();
    assert!(
        limited.is_rate_limited() && limited.is_retryable(),
        "{limited:?}"
    );
    assert_eq!(limited.retry_after().map(|w| w.as_secs()), Some(7));
}

#[tokio::test]
async fn an_image_and_a_pdf_reach_the_model_as_image_and_document_blocks() {
    let server = Replay::start([Reply::stream("basic.sse")]);
    let agent = Agent::builder(builder(&server.base_url()).build().unwrap())
        .build()
        .unwrap();
    let question = Content::from(vec![
        Part::text("What do these show?"),
        Part::image(Source::base64("image/png", "iVBORw0KGgo=")),
        Part::file(
            Source::base64("application/pdf", "JVBERi0xLjQK"),
            Some("report.pdf".into()),
        ),
        Part::image(Source::url("https://upload.example.com/chart.jpg")),
    ]);

    agent.run(AgentRequest::user(question)).await.unwrap();

    assert_eq!(
        blocks(&server.bodies()[0], 0),
        [
            json!({"type": "text", "text": "What do these show?"}),
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}),
            json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQK"}, "title": "report.pdf"}),
            json!({"type": "image", "source": {"type": "url", "url": "https://upload.example.com/chart.jpg"}}),
        ]
    );
}

#[tokio::test]
async fn a_prompt_cache_handler_puts_cache_control_in_the_body_and_usage_counts_the_cache() {
    let server = Replay::start([
        Reply::stream("interleaved_1.sse"),
        Reply::stream("interleaved_2.sse"),
        Reply::stream("interleaved_3.sse"),
    ]);
    let agent = Agent::builder(builder(&server.base_url()).build().unwrap())
        .instruction("You are a revenue analyst.")
        .tool(calculator())
        .tool(database())
        .build()
        .unwrap();
    let request = AgentRequest::user("Revenue?").with_handler(PromptCache::new(
        CacheBreakpoints::new().system().tools().last_message(),
    ));

    let (_, result) = run(&agent, request).await;
    let result = result.unwrap();

    let bodies = server.bodies();
    let ephemeral = json!({"type": "ephemeral"});
    for body in &bodies {
        let system = body["system"].as_array().unwrap();
        assert_eq!(system.last().unwrap()["cache_control"], ephemeral);
        let tools = body["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"], ephemeral);
        assert!(tools[0].get("cache_control").is_none());
        let last = body["messages"].as_array().unwrap().len() - 1;
        assert_eq!(
            blocks(body, last).last().unwrap()["cache_control"],
            ephemeral
        );
    }
    // The previous last message is no longer marked: one breakpoint moves along.
    assert!(blocks(&bodies[2], 0)[0].get("cache_control").is_none());
    // Written in turn 1, read in turns 2 and 3: in the prompt tokens, and apart.
    let total = result.usage.total;
    assert_eq!(total.cache_write_tokens, 1024);
    assert_eq!(total.cache_read_tokens, 1650 + 1790);
    assert_eq!(total.prompt_tokens, 612 + 1024 + 40 + 1650 + 35 + 1790);
}

#[tokio::test]
async fn a_fallback_to_openai_after_an_overloaded_answer_sends_no_anthropic_reasoning() {
    let anthropic = Replay::start([
        Reply::stream("interleaved_1.sse"),
        Reply::json(529, recorded("overloaded_529.json")),
    ]);
    let completion = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "7,500 dollars."}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}
    });
    let openai = Replay::start([Reply::json(200, completion.to_string())]);
    let primary = builder(&anthropic.base_url()).build().unwrap();
    let secondary = OpenAiModel::builder()
        .base_url(format!("{}/v1", openai.base_url()))
        .model("gpt-4o-mini")
        .stream(false)
        .build()
        .unwrap();
    let model = Fallback::new(primary).or(secondary);
    let agent = Agent::builder(model).tool(calculator()).build().unwrap();

    let (_, result) = run(&agent, AgentRequest::user("150 units at $50?")).await;
    let result = result.unwrap();
    assert_eq!(result.final_message.content(), "7,500 dollars.");

    let sent = &openai.requests()[0];
    let text = sent.text();
    for anthropic_data in [
        "interleaved/one",
        "EuYBCkQYAiJA",
        "Calculator first",
        "thinking",
    ] {
        assert!(
            !text.contains(anthropic_data),
            "{anthropic_data} sent to OpenAI: {text}"
        );
    }
    // The call and its result did go, in OpenAI's shape.
    let body = sent.json();
    assert_eq!(body["messages"][1]["tool_calls"][0]["id"], "toolu_01Calc");
    assert_eq!(body["messages"][2]["content"], "7500");
    // Both providers' usage is the run's, each under its model.
    assert_eq!(result.usage.calls, 2);
    assert!(result.usage.by_model.contains_key(MODEL));
    assert!(result.usage.by_model.contains_key("gpt-4o-mini"));
}

#[tokio::test]
async fn the_cumulative_counts_of_message_delta_replace_the_starts() {
    let server = Replay::start([Reply::stream("cumulative_usage.sse")]);
    let agent = Agent::builder(builder(&server.base_url()).build().unwrap())
        .build()
        .unwrap();

    let result = agent
        .run(AgentRequest::user("Weather in NYC?"))
        .await
        .unwrap();

    assert_eq!(
        result.final_message.content(),
        "I'll check the current weather in New York City for you."
    );
    // Anthropic's guide: the counts of `message_delta` are cumulative. Its published
    // stream starts at 2,679 input tokens and ends at 10,682: the call used 10,682.
    let usage = result.usage.total;
    assert_eq!(
        (usage.prompt_tokens, usage.completion_tokens),
        (10_682, 510)
    );
}
