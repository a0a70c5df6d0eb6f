//! The examples' own logic, run as tests with scripted input: what `echo approve |
//! cargo run --example approval` does, without a second cargo build.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// The example's `main` is not called here.
#[allow(dead_code)]
#[path = "../../examples/approval.rs"]
mod approval;

// The example's `main` is not called here.
#[allow(dead_code)]
#[path = "../../examples/sub_agents.rs"]
mod sub_agents;

#[allow(dead_code)]
#[path = "../../examples/structured_output.rs"]
mod structured_output;

#[allow(dead_code)]
#[path = "../../examples/long_conversation.rs"]
mod long_conversation;

#[allow(dead_code)]
#[path = "../../examples/vision.rs"]
mod vision;

#[cfg(all(feature = "config", feature = "a2a-client", feature = "server"))]
#[allow(dead_code)]
#[path = "../../examples/a2a.rs"]
mod a2a;

use tower_adk::{RunStatus, ToolErrorKind};

/// Runs the approval example's session with `input` on stdin; its result and output.
async fn approval_session(input: &str, args: &[&str]) -> (Option<tower_adk::AgentResult>, String) {
    let args = approval::Args::parse(args.iter().map(|a| (*a).to_owned())).unwrap();
    let mut out = Vec::new();
    let result = approval::session(&args, &mut input.as_bytes(), &mut out)
        .await
        .unwrap();
    (result, String::from_utf8(out).unwrap())
}

#[tokio::test]
async fn approval_example_refunds_when_the_person_approves() {
    let (result, out) = approval_session("approve\n", &[]).await;
    let result = result.unwrap();
    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(
        result.tool_record("c1").unwrap().content,
        "refunded 250 on order 7"
    );
    assert!(out.contains("Refund 250 on order 7?"), "{out}");
}

#[tokio::test]
async fn approval_example_edits_rejects_and_treats_no_answer_as_a_rejection() {
    let (edited, _) = approval_session("edit {\"order\": 7, \"amount\": 100}\n", &[]).await;
    let record = edited.unwrap().tool_record("c1").unwrap().clone();
    assert_eq!(record.content, "refunded 100 on order 7");

    for input in ["reject refunds over 200 go to finance\n", ""] {
        let (rejected, out) = approval_session(input, &[]).await;
        let record = rejected.unwrap().tool_record("c1").unwrap().clone();
        let error = record.error.unwrap();
        assert_eq!(error.kind(), ToolErrorKind::Denied);
        assert!(out.contains("not run"), "{out}");
    }
}

#[tokio::test]
async fn approval_example_can_leave_the_run_for_later() {
    let (result, out) = approval_session("", &["--ask-later"]).await;
    assert!(result.is_none());
    assert!(out.contains("resume with: --resume "), "{out}");
}

/// The run stops in one session and is resumed in another, through a SQLite file: as
/// two processes would, each with its own agent.
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn approval_example_resumes_in_a_second_session_through_the_sqlite_file() {
    let db = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("approval-{}.db", std::process::id()));
    let db = db.to_str().unwrap();
    let (left, out) = approval_session("", &["--checkpoint-db", db, "--ask-later"]).await;
    assert!(left.is_none());
    let id = out.split("--resume ").nth(1).unwrap().trim().to_owned();

    let (done, out) =
        approval_session("approve\n", &["--checkpoint-db", db, "--resume", &id]).await;
    let done = done.unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(
        done.tool_record("c1").unwrap().content,
        "refunded 250 on order 7"
    );
    assert!(out.contains("I have taken care of order 7."), "{out}");

    // The checkpoint is used: a third session cannot run the refund again, and says so
    // before it asks for a decision.
    let args = ["--checkpoint-db", db, "--resume", &id].map(String::from);
    let args = approval::Args::parse(args.into_iter()).unwrap();
    let mut out = Vec::new();
    let again = approval::session(&args, &mut "approve\n".as_bytes(), &mut out).await;
    let error = again.unwrap_err().to_string();
    assert!(error.contains("was used already"), "{error}");
    let out = String::from_utf8(out).unwrap();
    assert!(
        !out.contains("approve / edit"),
        "asked before saying so: {out}"
    );
    let _ = std::fs::remove_file(db);
}

