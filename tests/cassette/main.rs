//! Recorded traffic (`testing::cassette`): calls recorded through the layer and replayed
//! piece for piece, drift reported as a diff, secrets kept out of the file, corrupt files
//! refused with typed errors, concurrent recordings kept whole. (The committed SmolLM2
//! cassettes replay in `tests/openai/local_llm.rs` and `tests/examples`.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};
use tower::{BoxError, Layer, ServiceExt, service_fn};
use tower_adk::content::{Part, Reasoning};
use tower_adk::model::{Usage, UsageMeter};
use tower_adk::testing::cassette::{
    Cassette, CassetteError, Mode, RecordedError, ReplayModel, Scrubber,
};
use tower_adk::testing::{ScriptedModel, Turn, echo_tool};
use tower_adk::{
    Agent, AgentRequest, BoxModel, Message, ModelDelta, ModelRequest, ModelResponse, ToolCall,
    ToolInfo,
};

/// A fresh folder for one test's cassettes.
fn folder(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cassette")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn recorder(path: &Path) -> tower_adk::testing::cassette::CassetteLayer {
    Cassette::new(path).mode(Mode::Record).layer().unwrap()
}

fn replayer(path: &Path) -> ReplayModel {
    Cassette::new(path).replay().unwrap()
}

/// Every delta of a response, errors as their messages.
async fn deltas(response: ModelResponse) -> Vec<Result<ModelDelta, String>> {
    (response.into_stream())
        .map(|d| d.map_err(|e| e.to_string()))
        .collect()
        .await
}

fn request(text: &str) -> ModelRequest {
    ModelRequest::new(vec![Message::user(text)].into())
}

/// The deltas of a streamed answer with every kind of piece: reasoning whose opaque data
/// must survive byte for byte, text, a tool call in pieces, a part, usage.
fn every_piece() -> Vec<ModelDelta> {
    let reasoning = Reasoning::new("anthropic", "Weigh it.")
        .with_data("signature", "c2ln+/=\u{0}é\"\\\n")
        .with_id("r1");
    vec![
        ModelDelta::Reasoning(reasoning),
        ModelDelta::Text("Let me ".into()),
        ModelDelta::Text("look.".into()),
        ModelDelta::ToolCall {
            index: 0,
            id: Some("c1".into()),
            name: Some("weather".into()),
            arguments: "{\"city\":".into(),
        },
        ModelDelta::ToolCall {
            index: 0,
            id: None,
            name: None,
            arguments: "\"Paris\"}".into(),
        },
        ModelDelta::Part(Part::text("and a part")),
        ModelDelta::Usage {
            model: Some("small-1".into()),
            usage: Usage::new(12, 7, 19).with_reasoning(3),
        },
    ]
}

#[tokio::test]
async fn a_streamed_answer_replays_piece_for_piece_in_order() {
    let path = folder("streamed").join("calls.json");
    let live = service_fn(|_: ModelRequest| async {
        let deltas = futures::stream::iter(every_piece().into_iter().map(Ok::<_, BoxError>));
        Ok::<_, BoxError>(ModelResponse::stream(deltas))
    });
    let recorded = recorder(&path)
        .layer(live)
        .oneshot(request("hi"))
        .await
        .unwrap();
    assert!(recorded.is_streamed());
    let recorded = deltas(recorded).await;
    assert_eq!(
        recorded,
        every_piece().into_iter().map(Ok).collect::<Vec<_>>()
    );

    let replay = replayer(&path);
    let replayed = replay.clone().oneshot(request("hi")).await.unwrap();
    assert!(replayed.is_streamed());
    assert_eq!(deltas(replayed).await, recorded);
    assert_eq!((replay.calls(), replay.remaining()), (1, 0));

    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let answer = &file["interactions"][0]["response"];
    assert_eq!(answer["end"], "done");
    assert_eq!(answer["pieces"][0]["data"], "c2ln+/=\u{0}é\"\\\n");
    assert_eq!(
        file["interactions"][0]["request"]["messages"][0]["content"],
        "hi"
    );
}

