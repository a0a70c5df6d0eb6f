//! What genai 0.7.2's Gemini adapter carries, on Google's recorded replies
//! (`tests/gemini/recorded`): each test states what the issue needs, and passes when genai
//! does what it is shown doing here. The ones named `loses_*` pin down a loss; the others
//! what it carries.
//!
//!     CARGO_TARGET_DIR=target/peers/genai-gemini/target cargo test --manifest-path benches/peers/genai-gemini/Cargo.toml

use futures::StreamExt;
use genai::chat::{
    Binary, ChatMessage, ChatOptions, ChatRequest, ChatRole, ChatStreamEvent, ContentPart,
    MessageContent, StreamEnd, Tool, ToolResponse,
};
use peer_genai_gemini::{Reply, Server, genai_client};
use serde_json::{Value, json};

const MODEL: &str = "gemini-2.5-flash";

fn options() -> ChatOptions {
    ChatOptions::default()
        .with_capture_content(true)
        .with_capture_tool_calls(true)
        .with_capture_reasoning_content(true)
        .with_capture_usage(true)
}

/// Streams one reply: every event, and the end with what genai captured.
async fn stream(client: &genai::Client, request: ChatRequest) -> (Vec<ChatStreamEvent>, StreamEnd) {
    let mut response = client.exec_chat_stream(MODEL, request, Some(&options())).await.unwrap();
    let mut events = Vec::new();
    while let Some(event) = response.stream.next().await {
        match event.unwrap() {
            ChatStreamEvent::End(end) => return (events, end),
            other => events.push(other),
        }
    }
    panic!("no end event: {events:?}");
}

fn signature(file: &str) -> String {
    let reply = Reply::recorded(file, 200);
    let text = String::from_utf8(reply.body.to_vec()).unwrap();
    let line = text.lines().rev().find_map(|l| l.strip_prefix("data: ")).unwrap();
    let chunk: Value = serde_json::from_str(line).unwrap();
    (chunk["candidates"][0]["content"]["parts"].as_array().unwrap().iter())
        .find_map(|p| p["thoughtSignature"].as_str())
        .unwrap()
        .to_owned()
}

fn divide() -> Tool {
    Tool::new("customDivide").with_description("Custom divide function").with_schema(json!({
        "type": "object",
        "properties": {"numerator": {"type": "number"}, "denominator": {"type": "number"}}
    }))
}

/// What it carries: the signature of each `functionCall` goes back on that call, turn
/// after turn, in a streamed three-turn loop.
#[tokio::test]
async fn carries_function_call_signatures_across_a_three_turn_loop() {
    let server = Server::start([1, 2, 3].map(|t| Reply::recorded(&format!("tool-loop-{t}.sse"), 200))).await;
    let client = genai_client(&server.url);
    let mut request = ChatRequest::new(vec![ChatMessage::user(
        "Divide 10 by 2 using the customDivide function, then divide the result by 2 again, then tell me the result",
    )])
    .with_tools(vec![divide()]);
    for output in [42, 2] {
        let (_, end) = stream(&client, request.clone()).await;
        let content = end.captured_content.unwrap();
        let call = content.tool_calls()[0].clone();
        request = request
            .append_message(ChatMessage::assistant(content))
            .append_message(ToolResponse::new(call.call_id, json!({"output": output}).to_string()).with_fn_name("customDivide"));
    }
    let (_, end) = stream(&client, request).await;
    assert_eq!(end.captured_content.unwrap().first_text(), Some("The result is 2."));

    let bodies = server.bodies();
    let signed = |body: &Value| -> Vec<String> {
        (body["contents"].as_array().unwrap().iter())
            .flat_map(|c| c["parts"].as_array().unwrap().clone())
            .filter(|p| p.get("functionCall").is_some())
            .filter_map(|p| p["thoughtSignature"].as_str().map(str::to_owned))
            .collect()
    };
    let (first, second) = (signature("tool-loop-1.sse"), signature("tool-loop-2.sse"));
    assert_eq!(signed(&bodies[1]), [first.clone()]);
    assert_eq!(signed(&bodies[2]), [first, second]);
}

/// Loss: an image the model makes in a streamed reply. genai's streamer drops
/// `inlineData` ("For now, we do not stream binary content"): no event carries it and the
/// captured message has no image.
#[tokio::test]
async fn loses_an_image_the_model_streams() {
    let server = Server::start([Reply::recorded("image-answer.sse", 200)]).await;
    let client = genai_client(&server.url);
    let (events, end) = stream(&client, ChatRequest::from_user("Generate an image of the Eiffel tower")).await;
    let content = end.captured_content.unwrap();
    assert!(content.first_text().unwrap().starts_with("I will generate an image"));
    let binaries = content.parts().iter().filter(|p| matches!(p, ContentPart::Binary(_))).count();
    assert_eq!(binaries, 0, "the 1.3 MB PNG the stream carried is gone");
    let mentioned = events.iter().any(|e| format!("{e:?}").contains("iVBORw0KGgo"));
    assert!(!mentioned, "no event carried it either");
}

