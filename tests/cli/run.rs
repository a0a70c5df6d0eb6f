//! `adk run` in a real terminal: a message typed and the reply shown, a tool call shown
//! as it runs, an approval answered at the prompt, Ctrl-C cancelling a slow reply (the
//! chat goes on), Ctrl-D leaving.

use crate::support::{Terminal, repo_file};

/// `adk run` on the test desk agent, as a clerk (who may set the room).
fn desk_as_clerk() -> Terminal {
    let file = repo_file("tests/cli/agents/desk.yaml");
    let path = file.to_str().expect("a UTF-8 path");
    Terminal::start(env!("CARGO_BIN_EXE_adk"), &["run", path, "--role", "clerk"])
}

/// The desk agent with the city set and its room call waiting for approval at the
/// prompt.
fn desk_at_the_room_approval() -> Terminal {
    let term = desk_as_clerk();
    term.wait_for("Chatting with `desk`");
    term.type_line("hi");
    term.wait_for("Hello!");
    term.type_line("Paris");
    term.wait_for("✓ set_slot_city");
    term.press("C-c");
    term.wait_for("\ncancelled\n");
    term.type_line("A double room");
    term.wait_for("approve? [y/n/e(dit)]");
    term
}

#[test]
fn a_chat_in_a_terminal_with_an_approval_and_a_cancelled_reply() {
    let term = desk_as_clerk();
    term.wait_for("Chatting with `desk` on thread");

    term.type_line("hi");
    term.wait_for("Hello! Which city are you travelling to?");

    // A tool call shows as it runs, with its arguments and result; then the model's
    // next turn is slow, and Ctrl-C cancels it.
    term.type_line("Paris, and take your time");
    term.wait_for("Let me note the city.");
    term.wait_for(r#"→ set_slot_city {"value":"Paris"}"#);
    term.wait_for("✓ set_slot_city");
    term.press("C-c");
    term.wait_for("\ncancelled\n");
    let screen = term.wait_for_count("\n>", 3);
    assert!(
        !screen.contains("This answer takes ten minutes."),
        "{screen}"
    );

    // The chat goes on; the room waits for a person's approval, given at the prompt.
    term.type_line("A double room");
    term.wait_for("set_slot_room {\"value\":\"double\"}: Book this room?");
    term.wait_for("approve? [y/n/e(dit)]");
    term.type_line("y");
    let screen = term.wait_for("✓ set_slot_room");
    assert!(!screen.contains("the run failed"), "{screen}");
    term.wait_for_count("\n>", 4);

    term.press("C-d");
    assert_eq!(term.wait_exit(), 0, "{}", term.screen());
}

#[test]
fn a_rejected_approval_is_the_calls_result_and_one_left_unanswered_is_asked_again() {
    let term = desk_at_the_room_approval();
    // Ctrl-C at the question leaves the reply waiting: the next message asks again.
    term.press("C-c");
    term.wait_for("the reply waits for a decision");
    term.type_line("Any news?");
    term.wait_for("The last reply waits for a decision first.");
    term.wait_for_count("approve? [y/n/e(dit)]", 2);
    term.type_line("n");
    term.wait_for("reason (optional)>");
    term.type_line("no rooms left");
    let screen = term.wait_for("✗ set_slot_room");
    assert!(screen.contains("no rooms left"), "{screen}");
    // Then the new message runs.
    let screen = term.wait_for("Anything else?");
    assert!(!screen.contains("the run failed"), "{screen}");
    term.type_line("/exit");
    assert_eq!(term.wait_exit(), 0, "{}", term.screen());
}

#[test]
fn one_message_without_a_prompt() {
    let output = crate::support::adk_output(&[
        "run",
        "examples/agents/booking.yaml",
        "--message",
        "A room in Paris, please.",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains(r#"→ set_slot_city {"value":"Paris"}"#),
        "{stdout}"
    );
    assert!(
        stdout.contains("How many nights, and which room type would you like?"),
        "{stdout}"
    );
}

#[test]
fn json_prints_each_event_in_the_wire_form_the_server_streams() {
    let output = crate::support::adk_output(&[
        "run",
        "examples/agents/booking.yaml",
        "--message",
        "A room in Paris, please.",
        "--json",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let events: Vec<tower_adk::wire::WireEvent> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind()).collect();
    assert_eq!(kinds.first(), Some(&"message"), "{kinds:?}");
    assert!(kinds.contains(&"tool_result"), "{kinds:?}");
    let deltas = kinds.iter().filter(|k| **k == "text_delta").count();
    assert_eq!(deltas, 3, "the streamed turn's three chunks: {kinds:?}");
    assert_eq!(kinds.last(), Some(&"completed"), "{kinds:?}");
    assert!(events.last().is_some_and(|e| e.is_last()));

    let refused = crate::support::adk_output(&["run", "examples/agents/booking.yaml", "--json"]);
    assert_eq!(refused.status.code(), Some(2), "--json needs --message");
}

#[test]
fn an_approval_edited_at_the_prompt_runs_with_the_new_arguments() {
    let term = desk_at_the_room_approval();
    term.type_line("e");
    // The call's arguments are there to edit: Ctrl-U clears them.
    term.wait_for(r#"arguments> {"value":"double"}"#);
    term.press("C-u");
    term.type_line(r#"{"value": "single"}"#);
    let screen = term.wait_for("✓ set_slot_room");
    assert!(
        screen.contains(r#"The slot `room` is set to "single""#),
        "{screen}"
    );
    term.press("C-d");
    assert_eq!(term.wait_exit(), 0, "{}", term.screen());
}

#[test]
fn the_approval_prompt_offers_only_the_decisions_the_file_allows() {
    let adk = env!("CARGO_BIN_EXE_adk");
    let file = repo_file("tests/cli/agents/strict.yaml");
    let term = Terminal::start(adk, &["run", file.to_str().expect("a UTF-8 path")]);
    term.wait_for("Chatting with `strict`");
    term.type_line("A double room");
    let screen = term.wait_for("approve? [y/n] ");
    assert!(!screen.contains("e(dit)"), "{screen}");
    // Editing is not offered: `e` is asked again.
    term.type_line("e");
    term.wait_for_count("approve? [y/n] ", 2);
    term.type_line("y");
    // Setting the only slot ends the run.
    term.wait_for("✓ set_slot_room");
    term.type_line("/exit");
    assert_eq!(term.wait_exit(), 0, "{}", term.screen());
}

#[test]
fn one_message_left_at_an_approval_shows_where_the_run_waits() {
    let output = crate::support::adk_output(&[
        "run",
        "tests/cli/agents/strict.yaml",
        "--thread",
        "t-strict",
        "--message",
        "A double room",
    ]);
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("the run waits for a decision on thread t-strict at checkpoint "),
        "{shown}"
    );
    assert!(!shown.contains("next message"), "{shown}");
}

/// `adk ARGS | head -1`: the first line of standard output, then the pipe closed while
/// `adk` still has lines to write; its exit status and standard error.
fn first_line_then_close(args: &[&str]) -> (String, Option<i32>, String) {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;
    use std::time::Instant;

    let mut child = crate::support::adk()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("adk runs");
    let mut first = String::new();
    {
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        stdout.read_line(&mut first).expect("a line");
        // Dropped here: the pipe's reading end closes, as `head -1` exits.
    }
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        if start.elapsed() > crate::support::PATIENCE {
            let _ = child.kill();
            panic!("adk kept running after its standard output closed");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    (first, status.code(), stderr)
}

#[test]
fn json_piped_into_head_ends_quietly_when_the_pipe_closes() {
    let (first, status, stderr) = first_line_then_close(&[
        "run",
        "tests/cli/agents/slow.yaml",
        "--message",
        "A room in Paris",
        "--json",
    ]);
    assert!(first.starts_with('{'), "{first}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn a_chat_piped_into_head_ends_quietly_when_the_pipe_closes() {
    let (first, status, stderr) = first_line_then_close(&[
        "run",
        "tests/cli/agents/slow.yaml",
        "--message",
        "A room in Paris",
    ]);
    assert!(first.contains("set_slot_city"), "{first}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(stderr, "");
}

/// `printf 'line\n...' | adk run FILE`: a chat whose messages come from a pipe.
fn piped_chat(file: &str, input: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;

    let mut child = crate::support::adk()
        .args(["run", file])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("adk runs");
    let mut stdin = child.stdin.take().expect("piped");
    stdin.write_all(input.as_bytes()).expect("written");
    drop(stdin);
    child.wait_with_output().expect("adk ends")
}

#[test]
fn a_piped_booking_chat_keeps_its_slots_from_message_to_message() {
    let output = piped_chat(
        "examples/agents/booking.yaml",
        "A room in Paris\n3 nights, double\n",
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    // The second message sets the nights and the room; the city of the first is kept,
    // so the booking is made there.
    assert!(
        stdout.contains("I have everything I need:\n- city: Paris\n- nights: 3\n- room: double"),
        "{stdout}{stderr}"
    );
    assert!(!stdout.contains("Not set yet: city"), "{stdout}");
}

#[test]
fn a_piped_chat_with_a_failed_run_exits_1() {
    // The booking's scripted model has three turns: a third message finds none left.
    let output = piped_chat(
        "examples/agents/booking.yaml",
        "A room in Paris\n3 nights, double\nAnd breakfast?\n",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the run failed"), "{stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
}

#[test]
fn a_run_that_a_tool_ends_shows_the_tools_final_message() {
    // Setting the only slot (once approved) ends the run with the slots' message.
    let output = piped_chat("tests/cli/agents/strict.yaml", "A double room\ny\n");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("✓ set_slot_room: The slot `room` is set to \"double\".\nI have everything I need:\n- room: double\n"),
        "{stdout}"
    );
}