#[tokio::test]
async fn a_whole_answer_replays_whole_with_its_usage() {
    let path = folder("whole").join("calls.json");
    let message = Message::assistant_with_calls(
        "Checking.",
        vec![ToolCall::new("c1", "weather", json!({"city": "Oslo"}))],
    );
    let live = service_fn(move |_: ModelRequest| {
        let message = message.clone();
        async move {
            let usage = Usage::new(5, 2, 7);
            Ok::<_, BoxError>(ModelResponse::message(message).with_usage(Some("m".into()), usage))
        }
    });
    let recorded = recorder(&path)
        .layer(live)
        .oneshot(request("hi"))
        .await
        .unwrap();
    assert!(!recorded.is_streamed());
    let recorded = deltas(recorded).await;

    // As the provider did, the replay puts the usage in the request's meter.
    let meter = UsageMeter::new();
    let mut metered = request("hi");
    metered.extensions_mut().insert(meter.clone());
    let replayed = replayer(&path).oneshot(metered).await.unwrap();
    assert_eq!((meter.calls(), meter.total().total_tokens), (1, 7));
    assert!(!replayed.is_streamed(), "a whole answer replays whole");
    let replayed = deltas(replayed).await;
    assert_eq!(replayed, recorded);
    assert!(matches!(
        replayed.last(),
        Some(Ok(ModelDelta::Usage { usage, .. })) if usage.total_tokens == 7
    ));
}

fn weather_turns() -> ScriptedModel {
    ScriptedModel::new([
        Turn::call("c1", "echo", json!({"city": "Paris"})).with_text("Let me check."),
        Turn::stream(["It is ", "sunny."]),
    ])
}

fn agent(model: BoxModel) -> Agent {
    Agent::builder(model)
        .instruction("Answer briefly.")
        .tool(echo_tool("echo"))
        .build()
        .unwrap()
}

