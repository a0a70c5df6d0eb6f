//! What Gemini's replies become: an image the model made, thought summaries streamed as
//! reasoning and never sent back as text, a signature on a part of empty text kept in its
//! place, usage with thinking and cached tokens, and the API's errors as typed errors.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use tower_adk::content::{Part, Source};
use tower_adk::model::{ModelDelta, Usage};
use tower_adk::providers::gemini::{GeminiError, Thinking};
use tower_adk::{Agent, AgentEvent, AgentRequest, Message, ModelRequest};

use super::replay::{Replay, Reply};
use super::{model, recorded_signature, sdk, signatures};

#[tokio::test]
async fn an_image_the_model_made_is_an_image_part_of_its_message() {
    let server = Replay::start([Reply::stream("image-answer.sse")]).await;
    let gemini = model(server.url())
        .model("gemini-2.0-flash-preview-image-generation")
        .generation_config("responseModalities", json!(["IMAGE", "TEXT"]))
        .build()
        .unwrap();
    let agent = Agent::builder(gemini).build().unwrap();
    let result = agent
        .run(AgentRequest::user(
            "Generate an image of the Eiffel tower with fireworks in  the background.",
        ))
        .await
        .unwrap();
    let parts = result.final_message.parts();
    let text = "I will generate an image of the Eiffel Tower at night, with a vibrant and colorful fireworks display exploding behind it, illuminating the sky.\n\n";
    assert_eq!(parts[0], Part::text(text));
    let Part::Image(Source::Base64 { media_type, data }) = &parts[1] else {
        panic!("{:?}", &parts[1]);
    };
    assert_eq!(media_type, "image/png");
    assert_eq!(data.len(), 1_320_056);
    assert!(data.starts_with("iVBORw0KGgo"));
    // The usage of the last chunk, image tokens included.
    assert_eq!(result.usage.total, Usage::new(15, 1318, 1333));

    let request = server.requests().remove(0).body;
    assert_eq!(
        request["generationConfig"],
        json!({"responseModalities": ["IMAGE", "TEXT"]})
    );
    sdk::validate(&[request]);
}

#[tokio::test]
async fn thought_summaries_stream_as_reasoning_and_the_trailing_signature_stays_in_place() {
    let server = Replay::start([
        Reply::stream("thought-stream.sse"),
        Reply::stream("tool-loop-3.sse"),
    ])
    .await;
    let gemini = model(server.url())
        .thinking(Thinking::budget(1024).include_thoughts(true))
        .build()
        .unwrap();
    let agent = Agent::builder(gemini).build().unwrap();
    let events: Vec<AgentEvent> = agent
        .run(AgentRequest::user(
            "What is the sum of natural numbers from 1 to 100?",
        ))
        .map(Result::unwrap)
        .collect()
        .await;
    let reasoning: String = (events.iter())
        .filter_map(|e| match e {
            AgentEvent::ReasoningDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        reasoning.starts_with("**Breaking Down the Sum of Natural Numbers**"),
        "{reasoning}"
    );
    let answer: String = (events.iter())
        .filter_map(|e| match e {
            AgentEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        answer,
        "The sum of the natural numbers from 1 to 100 is 5050."
    );
    let Some(AgentEvent::Completed(result)) = events.last() else {
        panic!("{events:?}")
    };
    // Thinking tokens are completion tokens, billed as output; cached ones part of the prompt.
    assert_eq!(
        result.usage.total,
        Usage::new(17, 14 + 19, 50)
            .with_cache(8, 0)
            .with_reasoning(19)
    );

    // The next request: the summary is not sent back; the signature that came on a part
    // of empty text after the answer goes back on such a part, after the answer.
    let mut history = result.messages.to_vec();
    history.push(Message::user("Thanks!"));
    agent.run(AgentRequest::new(history)).await.unwrap();
    let body = server.requests().remove(1).body;
    let signature = recorded_signature("tool-loop-3.sse", 0);
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [
            {"text": "The sum of the natural numbers from 1 to 100 is 5050."},
            {"text": "", "thoughtSignature": signature}
        ]})
    );
    assert!(
        !body.to_string().contains("Breaking Down"),
        "no summary goes back"
    );
    assert_eq!(
        body["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget": 1024, "includeThoughts": true})
    );
    sdk::validate(&[body]);
}

#[tokio::test]
async fn a_whole_reply_with_a_thought_summary_is_read_like_a_stream() {
    let server = Replay::start([Reply::file("thought-summary.json", 200)]).await;
    let gemini = model(server.url())
        .model("gemini-2.0-flash-thinking-exp")
        .stream(false)
        .thinking(Thinking::level("high").include_thoughts(true))
        .build()
        .unwrap();
    let request = ModelRequest::new(vec![Message::user("What is the sum?")].into());
    let deltas: Vec<ModelDelta> = gemini
        .oneshot(request)
        .await
        .unwrap()
        .into_stream()
        .map(Result::unwrap)
        .collect()
        .await;
    let Some(ModelDelta::Part(Part::Reasoning(thought))) = deltas.first() else {
        panic!("{deltas:?}")
    };
    assert_eq!(thought.provider, "gemini");
    assert!(thought.text.starts_with("**Breaking Down"));
    assert!(matches!(
        deltas.last(),
        Some(ModelDelta::Usage { usage, .. }) if *usage == Usage::new(17, 19, 36).with_reasoning(19)
    ));
    let request = server.requests().remove(0);
    assert_eq!(
        request.path,
        "/v1beta/models/gemini-2.0-flash-thinking-exp:generateContent"
    );
    assert_eq!(
        request.body["generationConfig"]["thinkingConfig"],
        json!({"thinkingLevel": "HIGH", "includeThoughts": true})
    );
    sdk::validate(&[request.body]);
}

