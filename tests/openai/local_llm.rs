//! A real model: SmolLM2-135M-Instruct served by llama-cpp-python's OpenAI-compatible
//! server (`scripts/setup-local-llm`).
//!
//! - With `LOCAL_LLM_BASE_URL` set (e.g. `http://127.0.0.1:8080/v1`; the model name is
//!   `LOCAL_LLM_MODEL`, default `smollm2`), the tests run against that server; with
//!   `ADK_CASSETTE_MODE=record` too (and the feature `cassette`), they record what it
//!   answered to `tests/cassettes/smollm2-*.json`.
//! - Without it, with the feature `cassette`, they replay those committed cassettes
//!   through the same agents (`testing::cassette::ReplayModel`): every request the agent
//!   makes must equal the recorded one, and the recorded answers drive the run.
//!   Without the feature, each test prints a note and returns.
//!
//! This server streams tool calls only under a named `tool_choice`, and sends the call's
//! id and name again in every fragment. By default it cuts a stream short when another
//! request arrives, so the tests here take turns (and the setup script starts it with
//! `--interrupt_requests false`). The model is tiny: the tests check the plumbing
//! (a forced tool call with valid arguments, the result sent back, an answer), not the
//! quality of its words.

use tower::ServiceExt;
use tower_adk::handlers::wrap_model;
use tower_adk::model::{ModelOptions, ToolChoice, UsageMeter};
use tower_adk::providers::openai::OpenAiModel;
use tower_adk::{Agent, AgentRequest, BoxModel, Message};

use crate::{run, streamed_text, weather};

/// Held by each test while it talks to the server.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The model of a test: the live server (recording to `cassette` when asked), else the
/// cassette replayed.
fn local_model(stream: bool, cassette: &str) -> Option<BoxModel> {
    #[cfg(feature = "cassette")]
    let cassette = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cassettes")
        .join(cassette);
    #[cfg(not(feature = "cassette"))]
    let _ = cassette;
    let Ok(base_url) = std::env::var("LOCAL_LLM_BASE_URL") else {
        #[cfg(feature = "cassette")]
        {
            let replay = tower_adk::testing::cassette::ReplayModel::open(&cassette).unwrap();
            return Some(BoxModel::new(replay));
        }
        #[cfg(not(feature = "cassette"))]
        {
            println!(
                "LOCAL_LLM_BASE_URL is not set: skipping the local model test (see scripts/setup-local-llm)"
            );
            return None;
        }
    };
    let model = std::env::var("LOCAL_LLM_MODEL").unwrap_or_else(|_| "smollm2".into());
    let model = OpenAiModel::builder()
        .base_url(base_url)
        .model(model)
        .stream(stream)
        .build()
        .unwrap();
    #[cfg(feature = "cassette")]
    {
        use tower::Layer;
        use tower_adk::testing::cassette::{Cassette, Mode};
        if Mode::from_env().unwrap() == Mode::Record {
            let layer = Cassette::new(&cassette).mode(Mode::Record).layer().unwrap();
            return Some(BoxModel::new(layer.layer(model)));
        }
    }
    Some(BoxModel::new(model.map_err(Into::into)))
}

/// An agent that must call `weather` first, then answers without tools once the result
/// is in (the server would otherwise be held to the named tool forever).
fn weather_agent(model: BoxModel) -> Agent {
    let mut options = ModelOptions::default();
    options.tool_choice = ToolChoice::Tool("weather".into());
    options.temperature = Some(0.0);
    options.max_tokens = Some(48);
    Agent::builder(model)
        .tool(weather())
        .model_options(options)
        .max_iterations(2)
        .build()
        .unwrap()
}

fn request() -> AgentRequest {
    AgentRequest::user("What is the weather in Paris?").with_handler(wrap_model(
        |mut req, next| async move {
            if matches!(req.messages.last(), Some(Message::Tool { .. })) {
                req.tools = std::sync::Arc::from([]);
            }
            next.run(req).await
        },
    ))
}