#[tokio::test]
async fn an_agent_run_replays_to_the_same_result_without_the_live_model() {
    let path = folder("agent").join("run.json");
    let live = weather_turns();
    let layer = recorder(&path);
    let recorded = agent(BoxModel::new(layer.layer(live.clone())))
        .run(AgentRequest::user("Weather in Paris?"))
        .await
        .unwrap();
    assert_eq!(live.calls(), 2);

    let unused = ScriptedModel::new([]);
    let layer = Cassette::new(&path).mode(Mode::Replay).layer().unwrap();
    assert!(layer.is_replaying());
    let replayed = agent(BoxModel::new(layer.layer(unused.clone())))
        .run(AgentRequest::user("Weather in Paris?"))
        .await
        .unwrap();

    assert_eq!(unused.calls(), 0, "replay never calls the live model");
    assert_eq!(replayed.final_message, recorded.final_message);
    assert_eq!(replayed.final_message.content(), "It is sunny.");
    assert_eq!(replayed.messages, recorded.messages);
    assert_eq!(replayed.tool_records[0].content, r#"{"city":"Paris"}"#);
}

#[tokio::test]
async fn a_drifted_request_fails_with_a_diff_naming_the_changed_field() {
    let path = folder("drift").join("run.json");
    let layer = recorder(&path);
    agent(BoxModel::new(layer.layer(weather_turns())))
        .run(AgentRequest::user("Weather in Paris?"))
        .await
        .unwrap();

    let replay = replayer(&path);
    let error = agent(BoxModel::new(replay.clone()))
        .run(AgentRequest::user("Weather in Rome?"))
        .await
        .unwrap_err();
    let drift = CassetteError::find(&error).unwrap();
    let CassetteError::Drift {
        call, path, diff, ..
    } = drift
    else {
        panic!("not a drift: {drift}")
    };
    assert_eq!((*call, path.as_str()), (1, "messages[1].content"));
    assert!(
        diff.contains("-      \"content\": \"Weather in Paris?\""),
        "{diff}"
    );
    assert!(
        diff.contains("+      \"content\": \"Weather in Rome?\""),
        "{diff}"
    );
    assert!(diff.starts_with("--- recorded\n+++ requested\n"), "{diff}");
    assert!(drift.is_drift());
    assert_eq!(replay.remaining(), 2, "a drifted call serves nothing");

    // A tool described differently drifts too, at the tool's field.
    let other = Agent::builder(replay.clone())
        .instruction("Answer briefly.")
        .tool(tower_adk::Tool::from_fn(
            ToolInfo::new("echo", "Says it twice"),
            |_| async { Ok::<_, std::convert::Infallible>(tower_adk::ToolOutput::new("")) },
        ))
        .build()
        .unwrap();
    let error = other
        .run(AgentRequest::user("Weather in Paris?"))
        .await
        .unwrap_err();
    let CassetteError::Drift { path, .. } = CassetteError::find(&error).unwrap() else {
        panic!("{error}")
    };
    assert_eq!(path, "tools[0].description");
}

#[tokio::test]
async fn a_call_past_the_recording_is_refused_as_exhausted() {
    let path = folder("exhausted").join("calls.json");
    let live = ScriptedModel::new([Turn::text("one")]);
    recorder(&path)
        .layer(live)
        .oneshot(request("a"))
        .await
        .unwrap();
    let replay = replayer(&path);
    replay.clone().oneshot(request("a")).await.unwrap();
    let error = replay.oneshot(request("a")).await.unwrap_err();
    assert!(
        matches!(
            error.downcast_ref::<CassetteError>(),
            Some(CassetteError::Exhausted {
                call: 2,
                recorded: 1,
                ..
            })
        ),
        "{error}"
    );
}

#[tokio::test]
async fn failed_calls_and_failed_streams_are_recorded_and_replayed_as_their_errors() {
    let path = folder("errors").join("calls.json");
    let live = ScriptedModel::new([
        Turn::error("503 overloaded"),
        Turn::stream(["part"]).then_error("connection reset"),
    ]);
    let model = recorder(&path).layer(live);
    let error = model.clone().oneshot(request("a")).await.unwrap_err();
    assert_eq!(error.to_string(), "503 overloaded");
    let streamed = model.oneshot(request("b")).await.unwrap();
    let live_deltas = deltas(streamed).await;

    let text = std::fs::read_to_string(&path).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(file["interactions"][0]["error"], "503 overloaded");
    assert_eq!(file["interactions"][1]["response"]["end"], "error");

    let replay = replayer(&path);
    let error = replay.clone().oneshot(request("a")).await.unwrap_err();
    assert_eq!(
        error.downcast_ref::<RecordedError>(),
        Some(&RecordedError("503 overloaded".into()))
    );
    let replayed = deltas(replay.oneshot(request("b")).await.unwrap()).await;
    assert_eq!(replayed, live_deltas);
    assert_eq!(
        replayed,
        [
            Ok(ModelDelta::Text("part".into())),
            Err("connection reset".into())
        ]
    );
}

#[tokio::test]
async fn a_stream_dropped_half_read_is_recorded_as_dropped_with_what_was_read() {
    let path = folder("dropped").join("calls.json");
    let live = ScriptedModel::new([Turn::stream(["one", "two", "three"])]);
    let answer = recorder(&path)
        .layer(live)
        .oneshot(request("a"))
        .await
        .unwrap();
    let mut stream = answer.into_stream();
    stream.next().await.unwrap().unwrap();
    drop(stream);

    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let answer = &file["interactions"][0]["response"];
    assert_eq!(answer["end"], "dropped");
    assert_eq!(answer["pieces"], json!([{"type": "text", "text": "one"}]));
}

#[tokio::test]
async fn secrets_never_reach_the_file_and_scrubbed_requests_still_match() {
    let dir = folder("secrets");
    let path = dir.join("calls.json");
    let secrets = [
        "sk-proj-Abc123Def456Ghi789",
        "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
        "AIzaSyD-0123456789abcdefghijklmnopq",
        "hunter2-hunter2",
        "acct-99887766",
    ];
    let scrubber = || {
        Scrubber::default()
            .secret("hunter2-hunter2")
            .pattern(r"acct-\d+")
            .unwrap()
    };
    let prompt = format!("my keys: {}", secrets.join(", "));
    let echoed = format!("Incorrect API key provided: {}", secrets[0]);
    let live = ScriptedModel::new([
        Turn::stream([format!("You sent {}", secrets[3]), secrets[4].to_owned()]),
        Turn::error(echoed),
    ]);
    let model = Cassette::new(&path)
        .mode(Mode::Record)
        .scrubber(scrubber())
        .layer()
        .unwrap()
        .layer(live);
    let answer = model.clone().oneshot(request(&prompt)).await.unwrap();
    deltas(answer).await;
    model.oneshot(request("again")).await.unwrap_err();

    let text = std::fs::read_to_string(&path).unwrap();
    for secret in secrets {
        let core = secret.trim_start_matches("Bearer ");
        assert!(!text.contains(core), "{secret} reached the file:\n{text}");
    }
    assert!(text.contains("my keys: [REDACTED], [REDACTED], [REDACTED], [REDACTED], [REDACTED]"));
    assert!(
        text.contains("Incorrect API key provided: [REDACTED]"),
        "{text}"
    );

    // The same request, scrubbed the same way, finds its recorded answer.
    let replay = Cassette::new(&path).scrubber(scrubber()).replay().unwrap();
    let replayed = deltas(replay.oneshot(request(&prompt)).await.unwrap()).await;
    assert_eq!(
        replayed,
        [
            Ok(ModelDelta::Text("You sent [REDACTED]".into())),
            Ok(ModelDelta::Text("[REDACTED]".into()))
        ]
    );
}

/// The values of the usual key variables are secrets by default: a child process (this
/// test again) records with `OPENAI_API_KEY` and `ANTHROPIC_API_KEY` set to keys that no
/// pattern would catch.
#[tokio::test]
async fn the_key_variables_values_never_reach_the_file() {
    const OPENAI: &str = "local-openai-key-0123456789";
    const ANTHROPIC: &str = "local-anthropic-key-9876543210";
    if let Ok(path) = std::env::var("CASSETTE_TEST_RECORD_TO") {
        let live = ScriptedModel::new([Turn::text(format!("anthropic: {ANTHROPIC}"))]);
        let model = Cassette::new(&path)
            .mode(Mode::Record)
            .layer()
            .unwrap()
            .layer(live);
        let answer = model
            .oneshot(request(&format!("openai: {OPENAI}")))
            .await
            .unwrap();
        deltas(answer).await;
        return;
    }
    let path = folder("variables").join("calls.json");
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "the_key_variables_values_never_reach_the_file"])
        .env("CASSETTE_TEST_RECORD_TO", &path)
        .env("OPENAI_API_KEY", OPENAI)
        .env("ANTHROPIC_API_KEY", ANTHROPIC)
        .output()
        .unwrap();
    assert!(child.status.success(), "{child:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        !text.contains(OPENAI) && !text.contains(ANTHROPIC),
        "{text}"
    );
    assert!(text.contains("openai: [REDACTED]") && text.contains("anthropic: [REDACTED]"));
}

