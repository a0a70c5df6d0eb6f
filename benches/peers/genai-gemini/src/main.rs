//! The cost per chunk of reading a streamed Gemini reply: genai 0.7.2's Gemini adapter
//! (`exec_chat_stream`, every event read) against tower-adk's `GeminiModel` (every delta
//! read), on the same 1,000-chunk stream from the same local server, both on reqwest over
//! loopback. Prints the median time per chunk of each over 30 calls (after 5 warm-up
//! calls) and their ratio, as JSON lines.
//!
//!     benches/peers/genai-gemini/evaluate

use std::time::{Duration, Instant};

use futures::StreamExt;
use genai::chat::{ChatOptions, ChatRequest};
use peer_genai_gemini::{Reply, Server, genai_client, our_model};
use serde_json::json;
use tower::ServiceExt;
use tower_adk::{Message, ModelRequest};

const CHUNKS: usize = 1_000;
const CALLS: usize = 30;
const WARM_UP: usize = 5;

/// A reply of `CHUNKS` chunks as the API streams one: text chunks (with the usage so far
/// on each, as the API sends it), two signed function calls, the finish chunk.
fn body() -> Vec<u8> {
    let words = ["The", " weather", " in", " Zürich", " is", " 21", "°C", " and", " sunny", "."];
    let usage = json!({"promptTokenCount": 87, "candidatesTokenCount": 12, "totalTokenCount": 99});
    let chunk = |parts: serde_json::Value, finish: Option<&str>| {
        let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
        if let Some(finish) = finish {
            candidate["finishReason"] = json!(finish);
        }
        let chunk = json!({"candidates": [candidate], "usageMetadata": usage,
            "modelVersion": "gemini-2.5-flash", "responseId": "cNSfaL2nLvCez7IPxKGWuAg"});
        format!("data: {chunk}\r\n\r\n")
    };
    let mut out = String::new();
    for i in 0..CHUNKS - 3 {
        out.push_str(&chunk(json!([{"text": words[i % words.len()]}]), None));
    }
    let signature = "CiQBVKhc7gVNlWrmzW9MEk/bjBDPDpxUEY9TBFuB8vn6CVjiCFgKeAFUqFzuJXH+jzpn9qLqTHoB2bJO4X9zCVKNe4cI7Wej+GjGuUP3DU5VAanQuz9agncQ299dkIYc/8uB2Wp2zFkFeq2v5SEUpKQfmlElMDRGM4cwU0LKHfOfEYYgWGXwjnbRvaP+lFtEb4DA";
    for (name, city) in [("weather", "Zürich"), ("forecast", "Zürich")] {
        out.push_str(&chunk(
            json!([{"functionCall": {"name": name, "args": {"city": city}}, "thoughtSignature": signature}]),
            None,
        ));
    }
    out.push_str(&chunk(json!([{"text": ""}]), Some("STOP")));
    out.into_bytes()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

async fn genai_call(client: &genai::Client) -> usize {
    let options = ChatOptions::default()
        .with_capture_content(true)
        .with_capture_tool_calls(true)
        .with_capture_usage(true);
    let mut response = client
        .exec_chat_stream("gemini-2.5-flash", ChatRequest::from_user("Weather?"), Some(&options))
        .await
        .unwrap();
    let mut events = 0;
    while let Some(event) = response.stream.next().await {
        event.unwrap();
        events += 1;
    }
    events
}

async fn our_call(model: &tower_adk::providers::gemini::GeminiModel) -> usize {
    let request = ModelRequest::new(vec![Message::user("Weather?")].into());
    let mut stream = model.clone().oneshot(request).await.unwrap().into_stream();
    let mut deltas = 0;
    while let Some(delta) = stream.next().await {
        delta.unwrap();
        deltas += 1;
    }
    deltas
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = Server::repeating(Reply::stream(body())).await;
    let client = genai_client(&server.url);
    let model = our_model(&server.url);
    assert!(genai_call(&client).await >= CHUNKS - 3);
    assert!(our_call(&model).await >= CHUNKS - 3);
    let mut genai_times = Vec::new();
    let mut our_times = Vec::new();
    // Alternate the two, so that both see the same machine.
    for i in 0..WARM_UP + CALLS {
        let start = Instant::now();
        genai_call(&client).await;
        let genai = start.elapsed();
        let start = Instant::now();
        our_call(&model).await;
        let ours = start.elapsed();
        if i >= WARM_UP {
            genai_times.push(genai);
            our_times.push(ours);
        }
    }
    let per_chunk = |d: Duration| d.as_secs_f64() * 1e9 / CHUNKS as f64;
    let (genai, ours) = (per_chunk(median(genai_times)), per_chunk(median(our_times)));
    println!("{}", json!({"reader": "genai 0.7.2 Gemini adapter", "chunks": CHUNKS, "calls": CALLS, "ns_per_chunk": genai.round()}));
    println!("{}", json!({"reader": "tower-adk GeminiModel", "chunks": CHUNKS, "calls": CALLS, "ns_per_chunk": ours.round()}));
    println!("{}", json!({"genai_over_ours": (genai / ours * 100.0).round() / 100.0}));
}