#[tokio::test]
async fn local_llm_streams_a_named_tool_call_and_an_answer_from_its_result() {
    let Some(model) = local_model(true, "smollm2-weather-streamed.json") else {
        return;
    };
    let _turn = ONE_AT_A_TIME.lock().await;

    let (events, result) = run(&weather_agent(model), request()).await;
    let result = result.unwrap();

    let record = &result.tool_records[0];
    assert_eq!(record.name, "weather", "{record:?}");
    assert!(
        record.error.is_none(),
        "the arguments are valid JSON: {record:?}"
    );
    assert!(!result.final_message.content().trim().is_empty());
    assert_eq!(streamed_text(&events), result.final_message.content());
}

#[tokio::test]
async fn local_llm_runs_a_whole_loop_without_streaming_and_reports_usage() {
    let Some(model) = local_model(false, "smollm2-weather-whole.json") else {
        return;
    };
    let _turn = ONE_AT_A_TIME.lock().await;
    let usage = UsageMeter::new();

    let (_, result) = run(
        &weather_agent(model),
        request().with_extension(usage.clone()),
    )
    .await;
    let result = result.unwrap();

    assert_eq!(result.tool_records[0].name, "weather");
    assert!(result.tool_records[0].error.is_none());
    assert!(!result.final_message.content().trim().is_empty());
    assert_eq!(usage.calls(), 2);
    assert!(usage.total().prompt_tokens > 0);
}

/// The committed cassette refuses a question it did not record, with a diff that names
/// the field and shows both questions.
#[cfg(feature = "cassette")]
#[tokio::test]
async fn the_smollm2_cassette_refuses_a_question_it_did_not_record() {
    use tower_adk::testing::cassette::{CassetteError, ReplayModel};

    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/cassettes/smollm2-weather-streamed.json"
    );
    let replay = ReplayModel::open(path).unwrap();
    let agent = weather_agent(BoxModel::new(replay.clone()));
    let (_, result) = run(&agent, AgentRequest::user("What is the weather in Rome?")).await;

    let error = result.unwrap_err();
    let Some(CassetteError::Drift { path, diff, .. }) = CassetteError::find(&error) else {
        panic!("not a drift: {error}")
    };
    assert_eq!(path, "messages[0].content");
    assert!(
        diff.contains("-      \"content\": \"What is the weather in Paris?\""),
        "{diff}"
    );
    assert!(
        diff.contains("+      \"content\": \"What is the weather in Rome?\""),
        "{diff}"
    );
    assert_eq!(replay.remaining(), replay.len());
}

/// One model call, no agent: the request as a program would build it for the provider
/// gets the call the server streamed, piece for piece.
#[cfg(feature = "cassette")]
#[tokio::test]
async fn the_smollm2_cassette_answers_a_single_model_call_without_an_agent() {
    use std::sync::Arc;

    use tower_adk::ModelRequest;
    use tower_adk::testing::cassette::ReplayModel;

    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/cassettes/smollm2-weather-streamed.json"
    );
    let replay = ReplayModel::open(path).unwrap();
    let question = Message::user("What is the weather in Paris?");
    let mut request = ModelRequest::new(vec![question].into());
    request.tools = Arc::from([Arc::new(weather().info().clone())]);
    request.options.tool_choice = ToolChoice::Tool("weather".into());
    request.options.temperature = Some(0.0);
    request.options.max_tokens = Some(48);

    let answer = replay.clone().oneshot(request).await.unwrap();
    assert!(answer.is_streamed());
    let message = answer.into_message().await.unwrap();
    let call = &message.tool_calls()[0];
    assert_eq!(call.name, "weather");
    let arguments: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
    assert_eq!(arguments["city"], "Paris");
    assert_eq!(
        replay.remaining(),
        1,
        "the second call (the answer) is left"
    );
}