#[tokio::test]
async fn a_truncated_or_corrupt_cassette_is_a_typed_error() {
    let dir = folder("corrupt");
    let path = dir.join("whole.json");
    let live = ScriptedModel::new([Turn::stream(["a", "b"])]);
    let answer = recorder(&path)
        .layer(live)
        .oneshot(request("a"))
        .await
        .unwrap();
    deltas(answer).await;
    let whole = std::fs::read_to_string(&path).unwrap();

    let cut = dir.join("cut.json");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let error = ReplayModel::open(&cut).unwrap_err();
    let CassetteError::Corrupt { source, .. } = &error else {
        panic!("{error}")
    };
    assert!(source.is_eof(), "{error}");
    assert!(error.to_string().contains("cut.json is corrupt"), "{error}");

    let not_json = dir.join("not.json");
    std::fs::write(&not_json, "interactions: []").unwrap();
    assert!(matches!(
        ReplayModel::open(&not_json),
        Err(CassetteError::Corrupt { .. })
    ));

    let wrong_shape = dir.join("shape.json");
    std::fs::write(
        &wrong_shape,
        r#"{"version": 1, "interactions": [{"request": {}}]}"#,
    )
    .unwrap();
    assert!(matches!(
        ReplayModel::open(&wrong_shape),
        Err(CassetteError::Corrupt { .. })
    ));

    let future = dir.join("future.json");
    std::fs::write(&future, r#"{"version": 9, "interactions": []}"#).unwrap();
    assert!(matches!(
        ReplayModel::open(&future),
        Err(CassetteError::UnsupportedVersion { found: 9, .. })
    ));

    assert!(matches!(
        ReplayModel::open(dir.join("missing.json")),
        Err(CassetteError::Io { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_while_recording_are_all_kept_and_each_replays_its_own() {
    let dir = folder("concurrent");
    let path = dir.join("calls.json");
    // Answers with the request's text, a piece at a time, yielding between pieces.
    let live = service_fn(|req: ModelRequest| async move {
        let text = req.messages[0].content().to_owned();
        let pieces = vec![format!("{text}:"), "done".to_owned()];
        let deltas = futures::stream::iter(pieces).then(|piece| async move {
            tokio::task::yield_now().await;
            Ok::<_, BoxError>(ModelDelta::Text(piece))
        });
        Ok::<_, BoxError>(ModelResponse::stream(deltas))
    });
    let model = BoxModel::new(recorder(&path).layer(live));
    let calls = (0..24).map(|i| {
        let model = model.clone();
        tokio::spawn(async move {
            let answer = model.oneshot(request(&format!("call {i}"))).await.unwrap();
            answer.into_message().await.unwrap()
        })
    });
    for call in futures::future::join_all(calls).await {
        call.unwrap();
    }

    let replay = replayer(&path);
    assert_eq!(replay.len(), 24);
    for i in (0..24).rev() {
        let answer = replay
            .clone()
            .oneshot(request(&format!("call {i}")))
            .await
            .unwrap();
        let message = answer.into_message().await.unwrap();
        assert_eq!(message.content(), format!("call {i}:done"));
    }
    assert_eq!(replay.remaining(), 0);
    // Written whole each time, through a renamed temporary file: nothing else is left.
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, ["calls.json"]);
}

#[tokio::test]
async fn auto_records_when_the_file_is_missing_and_replays_when_it_is_there() {
    let path = folder("auto").join("calls.json");
    let cassette = Cassette::new(&path).mode(Mode::Auto);
    assert_eq!(cassette.resolved_mode().unwrap(), Mode::Record);
    let layer = cassette.clone().layer().unwrap();
    assert!(!layer.is_replaying());
    let live = ScriptedModel::new([Turn::text("recorded")]);
    layer.layer(live).oneshot(request("a")).await.unwrap();

    assert_eq!(cassette.resolved_mode().unwrap(), Mode::Replay);
    let layer = cassette.layer().unwrap();
    assert!(layer.is_replaying());
    let answer = layer
        .layer(ScriptedModel::new([]))
        .oneshot(request("a"))
        .await
        .unwrap();
    assert_eq!(answer.into_message().await.unwrap().content(), "recorded");
}

#[tokio::test]
async fn a_new_recording_replaces_the_old_one() {
    let path = folder("again").join("calls.json");
    let first = ScriptedModel::new([Turn::text("old"), Turn::text("old")]);
    let model = recorder(&path).layer(first);
    model.clone().oneshot(request("a")).await.unwrap();
    model.oneshot(request("b")).await.unwrap();
    assert_eq!(replayer(&path).len(), 2);

    let second = ScriptedModel::new([Turn::text("new")]);
    recorder(&path)
        .layer(second)
        .oneshot(request("c"))
        .await
        .unwrap();
    let replay = replayer(&path);
    assert_eq!(replay.len(), 1);
    let answer = replay.oneshot(request("c")).await.unwrap();
    assert_eq!(answer.into_message().await.unwrap().content(), "new");
}

#[test]
fn an_invalid_secret_pattern_is_a_typed_error() {
    let error = Scrubber::none().pattern("sk-(").unwrap_err();
    assert!(matches!(error, CassetteError::Pattern { .. }), "{error}");
}

#[test]
fn the_public_types_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<ReplayModel>();
    assert_send_sync::<tower_adk::testing::cassette::CassetteLayer>();
    assert_send_sync::<tower_adk::testing::cassette::CassetteModel<ScriptedModel>>();
    assert_send_sync::<CassetteError>();
    let _ = Arc::new(Scrubber::default());
}

#[tokio::test]
async fn a_cassette_that_cannot_be_written_fails_the_call_and_leaves_no_temporary_file() {
    let dir = folder("unwritable");
    // A folder where the file should be: the rename over it fails.
    let path = dir.join("calls.json");
    std::fs::create_dir(&path).unwrap();

    let whole = ScriptedModel::new([Turn::text("whole")]);
    let error = recorder(&path)
        .layer(whole)
        .oneshot(request("a"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error.downcast_ref::<CassetteError>(),
            Some(CassetteError::Io { .. })
        ),
        "{error}"
    );

    let streamed = ScriptedModel::new([Turn::stream(["one", "two"])]);
    let answer = recorder(&path)
        .layer(streamed)
        .oneshot(request("a"))
        .await
        .unwrap();
    let deltas = deltas(answer).await;
    assert_eq!(deltas.len(), 3, "{deltas:?}");
    let last = deltas.last().unwrap().as_ref().unwrap_err();
    assert!(last.contains("calls.json"), "{last}");

    let files: Vec<_> = (std::fs::read_dir(&dir).unwrap())
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, ["calls.json"]);
    assert!(path.is_dir());
}

/// `ADK_CASSETTE_MODE` read by a child process (this test again) for each value.
#[test]
fn the_mode_comes_from_adk_cassette_mode() {
    if let Ok(expected) = std::env::var("CASSETTE_TEST_EXPECT_MODE") {
        let mode = Mode::from_env().map_err(|e| e.to_string());
        assert_eq!(format!("{mode:?}"), expected);
        return;
    }
    let cases = [
        ("record", "Ok(Record)"),
        (" Replay ", "Ok(Replay)"),
        ("auto", "Ok(Auto)"),
        ("", "Ok(Auto)"),
        (
            "rewind",
            r#"Err("ADK_CASSETTE_MODE is \"rewind\"; expected `record`, `replay` or `auto`")"#,
        ),
    ];
    for (value, expected) in cases {
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "the_mode_comes_from_adk_cassette_mode"])
            .env("ADK_CASSETTE_MODE", value)
            .env("CASSETTE_TEST_EXPECT_MODE", expected)
            .output()
            .unwrap();
        assert!(child.status.success(), "{value:?}: {child:?}");
    }
}
