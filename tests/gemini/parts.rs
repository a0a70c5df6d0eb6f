//! Images and files reach Gemini in its format (`inlineData`, `fileData`), in a user's
//! turn and in a tool's result, and Google's SDK accepts the bodies.

use serde_json::{Value, json};
use tower::ServiceExt;
use tower_adk::content::{Content, Part, Reasoning, Source};
use tower_adk::providers::gemini::{GeminiError, ToolMedia};
use tower_adk::{Agent, AgentRequest, Message, ModelRequest, ToolCall, ToolInfo};

use super::replay::{Replay, Reply};
use super::{model, sdk};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const PDF: &str = "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSPj4Kc3RyZWFtCg==";

#[tokio::test]
async fn an_image_and_a_pdf_reach_the_model_as_inline_data_and_a_url_as_file_data() {
    let server = Replay::start([Reply::stream("tool-loop-3.sse")]).await;
    let question = Content::from(vec![
        Part::text("What is in the picture and the report?"),
        Part::image(Source::base64("image/png", PNG)),
        Part::file(
            Source::base64("application/pdf", PDF),
            Some("report.pdf".into()),
        ),
        Part::file(
            Source::Url {
                url: "https://example.com/spec.pdf".into(),
                media_type: Some("application/pdf".into()),
            },
            None,
        ),
        Part::image(Source::url(format!("data:image/png;base64,{PNG}"))),
    ]);
    let agent = Agent::builder(model(server.url()).build().unwrap())
        .build()
        .unwrap();
    let messages = vec![Message::system("Be brief."), Message::user(question)];
    agent.run(AgentRequest::new(messages)).await.unwrap();

    let body = server.requests().remove(0).body;
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [
            {"text": "What is in the picture and the report?"},
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
            {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
            {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/spec.pdf"}},
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
        ]}])
    );
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "Be brief."}]})
    );
    sdk::validate(&[body]);
}

/// A history in which the model called `chart` and the tool answered with an image.
async fn chart_request(media: ToolMedia) -> Value {
    let server = Replay::start([Reply::stream("tool-loop-3.sse")]).await;
    let gemini = model(server.url()).tool_media(media).build().unwrap();
    let output = vec![
        Part::text("the chart"),
        Part::image(Source::base64("image/png", PNG)),
    ];
    let history = vec![
        Message::user("Chart it."),
        Message::assistant_with_calls("", vec![ToolCall::new("gemini-r-0", "chart", json!({}))]),
        Message::tool("gemini-r-0", "chart", Content::from(output)),
    ];
    gemini
        .oneshot(ModelRequest::new(history.into()))
        .await
        .unwrap();
    server.requests().remove(0).body
}

#[tokio::test]
async fn a_tool_results_image_reaches_the_model_inside_its_function_response() {
    let body = chart_request(ToolMedia::InFunctionResponse).await;
    assert_eq!(
        body["contents"][2],
        json!({"role": "user", "parts": [{"functionResponse": {
            "name": "chart",
            "response": {"result": "the chart"},
            "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG}}]
        }}]})
    );
    // Our own call id is not sent back; the call goes as Gemini made it.
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [{"functionCall": {"name": "chart", "args": {}}}]})
    );
    sdk::validate(&[body]);
}

#[tokio::test]
async fn for_older_models_a_tool_results_image_goes_beside_its_function_response() {
    let body = chart_request(ToolMedia::BesideFunctionResponse).await;
    assert_eq!(
        body["contents"][2]["parts"],
        json!([
            {"functionResponse": {"name": "chart", "response": {"result": "the chart"}}},
            {"inlineData": {"mimeType": "image/png", "data": PNG}}
        ])
    );
    sdk::validate(&[body]);
}

