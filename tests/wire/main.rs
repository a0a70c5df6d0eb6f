//! The wire form of runs: every event of real runs survives JSON and back, the version
//! is checked, unknown types are skipped, and error codes are stable.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tower_adk::agent::ResumeError;
use tower_adk::checkpoint::{CheckpointError, CheckpointId};
use tower_adk::interrupt::Interrupt;
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool, failing_tool};
use tower_adk::wire::{WireError, WireEvent};
use tower_adk::{Agent, AgentError, AgentRequest, Tool, ToolInfo, ToolOutput, ToolRequest};

/// Every event of a run, in the wire form.
async fn wire_events(agent: &Agent, request: AgentRequest) -> Vec<WireEvent> {
    let events: Vec<_> = agent.run(request).collect().await;
    events
        .iter()
        .map(|event| match event {
            Ok(event) => WireEvent::from(event),
            Err(error) => WireEvent::from(error),
        })
        .collect()
}

fn round_trip(event: &WireEvent) -> WireEvent {
    let text = serde_json::to_string(event).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn asking_tool() -> Tool {
    Tool::from_fn(
        ToolInfo::new("pay", "Pays"),
        |request: ToolRequest| async move {
            if request.decision().is_none() {
                return Err(Interrupt::new(json!({"question": "Pay?"})).into());
            }
            Ok::<_, tower_adk::BoxError>(ToolOutput::new("paid"))
        },
    )
}

#[tokio::test]
async fn every_event_of_a_run_survives_json_and_back() {
    let model = ScriptedModel::new([
        Turn::stream(["Let me ", "look."])
            .with_call("c1", "chunks", json!({}))
            .with_call("c2", "broken", json!({})),
        Turn::call("c3", "pay", json!({})),
    ]);
    let agent = Agent::builder(model)
        .tool(chunk_tool("chunks", &["a", "b"], Duration::ZERO))
        .tool(failing_tool("broken", "no"))
        .tool(asking_tool())
        .build()
        .unwrap();
    let events = wire_events(&agent, AgentRequest::user("go").on_thread("t1")).await;

    let kinds: Vec<_> = events.iter().map(WireEvent::kind).collect();
    for kind in [
        "text_delta",
        "message",
        "filler",
        "tool_call_started",
        "tool_output_chunk",
        "tool_result",
        "interrupt",
        "completed",
    ] {
        assert!(kinds.contains(&kind), "no {kind} in {kinds:?}");
    }
    for event in &events {
        assert_eq!(&round_trip(event), event);
        let value = serde_json::to_value(event).unwrap();
        assert_eq!(value["v"], 1);
        assert_eq!(value["type"], event.kind());
    }
}

#[tokio::test]
async fn the_completed_event_carries_the_checkpoint_and_the_failed_calls_kind() {
    let model = ScriptedModel::new([
        Turn::call("c1", "broken", json!({})),
        Turn::call("c2", "pay", json!({})),
    ]);
    let agent = Agent::builder(model)
        .tool(failing_tool("broken", "no"))
        .tool(asking_tool())
        .build()
        .unwrap();
    let events = wire_events(&agent, AgentRequest::user("go")).await;
    let value = serde_json::to_value(events.last().unwrap()).unwrap();

    assert_eq!(value["type"], "completed");
    assert_eq!(value["status"], "interrupted");
    assert_eq!(value["tool_records"][0]["error"]["kind"], "tool_error");
    assert_eq!(value["interrupts"][0]["id"], "agent:agent/tool:c2");
    let checkpoint: CheckpointId = value["checkpoint"].as_str().unwrap().parse().unwrap();
    assert_eq!(checkpoint.version, 1);
}

#[tokio::test]
async fn a_failed_run_ends_with_an_error_event_with_its_code() {
    let agent = Agent::builder(ScriptedModel::new([Turn::error("down")]))
        .build()
        .unwrap();
    let events = wire_events(&agent, AgentRequest::user("go")).await;
    let last = serde_json::to_value(events.last().unwrap()).unwrap();

    assert_eq!(last["type"], "error");
    assert_eq!(last["code"], "model_failed");
    assert!(events.last().unwrap().is_last());
}

#[test]
fn a_reader_refuses_another_version_and_a_missing_one() {
    let v2 = json!({"v": 2, "type": "text_delta", "text": "hi"});
    let none = json!({"type": "text_delta", "text": "hi"});

    assert!(serde_json::from_value::<WireEvent>(v2).is_err());
    assert!(serde_json::from_value::<WireEvent>(none).is_err());
}

#[test]
fn a_reader_skips_types_and_ignores_fields_it_does_not_know() {
    let newer = json!({"v": 1, "type": "hologram_delta", "text": "hmm"});
    let extra = json!({"v": 1, "type": "text_delta", "text": "hi", "index": 3});

    let skipped: WireEvent = serde_json::from_value(newer).unwrap();
    let read: WireEvent = serde_json::from_value(extra).unwrap();

    assert_eq!(skipped, WireEvent::Unknown);
    assert_eq!(read, WireEvent::TextDelta { text: "hi".into() });
}

#[test]
fn error_codes_are_stable_and_distinct() {
    let id: CheckpointId = "t@1#r".parse().unwrap();
    let resume_errors = [
        ResumeError::Unknown(id.clone()),
        ResumeError::Used(id.clone(), 2),
        ResumeError::Ended(id.clone()),
        ResumeError::MissingDecision("i".into()),
        ResumeError::UnknownInterrupt("i".into()),
    ];
    let checkpoint_errors = [
        CheckpointError::ThreadBusy("t".into()),
        CheckpointError::ThreadInterrupted(id),
        CheckpointError::UnknownFormat { found: 9 },
        CheckpointError::Corrupt("x".into()),
        CheckpointError::MalformedId("x".into()),
    ];
    let codes: Vec<_> = (resume_errors.iter().map(ResumeError::code))
        .chain(checkpoint_errors.iter().map(CheckpointError::code))
        .collect();
    assert_eq!(
        codes,
        [
            "checkpoint_unknown",
            "checkpoint_used",
            "checkpoint_ended",
            "missing_decision",
            "unknown_interrupt",
            "thread_busy",
            "thread_interrupted",
            "unknown_format",
            "corrupt_checkpoint",
            "malformed_checkpoint_id",
        ]
    );
    let busy = AgentError::from(CheckpointError::ThreadBusy("t".into()));
    let wire = WireError::from(&busy);
    assert_eq!(wire.code, "thread_busy");
    let value: Value = serde_json::to_value(&wire).unwrap();
    assert_eq!(
        value,
        json!({"code": "thread_busy", "message": "another run is running on the thread `t`"})
    );
    assert_eq!(
        AgentError::Timeout {
            limit: Duration::from_secs(1)
        }
        .code(),
        "run_timeout"
    );
}

#[test]
fn a_decision_reads_with_who_made_it_and_writes_back_the_same() {
    let sent = json!({
        "v": 1, "type": "decided", "interrupt": "agent:bank/tool:c1",
        "decision": {"type": "reject", "reason": "not today"}, "by": "maria",
        "at": "2026-11-26T01:00:00Z", "at_ms": 1_795_000_000_000.5,
    });

    let read: WireEvent = serde_json::from_value(sent.clone()).unwrap();

    let WireEvent::Decided(decided) = &read else {
        panic!("not a decision: {read:?}");
    };
    assert_eq!(decided.by.subject(), "maria");
    assert_eq!(decided.interrupt, "agent:bank/tool:c1");
    assert_eq!(read.kind(), "decided");
    let mut written = serde_json::to_value(&read).unwrap();
    written["at_ms"] = sent["at_ms"].clone(); // the stream's, not the event's
    assert_eq!(written, sent);
}
