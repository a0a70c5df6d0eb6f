#![allow(clippy::unwrap_used)]

use super::{GeminiModel, ResponseFuture};

#[test]
fn the_model_and_its_future_are_send_and_sync() {
    fn send_sync<T: Send + Sync + 'static>() {}
    fn send<T: Send + 'static>() {}
    send_sync::<GeminiModel>();
    send::<ResponseFuture>();
    send_sync::<super::GeminiError>();
}

mod decoding {
    use serde_json::json;

    use crate::content::{Part, Reasoning};
    use crate::model::{MessageAccumulator, ModelDelta};
    use crate::providers::gemini::ReplyDecoder;
    use crate::providers::sse::{Flow, SseParser};

    /// The message a stream of chunks makes, and whether it finished.
    fn read(chunks: &[serde_json::Value]) -> (crate::Message, Flow) {
        let mut parser = SseParser::new();
        let mut decoder = ReplyDecoder::new();
        let mut deltas: Vec<ModelDelta> = Vec::new();
        for chunk in chunks {
            parser.feed(format!("data: {chunk}\r\n\r\n").as_bytes());
            while let Some(event) = parser.next_event().unwrap() {
                decoder.decode(&event, &mut deltas).unwrap();
            }
        }
        let mut reply = MessageAccumulator::default();
        deltas.into_iter().for_each(|d| reply.push(d));
        (reply.finish(), decoder.finish().unwrap())
    }

    fn chunk(parts: serde_json::Value, finish: Option<&str>) -> serde_json::Value {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}});
        if let Some(finish) = finish {
            candidate["finishReason"] = json!(finish);
        }
        json!({"candidates": [candidate], "responseId": "r1"})
    }

    fn signature(data: &str) -> Part {
        Part::Reasoning(Reasoning::new("gemini", "").with_data("thought_signature", data))
    }

    #[test]
    fn a_text_signature_stands_just_before_its_text_and_summaries_merge_until_signed() {
        let (message, flow) = read(&[
            chunk(json!([{"text": "Let me ", "thought": true}]), None),
            chunk(
                json!([{"text": "think.", "thought": true, "thoughtSignature": "VA=="}]),
                None,
            ),
            chunk(json!([{"text": "Hello"}]), None),
            chunk(
                json!([{"text": " world", "thoughtSignature": "U0lH"}]),
                None,
            ),
            chunk(
                json!([{"text": "", "thoughtSignature": "RU5E"}]),
                Some("STOP"),
            ),
        ]);
        assert_eq!(flow, Flow::Done);
        let summary =
            Reasoning::new("gemini", "Let me think.").with_data("thought_signature", "VA==");
        assert_eq!(
            message.parts().to_vec(),
            [
                Part::Reasoning(summary),
                Part::text("Hello"),
                signature("U0lH"),
                Part::text(" world"),
                signature("RU5E"),
            ]
        );
    }

    #[test]
    fn a_call_without_an_id_gets_one_from_the_reply_and_its_signature_names_it() {
        let (message, _) = read(&[chunk(
            json!([
                {"functionCall": {"name": "a", "args": {"x": 1}}, "thoughtSignature": "QQ=="},
                {"functionCall": {"id": "given", "name": "b"}}
            ]),
            Some("STOP"),
        )]);
        let calls = message.tool_calls();
        assert_eq!(
            (calls[0].id.as_str(), calls[0].arguments.as_str()),
            ("gemini-r1-0", r#"{"x":1}"#)
        );
        assert_eq!(
            (calls[1].id.as_str(), calls[1].arguments.as_str()),
            ("given", "{}")
        );
        let signed = Reasoning::new("gemini", "")
            .with_data("thought_signature", "QQ==")
            .with_id("gemini-r1-0");
        assert_eq!(message.parts().to_vec(), [Part::Reasoning(signed)]);
    }

    #[test]
    fn a_stream_without_a_finish_reason_is_not_complete() {
        let (_, flow) = read(&[chunk(json!([{"text": "Hel"}]), None)]);
        assert_eq!(flow, Flow::More);
    }
}

mod requests {
    use serde_json::json;

    use crate::content::{Content, Part, Reasoning};
    use crate::message::{Message, ToolCall};
    use crate::model::ModelRequest;
    use crate::providers::gemini::GeminiModel;
    use crate::providers::gemini::request::request_body;

    fn signature(data: &str) -> Part {
        Part::Reasoning(Reasoning::new("gemini", "").with_data("thought_signature", data))
    }

    #[test]
    fn each_signature_goes_back_on_the_part_it_came_on() {
        let model = GeminiModel::builder().model("m").build().unwrap();
        let reply = Content::from(vec![
            Part::text("Hello"),
            signature("U0lH"),
            Part::text(" world"),
            Part::Reasoning(
                Reasoning::new("gemini", "")
                    .with_data("thought_signature", "QQ==")
                    .with_id("gemini-r1-0"),
            ),
            signature("RU5E"),
        ]);
        let calls = vec![ToolCall::new("gemini-r1-0", "a", json!({"x": 1}))];
        let request = ModelRequest::new(
            vec![
                Message::user("hi"),
                Message::assistant_with_calls(reply, calls),
                Message::tool("gemini-r1-0", "a", "3"),
            ]
            .into(),
        );
        let body = request_body(&model.shared, &request).unwrap();
        assert_eq!(
            body["contents"][1]["parts"],
            json!([
                {"text": "Hello"},
                {"text": " world", "thoughtSignature": "U0lH"},
                {"text": "", "thoughtSignature": "RU5E"},
                {"functionCall": {"name": "a", "args": {"x": 1}}, "thoughtSignature": "QQ=="}
            ])
        );
        assert_eq!(
            body["contents"][2]["parts"],
            json!([{"functionResponse": {"name": "a", "response": {"result": 3}}}])
        );
        assert!(body.get("tools").is_none());
    }
}