/// A second session shows the question the run waits at, read from the checkpoint.
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn approval_example_resumed_in_a_second_session_shows_the_question() {
    let db = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("approval-question-{}.db", std::process::id()));
    let db = db.to_str().unwrap();
    let (_, out) = approval_session("", &["--checkpoint-db", db, "--ask-later"]).await;
    let id = out.split("--resume ").nth(1).unwrap().trim().to_owned();
    let (done, out) =
        approval_session("approve\n", &["--checkpoint-db", db, "--resume", &id]).await;
    assert_eq!(done.unwrap().status, RunStatus::Completed);
    assert!(out.contains("Refund 250 on order 7?"), "{out}");
    let _ = std::fs::remove_file(db);
}

#[tokio::test]
async fn approval_example_asks_again_after_an_edit_the_tool_refuses() {
    let input =
        "edit {\"order\": \"seven\", \"amount\": 100}\nedit {\"order\": 7, \"amount\": 100}\n";
    let (result, out) = approval_session(input, &[]).await;
    let result = result.unwrap();
    assert_eq!(result.status, RunStatus::Completed);
    assert_eq!(
        result.tool_record("c1").unwrap().content,
        "refunded 100 on order 7"
    );
    // The refusal in words, not in Debug form, then the question again.
    assert!(
        out.contains("the edited arguments of `agent:support/tool:c1` are invalid: "),
        "{out}"
    );
    assert!(!out.contains("InvalidEdit"), "{out}");
    assert_eq!(out.matches("approve / edit {json}").count(), 2, "{out}");
}

#[tokio::test]
async fn approval_example_asks_again_after_an_answer_it_cannot_read() {
    let (result, out) = approval_session("maybe\nedit {oops\napprove\n", &[]).await;
    assert_eq!(result.unwrap().status, RunStatus::Completed);
    assert!(
        out.contains("`maybe`: answer approve, edit, reject or respond"),
        "{out}"
    );
    assert_eq!(out.matches("approve / edit {json}").count(), 3, "{out}");
}

#[tokio::test]
async fn sub_agents_example_refuses_a_viewer_refunds_for_an_admin_hands_off_and_researches() {
    let mut out = Vec::new();
    let outcome = sub_agents::session(&mut out).await.unwrap();
    let out = String::from_utf8(out).unwrap();

    // The viewer's billing run was not offered the refund tool: no interrupt, no refund.
    assert_eq!(outcome.viewer.status, RunStatus::Completed);
    assert!(
        out.contains("[billing] <- refund: FAILED [unknown_tool]"),
        "{out}"
    );
    // The admin's refund waited for the approval, asked through support, then ran.
    assert_eq!(outcome.admin.status, RunStatus::Completed);
    assert!(
        out.contains("?? agent:support/tool:c1/agent:billing/tool:b1 asks"),
        "{out}"
    );
    assert!(
        out.contains("[billing] <- refund: refunded 40 EUR"),
        "{out}"
    );
    assert_eq!(
        outcome.handoff.final_message.content(),
        "Billing here: refund sent."
    );
    assert_eq!(
        outcome.research.final_message.content(),
        "Tower's layers compose into services."
    );
}

/// The typed-answer example runs to its end: each of its steps returns an error if a
/// ticket does not come out of the retries.
#[tokio::test]
async fn the_structured_output_example_runs_to_its_end() {
    structured_output::demo().await.unwrap();
}

/// The 200-turn example runs to its end on its thread, with its summaries and fallback,
/// its history never over its 4,000-token budget (it fails otherwise).
#[tokio::test]
async fn the_long_conversation_example_runs_to_its_end() {
    long_conversation::demo().await.unwrap();
}

