//! A typed agent's native answer: the schema reaches the server as OpenAI's
//! `response_format` (strict JSON Schema), and an answer that fails the check is given
//! back in the next request.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tower::ServiceExt;
use tower_adk::{Agent, AgentRequest};

use crate::servers::Llmock;

/// The typed answer.
#[derive(Debug, Deserialize, JsonSchema)]
struct Forecast {
    /// The city.
    city: String,
    /// Degrees Celsius.
    celsius: f64,
    /// Optional: a note.
    note: Option<String>,
}

#[tokio::test]
async fn a_native_typed_answer_sends_a_strict_response_format_and_retries_on_the_server() {
    let server = Llmock::start();
    server.script(json!([
        {"type": "reply", "text": "{\"city\": \"Oslo\", \"celsius\": \"cold\", \"note\": null}"},
        {"type": "reply", "text": "{\"city\": \"Oslo\", \"celsius\": -3.5, \"note\": null}"}
    ]));
    for stream in [false, true] {
        let agent = Agent::builder(server.model(stream))
            .instruction("Answer in JSON.")
            .output::<Forecast>()
            .native()
            .build()
            .unwrap();
        if stream {
            server.script(json!([
                {"type": "reply", "text": "not json"},
                {"type": "reply", "text": "{\"city\": \"Oslo\", \"celsius\": -3.5, \"note\": null}"}
            ]));
        }

        let answer = agent.oneshot(AgentRequest::user("Oslo?")).await.unwrap();

        assert_eq!(answer.output.city, "Oslo");
        assert_eq!(answer.output.celsius, -3.5);
        assert_eq!(answer.output.note, None);
        assert_eq!(answer.result.model_calls, 2);
    }

    let bodies = server.requests();
    assert_eq!(bodies.len(), 4);
    let format = &bodies[0]["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "final_answer");
    assert_eq!(format["json_schema"]["strict"], true);
    let schema = &format["json_schema"]["schema"];
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["city", "celsius", "note"]));
    assert_eq!(
        schema["properties"]["note"]["type"],
        json!(["string", "null"])
    );
    assert!(bodies[0].get("tools").is_none());
    assert_eq!(bodies[1]["response_format"], *format);

    // The failed answer and the problem, as the server received them.
    let messages = bodies[1]["messages"].as_array().unwrap();
    let n = messages.len();
    assert_eq!(messages[n - 2]["role"], "assistant");
    assert_eq!(messages[n - 1]["role"], "user");
    let feedback = messages[n - 1]["content"].as_str().unwrap();
    assert!(
        feedback.contains(r#"at `/celsius`: "cold" is not of type "number""#),
        "{feedback}"
    );
    let feedback = bodies[3]["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert!(
        feedback.as_str().unwrap().contains("at `/`: not JSON"),
        "{feedback}"
    );
}