async fn error_of(reply: Reply) -> GeminiError {
    let server = Replay::start([reply]).await;
    let gemini = model(server.url()).build().unwrap();
    gemini
        .oneshot(ModelRequest::new(
            vec![Message::user("why is the sky blue?")].into(),
        ))
        .await
        .unwrap_err()
}

#[tokio::test]
async fn the_apis_errors_are_typed_with_their_status_and_wait() {
    let quota = error_of(Reply::file("quota-exceeded.json", 429)).await;
    assert!(quota.is_rate_limited() && quota.is_retryable(), "{quota}");
    assert_eq!(quota.retry_after(), Some(Duration::from_secs(56)));

    let overloaded = error_of(Reply::file("overloaded.json", 503)).await;
    assert!(overloaded.is_retryable());
    assert!(
        matches!(&overloaded, GeminiError::Status { google_status: Some(s), message, .. }
            if s == "UNAVAILABLE" && message == "The model is overloaded. Please try again later."),
        "{overloaded}"
    );

    let missing = error_of(Reply::file("not-found.json", 404)).await;
    assert!(!missing.is_retryable());
    assert!(missing.to_string().contains("NOT_FOUND"), "{missing}");
    assert!(
        missing
            .to_string()
            .contains("is not found for API version v1beta"),
        "{missing}"
    );
}

/// The deltas of a made-up stream, or its error.
async fn stream_of(body: &str) -> Result<Vec<ModelDelta>, GeminiError> {
    let server = Replay::start([Reply::bytes(200, "text/event-stream", body.to_owned())]).await;
    let gemini = model(server.url()).build().unwrap();
    let response = gemini
        .oneshot(ModelRequest::new(vec![Message::user("hi")].into()))
        .await?;
    let mut deltas = Vec::new();
    let mut stream = response.into_stream();
    while let Some(delta) = stream.next().await {
        match delta {
            Ok(delta) => deltas.push(delta),
            Err(error) => return Err(*error.downcast::<GeminiError>().unwrap()),
        }
    }
    Ok(deltas)
}

#[tokio::test]
async fn a_reply_stopped_for_safety_is_a_typed_error_after_its_text() {
    let chunk = |parts: Value, finish: Option<&str>| {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(finish) = finish {
            candidate["finishReason"] = json!(finish);
            candidate["finishMessage"] = json!("blocked");
        }
        format!("data: {}\r\n\r\n", json!({"candidates": [candidate]}))
    };
    let body = chunk(json!([{"text": "Here is"}]), None) + &chunk(json!([]), Some("SAFETY"));
    let error = stream_of(&body).await.unwrap_err();
    assert!(
        matches!(&error, GeminiError::Finished { reason, message: Some(m) } if reason == "SAFETY" && m == "blocked"),
        "{error}"
    );
    assert!(!error.is_retryable());

    // A stream cut before any finish reason may be incomplete.
    let cut = stream_of(&chunk(json!([{"text": "Here is"}]), None))
        .await
        .unwrap_err();
    assert!(matches!(cut, GeminiError::StreamIncomplete), "{cut}");

    // An error chunk in the stream.
    let failed = stream_of("data: {\"error\": {\"code\": 503, \"message\": \"overloaded\", \"status\": \"UNAVAILABLE\"}}\r\n\r\n")
        .await
        .unwrap_err();
    assert!(failed.is_retryable(), "{failed}");
}

#[tokio::test]
async fn signatures_of_parallel_calls_stay_on_their_calls() {
    // Gemini signs the first of parallel calls only.
    let body = format!(
        "data: {}\r\n\r\n",
        json!({"responseId": "r9", "candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
            {"functionCall": {"name": "a", "args": {"x": 1}}, "thoughtSignature": "c2lnLWE="},
            {"functionCall": {"name": "b", "args": {}}}
        ]}}]})
    );
    let deltas = stream_of(&body).await.unwrap();
    let mut reply = tower_adk::MessageAccumulator::default();
    deltas.into_iter().for_each(|d| reply.push(d));
    let message = reply.finish();
    let ids: Vec<&str> = message.tool_calls().iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["gemini-r9-0", "gemini-r9-1"]);

    let server = Replay::start([Reply::stream("tool-loop-3.sse")]).await;
    let history = vec![
        Message::user("go"),
        message,
        Message::tool("gemini-r9-0", "a", "1"),
        Message::tool("gemini-r9-1", "b", "2"),
    ];
    let gemini = model(server.url()).build().unwrap();
    gemini
        .oneshot(ModelRequest::new(history.into()))
        .await
        .unwrap();
    let sent = server.requests().remove(0).body;
    assert_eq!(
        signatures(&sent),
        [("functionCall".into(), "c2lnLWE=".into())]
    );
    assert_eq!(sent["contents"][1]["parts"][0]["functionCall"]["name"], "a");
    sdk::validate(&[sent]);
}
