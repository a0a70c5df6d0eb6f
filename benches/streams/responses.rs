//! A streamed Responses API reply as OpenAI sends it, for the benchmarks of its readers
//! (`benches/sse.rs`, and `benches/peers/async-openai`, which include this file): 1,000
//! events with `event:` lines and sequence numbers: the lifecycle events, a reasoning
//! summary in 100 deltas and its encrypted content, text deltas, a function call in
//! fragments, `response.completed` with usage.

use serde_json::json;

/// How many events the stream has.
pub(crate) const EVENTS: usize = 1_000;

/// The stream's bytes.
pub(crate) fn body() -> Vec<u8> {
    let response = |status: &str, usage: serde_json::Value| {
        json!({"id": "resp_67ccd7eca01881908ff0b5146584e408072912b2993db808", "object": "response",
               "created_at": 1741487325, "status": status, "error": null, "incomplete_details": null,
               "instructions": null, "max_output_tokens": null, "model": "o4-mini-2025-04-16",
               "output": [], "parallel_tool_calls": true, "previous_response_id": null,
               "reasoning": {"effort": "medium", "summary": "auto"}, "store": false,
               "temperature": 1.0, "text": {"format": {"type": "text"}}, "tool_choice": "auto",
               "tools": [], "top_p": 1.0, "truncation": "disabled", "usage": usage,
               "user": null, "metadata": {}})
    };
    let rs = "rs_6806bfca0b2481918a5748308061a2600d3ce51bdffd5476";
    let msg = "msg_67ccd7f7b5848190a6f3e95d809f6b44072912b2993db808";
    let fc = "fc_67ca09c6bedc8190a7abfec07b1a1332096610f474011cc0";
    let words = [
        "The", " weather", " in", " Zürich", " is", " 21", "°C", " and", " sunny", ".\\n",
    ];
    let mut events = vec![
        json!({"type": "response.created", "response": response("in_progress", json!(null))}),
        json!({"type": "response.in_progress", "response": response("in_progress", json!(null))}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": rs, "type": "reasoning", "summary": []}}),
        json!({"type": "response.reasoning_summary_part.added", "item_id": rs, "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
    ];
    let reasoning = 100;
    events.extend((0..reasoning).map(|i| {
        json!({"type": "response.reasoning_summary_text.delta", "item_id": rs, "output_index": 0, "summary_index": 0, "delta": words[i % words.len()]})
    }));
    let encrypted = format!("gAAAAABpM0Yj{}", "x_Zm9vYmFyLWVuY3J5cHRlZA-".repeat(24));
    events.extend([
        json!({"type": "response.reasoning_summary_text.done", "item_id": rs, "output_index": 0, "summary_index": 0, "text": "..."}),
        json!({"type": "response.reasoning_summary_part.done", "item_id": rs, "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": "..."}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": rs, "type": "reasoning", "encrypted_content": encrypted, "summary": [{"type": "summary_text", "text": "..."}]}}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": msg, "status": "in_progress", "type": "message", "role": "assistant", "content": []}}),
        json!({"type": "response.content_part.added", "item_id": msg, "output_index": 1, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
    ]);
    let fragments = ["{\"location\":", "\"Zürich\",", "\"unit\":", "\"celsius\"}"];
    let text = EVENTS - events.len() - 4 - fragments.len() - 3;
    events.extend((0..text).map(|i| {
        json!({"type": "response.output_text.delta", "item_id": msg, "output_index": 1, "content_index": 0, "delta": words[i % words.len()], "logprobs": []})
    }));
    events.extend([
        json!({"type": "response.output_text.done", "item_id": msg, "output_index": 1, "content_index": 0, "text": "...", "logprobs": []}),
        json!({"type": "response.content_part.done", "item_id": msg, "output_index": 1, "content_index": 0, "part": {"type": "output_text", "text": "...", "annotations": []}}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"id": msg, "status": "completed", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "...", "annotations": []}]}}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call", "id": fc, "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k", "name": "get_current_weather", "arguments": "", "status": "in_progress"}}),
    ]);
    events.extend(fragments.iter().map(|f| {
        json!({"type": "response.function_call_arguments.delta", "item_id": fc, "output_index": 2, "delta": f})
    }));
    events.extend([
        json!({"type": "response.function_call_arguments.done", "item_id": fc, "output_index": 2, "arguments": fragments.concat()}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": {"type": "function_call", "id": fc, "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k", "name": "get_current_weather", "arguments": fragments.concat(), "status": "completed"}}),
        json!({"type": "response.completed", "response": response("completed", json!({
            "input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1024},
            "output_tokens": 1035, "output_tokens_details": {"reasoning_tokens": 832},
            "total_tokens": 2235}))}),
    ]);
    assert_eq!(events.len(), EVENTS);
    let mut bytes = Vec::new();
    for (seq, mut event) in events.into_iter().enumerate() {
        event["sequence_number"] = json!(seq);
        let kind = event["type"].as_str().unwrap_or_default().to_owned();
        bytes.extend_from_slice(format!("event: {kind}\ndata: {event}\n\n").as_bytes());
    }
    bytes
}