/// The `a2a` example: the support agent's approval, asked behind A2A, stops the
/// concierge's run under the remote interrupt's own id; approving it resumes both runs,
/// and the remote refund's closing answer comes back as the concierge's tool result.
#[cfg(all(feature = "config", feature = "a2a-client", feature = "server"))]
#[tokio::test]
async fn a2a_example_carries_the_remote_approval_across_and_back() {
    let (stopped, done) = a2a::demo().await.unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    let ids: Vec<_> = stopped.interrupts.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["agent:concierge/tool:c1/agent:support/tool:call_1"]);
    assert_eq!(
        stopped.interrupts[0].payload["description"],
        "Refund this order?"
    );
    assert_eq!(done.status, RunStatus::Completed);
    let answer = done.tool_record("c1").unwrap();
    assert!(answer.error.is_none(), "{answer:?}");
    assert_eq!(
        answer.content,
        "Order 7 is refunded; 25 EUR are on their way back to you."
    );
}

/// The README's Rust examples are whole programs, shown whole: a reader pastes what
/// they see. (The README's code blocks run as doc tests of the facade crate, where
/// rustdoc would hide a line that starts with `# `.)
#[test]
fn the_readmes_rust_examples_are_whole_programs_with_no_hidden_lines() {
    let readme = include_str!("../../README.md");
    // Outside a code block: `None`; inside one: whether it is Rust, and where it starts.
    let mut block: Option<(bool, usize)> = None;
    let mut programs = 0;
    let mut has_main = false;
    for (number, line) in readme.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if let Some(fence) = line.strip_prefix("```") {
            match block.take() {
                Some((true, start)) => {
                    assert!(
                        has_main,
                        "README.md:{start}: a Rust example without `fn main`"
                    );
                    programs += 1;
                }
                Some((false, _)) => {}
                None => {
                    block = Some((fence.starts_with("rust"), number));
                    has_main = false;
                }
            }
            continue;
        }
        if let Some((true, _)) = block {
            let hidden = line == "#" || line.starts_with("# ");
            assert!(!hidden, "README.md:{number}: a hidden line: {line}");
            has_main |= line.contains("fn main(");
        }
    }
    assert!(programs >= 6, "{programs} Rust examples found");
}

/// The vision example's image reaches the model as an image part, its bytes intact, after
/// the question; the answer is the model's.
#[tokio::test]
async fn vision_example_sends_the_image_as_a_part_and_prints_the_answer() {
    use std::path::Path;
    use tower::ServiceExt;
    use tower_adk::content::{Part, Source};

    let path = Path::new(vision::DEFAULT_IMAGE);
    assert_eq!(vision::media_type(path), Some("image/png"));
    assert_eq!(vision::media_type(Path::new("notes.txt")), None);
    assert_eq!(vision::media_type(Path::new("a.JPEG")), Some("image/jpeg"));
    let bytes = std::fs::read(path).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG file");

    let script = vision::scripted();
    let model = tower_adk::model::BoxModel::new(script.clone().map_err(Into::into));
    let image = Source::from_bytes("image/png", &bytes);
    let result = vision::ask(model, image.clone(), "What is it?")
        .await
        .unwrap();
    assert_eq!(result.status, RunStatus::Completed);
    assert!(result.final_message.content().contains("red square"));

    let request = &script.requests()[0];
    let user = request.messages.last().unwrap();
    assert_eq!(
        user.parts().to_vec(),
        [Part::text("What is it?"), Part::image(image)]
    );
}

// The example's `main` is not called here: its agent runs from the cassette recorded
// from the SmolLM2 server, with no server.
#[cfg(all(feature = "openai", feature = "cassette"))]
#[allow(dead_code)]
#[path = "../../examples/local_llm.rs"]
mod local_llm;

#[cfg(all(feature = "openai", feature = "cassette"))]
#[tokio::test]
async fn local_llm_example_runs_from_its_smollm2_cassette() {
    use tower_adk::model::UsageMeter;
    use tower_adk::testing::cassette::ReplayModel;

    let replay = ReplayModel::open(local_llm::CASSETTE).unwrap();
    let agent = local_llm::agent(replay.clone()).unwrap();
    let usage = UsageMeter::new();
    let result = agent.run(local_llm::request(&usage)).await.unwrap();

    assert_eq!(result.tool_records[0].name, "weather");
    assert!(result.tool_records[0].error.is_none());
    assert!(!result.final_message.content().trim().is_empty());
    assert_eq!(replay.remaining(), 0, "every recorded call was made");
    assert_eq!(result.model_calls, replay.len());
}