/// Loss: the place of a text part's signature. The stream ends with the signature on a
/// part of empty text after the answer (as Google's SDK tests describe); genai captures
/// signatures apart from the text and, on the next turn, puts the signature on the answer's
/// text part.
#[tokio::test]
async fn loses_the_place_of_a_signature_on_a_part_of_empty_text() {
    let server = Server::start([
        Reply::recorded("thought-stream.sse", 200),
        Reply::recorded("tool-loop-3.sse", 200),
    ])
    .await;
    let client = genai_client(&server.url);
    let request = ChatRequest::from_user("What is the sum of natural numbers from 1 to 100?");
    let (_, end) = stream(&client, request.clone()).await;
    let content = end.captured_content.unwrap();
    let request = request
        .append_message(ChatMessage::assistant(content))
        .append_message(ChatMessage::user("Thanks!"));
    stream(&client, request).await;
    let sent = &server.bodies()[1]["contents"][1];
    let received = json!({"role": "model", "parts": [
        {"text": "The sum of the natural numbers from 1 to 100 is 5050."},
        {"text": "", "thoughtSignature": signature("thought-stream.sse")}
    ]});
    assert_ne!(*sent, received, "the parts as the API sent them");
    assert_eq!(
        *sent,
        json!({"role": "model", "parts": [
            {"text": "The sum of the natural numbers from 1 to 100 is 5050.", "thoughtSignature": signature("thought-stream.sse")}
        ]}),
        "the signature moved onto the answer's text"
    );
}

/// Loss: a tool result with an image. genai's tool responses are strings, and a tool
/// message holding an image is refused before anything is sent.
#[tokio::test]
async fn loses_a_tool_results_image() {
    let server = Server::start([Reply::recorded("tool-loop-3.sse", 200)]).await;
    let client = genai_client(&server.url);
    let image = Binary::from_base64("image/png", "iVBORw0KGgo=", None);
    let result = ChatMessage::new(
        ChatRole::Tool,
        MessageContent::from_parts(vec![
            ContentPart::ToolResponse(ToolResponse::new("call#chart#0", "the chart").with_fn_name("chart")),
            ContentPart::Binary(image),
        ]),
    );
    let request = ChatRequest::new(vec![ChatMessage::user("Chart it."), result]);
    let error = client.exec_chat_stream(MODEL, request, Some(&options())).await.err().unwrap();
    assert!(error.to_string().contains("ChatRole::Tool can only contain"), "{error}");
    assert!(server.bodies().is_empty(), "nothing was sent");
}

/// Loss: an image in the model's own turn (an image model's answer, to edit in the next
/// turn) is not sent back: genai replays a model turn's text and calls only.
#[tokio::test]
async fn loses_the_models_image_in_the_next_request() {
    let server = Server::start([Reply::recorded("tool-loop-3.sse", 200)]).await;
    let client = genai_client(&server.url);
    let image = Binary::from_base64("image/png", "iVBORw0KGgo=", None);
    let answer = MessageContent::from_parts(vec![ContentPart::Text("Here it is.".into()), ContentPart::Binary(image)]);
    let request = ChatRequest::new(vec![
        ChatMessage::user("Draw a cat."),
        ChatMessage::assistant(answer),
        ChatMessage::user("Make it blue."),
    ]);
    stream(&client, request).await;
    let sent = &server.bodies()[0]["contents"][1];
    assert_eq!(*sent, json!({"role": "model", "parts": [{"text": "Here it is."}]}));
}

/// Not typed: a 429 in a stream, and its wait. Gemini gives the wait in the body
/// (`RetryInfo.retryDelay`), not in a header. A streamed call's 429 comes as
/// `Error::WebStream`, whose `status()` and `headers()` are `None`: the status, headers
/// and body are in a boxed inner error, the 56 s only in the body's text.
#[tokio::test]
async fn does_not_type_a_streamed_429_or_read_its_wait() {
    let server = Server::start([Reply::recorded("quota-exceeded.json", 429)]).await;
    let client = genai_client(&server.url);
    let mut response = client
        .exec_chat_stream(MODEL, ChatRequest::from_user("hi"), Some(&options()))
        .await
        .unwrap();
    let mut error = None;
    while let Some(item) = response.stream.next().await {
        if let Err(e) = item {
            error = Some(e);
            break;
        }
    }
    let error = error.expect("a 429 fails the stream");
    assert!(matches!(error, genai::Error::WebStream { .. }), "{error:?}");
    assert_eq!(error.status(), None);
    assert!(error.headers().is_none());
    assert!(error.to_string().contains("\"retryDelay\": \"56s\""), "{error}");
}

/// What it carries: usage with thinking and cached tokens (thinking added into the
/// completion, as we do).
#[tokio::test]
async fn carries_usage_with_thoughts_and_cached_tokens() {
    let server = Server::start([Reply::recorded("thought-stream.sse", 200)]).await;
    let client = genai_client(&server.url);
    let (events, end) = stream(&client, ChatRequest::from_user("sum?")).await;
    let usage = end.captured_usage.unwrap();
    assert_eq!(usage.completion_tokens, Some(14 + 19));
    assert_eq!(usage.completion_tokens_details.unwrap().reasoning_tokens, Some(19));
    assert_eq!(usage.prompt_tokens_details.unwrap().cached_tokens, Some(8));
    let reasoning = events.iter().filter(|e| matches!(e, ChatStreamEvent::ReasoningChunk(_))).count();
    assert_eq!(reasoning, 2, "thought summaries stream as reasoning");
}