#[tokio::test]
async fn results_of_one_turn_share_a_content_and_errors_and_json_keep_their_shape() {
    let server = Replay::start([Reply::stream("tool-loop-3.sse")]).await;
    let gemini = model(server.url()).build().unwrap();
    let history = vec![
        Message::user("Both."),
        Message::assistant_with_calls(
            "Calling both.",
            vec![
                ToolCall::new("abc", "a", json!({"x": 1})),
                ToolCall::raw("gemini-r-1", "b", "not json"),
            ],
        ),
        Message::tool("abc", "a", r#"{"temperature": 21}"#),
        Message::tool_error("gemini-r-1", "b", "invalid arguments"),
        Message::user("And now?"),
    ];
    gemini
        .oneshot(ModelRequest::new(history.into()))
        .await
        .unwrap();
    let body = server.requests().remove(0).body;
    assert_eq!(
        body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "Both."}]},
            {"role": "model", "parts": [
                {"text": "Calling both."},
                // An id Gemini gave goes back; malformed arguments go back as written.
                {"functionCall": {"id": "abc", "name": "a", "args": {"x": 1}}},
                {"functionCall": {"name": "b", "args": {"arguments": "not json"}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"id": "abc", "name": "a", "response": {"temperature": 21}}},
                {"functionResponse": {"name": "b", "response": {"error": "invalid arguments"}}}
            ]},
            {"role": "user", "parts": [{"text": "And now?"}]}
        ])
    );
    sdk::validate(&[body]);
}

#[tokio::test]
async fn tool_schemas_are_converted_to_what_gemini_accepts_and_the_sdk_checks_them() {
    let server = Replay::start([Reply::stream("tool-loop-3.sse")]).await;
    let gemini = model(server.url()).build().unwrap();
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "place": {"$ref": "#/$defs/Place"},
            "unit": {"type": ["string", "null"], "enum": ["c", "f", null]},
            "kind": {"const": "forecast"}
        },
        "required": ["place"],
        "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}, "additionalProperties": false}}
    });
    let mut request = ModelRequest::new(vec![Message::user("Weather?")].into());
    request.tools = vec![std::sync::Arc::new(
        ToolInfo::new("weather", "The weather").parameters(schema.clone()),
    )]
    .into();
    request.options.tool_choice = tower_adk::model::ToolChoice::Tool("weather".into());
    gemini.oneshot(request).await.unwrap();
    let body = server.requests().remove(0).body;
    let declaration = &body["tools"][0]["functionDeclarations"][0];
    assert_eq!(
        declaration["parameters"],
        json!({
            "type": "OBJECT",
            "properties": {
                "place": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}},
                "unit": {"type": "STRING", "nullable": true, "enum": ["c", "f"]},
                "kind": {"type": "STRING", "enum": ["forecast"]}
            },
            "required": ["place"]
        })
    );
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}})
    );
    sdk::validate(std::slice::from_ref(&body));

    // The check can fail: the keywords we drop or convert are refused by the SDK's types.
    for (path, keyword, value) in [
        ("", "$schema", schema["$schema"].clone()),
        ("/properties/kind", "const", json!("forecast")),
    ] {
        let mut raw = body.clone();
        let parameters = &mut raw["tools"][0]["functionDeclarations"][0]["parameters"];
        parameters.pointer_mut(path).unwrap()[keyword] = value;
        let refusal = sdk::refuses(&raw);
        assert!(
            refusal.contains(keyword) && refusal.contains("Extra inputs"),
            "{refusal}"
        );
    }
}

#[tokio::test]
async fn only_geminis_own_reasoning_goes_back_and_a_part_it_cannot_take_is_refused_by_name() {
    let server = Replay::start([Reply::stream("tool-loop-3.sse")]).await;
    let gemini = model(server.url()).build().unwrap();
    let claude =
        Reasoning::new("anthropic", "Let me think.").with_data("signature", "c2lnbmF0dXJl");
    let summary = Reasoning::new("gemini", "I thought about it.");
    let reply = Content::from(vec![
        Part::Reasoning(claude),
        Part::Reasoning(summary),
        Part::text("Hello."),
    ]);
    let history = vec![
        Message::user("Hi"),
        Message::assistant(reply),
        Message::user("Again"),
    ];
    gemini
        .clone()
        .oneshot(ModelRequest::new(history.into()))
        .await
        .unwrap();
    let body = server.requests().remove(0).body;
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [{"text": "Hello."}]}),
        "neither another provider's signature nor an unsigned summary is sent"
    );

    // An image at a URL with no media type: fileData needs one, so the call fails before
    // anything is sent, naming the part.
    let unknown = Content::from(vec![Part::image(Source::url("https://example.com/x"))]);
    let request = ModelRequest::new(vec![Message::user("a"), Message::user(unknown)].into());
    let error = gemini.oneshot(request).await.unwrap_err();
    assert!(
        matches!(&error, GeminiError::UnsupportedPart { part, .. } if part == "image of message 1"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 1, "nothing more was sent");
}
