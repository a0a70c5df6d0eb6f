//! `adk eval`: the booking example passes (exit 0); a set whose scores fall under their
//! thresholds exits 1; a broken set shows each problem at its line and column (exit 2);
//! the JSON and HTML reports, the baseline comparison, and a judge from the file.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::adk_output;

const AGENT: &str = "examples/agents/booking.yaml";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A path for a test's output under the target folder.
fn out(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("eval");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs `adk eval ARGS`, checks its exit status, and gives stdout and stderr.
fn eval(args: &[&str], status: i32) -> (String, String) {
    let output = adk_output(&[&["eval"], args].concat());
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(status), "{stdout}{stderr}");
    (stdout, stderr)
}

fn read_json(path: &PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_booking_example_passes_with_a_table_json_and_html() {
    let (json, html) = (out("booking.json"), out("booking.html"));
    let (stdout, _) = eval(
        &[
            AGENT,
            "examples/evals/booking.yaml",
            "--json",
            json.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
            "--concurrency",
            "2",
        ],
        0,
    );
    assert!(stdout.starts_with("case "), "{stdout}");
    let row = stdout
        .lines()
        .find(|l| l.starts_with("book_a_room"))
        .unwrap();
    assert!(
        row.contains("1.00 ≥1.00  1.00 ≥1.00") && row.ends_with("pass"),
        "{stdout}"
    );
    assert!(stdout.contains("2 of 2 cases passed"), "{stdout}");

    let report = read_json(&json);
    let case = &report["cases"][0];
    assert_eq!(case["id"], "book_a_room");
    assert_eq!(case["trajectory_score"], 1.0);
    assert_eq!(case["turns"][1]["tool_calls"][0]["name"], "set_slot_nights");
    assert_eq!(case["model_calls"], 3);
    // Each case played the script from its start.
    assert_eq!(
        report["cases"][1]["turns"][0]["tool_calls"][0]["args"]["value"],
        "Paris"
    );

    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    for plot in ["scores", "latency", "tokens"] {
        assert!(
            page.contains(&format!("<svg id=\"{plot}\"")),
            "no {plot} plot"
        );
    }
    assert!(page.contains("<title>book_a_room: trajectory 1</title>"));
    assert!(
        !page.contains("<script") && !page.contains("src=\"http"),
        "self-contained"
    );
}

#[test]
fn a_score_under_its_threshold_exits_1_and_says_which() {
    let json = out("failing.json");
    let (stdout, _) = eval(
        &[
            AGENT,
            "tests/cli/evals/failing.yaml",
            "--json",
            json.to_str().unwrap(),
        ],
        1,
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("book_a_room"))
        .unwrap();
    assert!(
        row.contains("0.00 ≥1.00  0.50 ≥1.00") && row.ends_with("FAIL"),
        "{stdout}"
    );
    // Half of its response matchers, at its own threshold of 0.5: it passes.
    let row = stdout
        .lines()
        .find(|l| l.starts_with("asks_for_what_is_missing"))
        .unwrap();
    assert!(
        row.contains("0.50 ≥0.50") && row.ends_with("pass"),
        "{stdout}"
    );
    assert!(stdout.contains("1 of 2 cases passed"), "{stdout}");

    let report = read_json(&json);
    let detail = report["cases"][0]["turns"][0]["trajectory"]["detail"]
        .as_str()
        .unwrap();
    assert!(
        detail.contains("argument `value`: \"Paris\" does not match \"Lyon\""),
        "{detail}"
    );
}

#[test]
fn a_baseline_shows_each_change_in_the_table_and_the_html() {
    let (base, html) = (out("baseline.json"), out("compared.html"));
    eval(
        &[
            AGENT,
            "examples/evals/booking.yaml",
            "--json",
            base.to_str().unwrap(),
        ],
        0,
    );
    let (stdout, _) = eval(
        &[
            AGENT,
            "tests/cli/evals/failing.yaml",
            "--baseline",
            base.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
        1,
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("book_a_room"))
        .unwrap();
    assert!(
        row.contains("0.00 ≥1.00 (-1.00)") && row.contains("0.50 ≥1.00 (-0.50)"),
        "{stdout}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg id=\"baseline-scores\""));
    assert!(page.contains("<svg id=\"baseline-latency\""));
    assert!(page.contains("<title>book_a_room: trajectory, baseline 1</title>"));
    assert!(page.contains("<title>book_a_room: trajectory, now 0</title>"));

    // A baseline that is not a report is a wrong input.
    let (_, stderr) = eval(
        &[
            AGENT,
            "examples/evals/booking.yaml",
            "--baseline",
            "examples/evals/booking.yaml",
        ],
        2,
    );
    assert!(
        stderr.contains("not an `adk eval --json` report"),
        "{stderr}"
    );
}

#[test]
fn a_judge_from_the_file_scores_under_its_threshold() {
    let json = out("judged.json");
    eval(
        &[
            AGENT,
            "tests/cli/evals/judged.yaml",
            "--json",
            json.to_str().unwrap(),
        ],
        1,
    );
    let check = &read_json(&json)["cases"][0]["turns"][0]["response_checks"][0];
    assert_eq!(check["kind"], "judge");
    assert_eq!(check["score"], 0.4);
    assert_eq!(check["detail"], "Too terse.");
}

#[test]
fn a_broken_eval_set_shows_every_problem_at_its_place_and_exits_2() {
    let (stdout, stderr) = eval(&[AGENT, "tests/cli/evals/broken.yaml"], 2);
    assert!(stdout.is_empty(), "nothing ran: {stdout}");
    let at = |place: &str| format!("--> tests/cli/evals/broken.yaml:{place}");
    let expected = [
        (
            "2:39",
            "error[invalid_value]: a threshold is from 0 to 1, found 1.5",
        ),
        (
            "7:9",
            "error[unknown_key]: unknown key `tool_use` in a turn",
        ),
        (
            "8:27",
            "error[invalid_value]: not a valid regular expression: unclosed group",
        ),
        (
            "9:9",
            "error[duplicate_key]: the case id `one` is used already, at 4:9",
        ),
        ("13:18", "error[invalid_value]: unknown match `whatever`"),
        (
            "14:56",
            "error[unknown_key]: unknown key `$regx` in an argument matcher",
        ),
        (
            "15:20",
            "error[missing_key]: a `judge` matcher needs the set's `judge:` model",
        ),
    ];
    for (place, message) in expected {
        let found = stderr
            .find(message)
            .unwrap_or_else(|| panic!("{message}:\n{stderr}"));
        let after = &stderr[found..];
        assert!(
            after
                .lines()
                .nth(1)
                .unwrap()
                .trim_start()
                .starts_with(&at(place)),
            "{message} at {place}:\n{stderr}"
        );
    }
    assert!(stderr.contains("did you mean `tool_uses`?"), "{stderr}");
    assert!(
        stderr.contains("error: tests/cli/evals/broken.yaml has 7 problems"),
        "{stderr}"
    );
}

/// Runs `adk eval ARGS` with `ADK_CASSETTE_MODE` set, and gives its exit status and stdout.
fn eval_with_cassettes(mode: &str, args: &[&str]) -> (Option<i32>, String) {
    let output = crate::support::adk()
        .arg("eval")
        .args(args)
        .env("ADK_CASSETTE_MODE", mode)
        .output()
        .expect("adk runs");
    (
        output.status.code(),
        text(&output.stdout) + &text(&output.stderr),
    )
}

#[test]
fn cases_record_to_cassettes_replay_them_and_fail_with_a_diff_when_the_prompt_drifts() {
    let dir = out("cassettes");
    let _ = std::fs::remove_dir_all(&dir);
    let set = "examples/evals/booking.yaml";
    let recorded = [
        "--cassettes",
        dir.to_str().unwrap(),
        "--clock",
        "2026-03-29T09:30:00Z",
    ];

    let (status, output) = eval_with_cassettes("record", &[&[AGENT, set][..], &recorded].concat());
    assert_eq!(status, Some(0), "{output}");
    let cassette = std::fs::read_to_string(dir.join("book_a_room.json")).unwrap();
    // The fixed clock is what the prompt said (09:30 UTC in the file's New York).
    assert!(
        cassette.contains("Sunday, 2026-03-29 05:30 (America/New_York)"),
        "{cassette}"
    );
    assert!(dir.join("asks_for_what_is_missing.json").is_file());

    let (status, output) = eval_with_cassettes("replay", &[&[AGENT, set][..], &recorded].concat());
    assert_eq!(status, Some(0), "{output}");
    assert!(output.contains("2 of 2 cases passed"), "{output}");

    // Another day: every case's first request differs from its recording.
    let other_day = [
        "--cassettes",
        dir.to_str().unwrap(),
        "--clock",
        "2026-03-30T09:30:00Z",
    ];
    let (status, output) = eval_with_cassettes("replay", &[&[AGENT, set][..], &other_day].concat());
    assert_eq!(status, Some(1), "{output}");
    assert!(output.contains("does not match the cassette"), "{output}");
    assert!(
        output.contains("first difference at `messages[0].content`"),
        "{output}"
    );
    assert!(
        output.contains("-      \"content\": \"You book hotel rooms."),
        "{output}"
    );
    assert!(output.contains("Monday, 2026-03-30"), "{output}");

    // Replaying what was never recorded fails the case; it does not call the model.
    let (status, output) = eval_with_cassettes(
        "replay",
        &[
            AGENT,
            set,
            "--cassettes",
            out("no-cassettes").to_str().unwrap(),
        ],
    );
    assert_eq!(status, Some(1), "{output}");
}

#[test]
fn a_case_id_that_is_no_plain_file_name_names_no_cassette() {
    let set = out("escaping.yaml");
    std::fs::write(
        &set,
        "name: escaping\ncases:\n  - id: ../outside\n    conversation:\n      - user: hi\n",
    )
    .unwrap();
    let dir = out("escaping-cassettes");
    let (status, output) = eval_with_cassettes(
        "record",
        &[
            AGENT,
            set.to_str().unwrap(),
            "--cassettes",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(status, Some(1), "{output}");
    assert!(output.contains("cannot name a cassette"), "{output}");
    assert!(!out("outside.json").exists());
}

#[test]
fn a_wrong_cassette_mode_is_a_usage_error() {
    let (status, output) = eval_with_cassettes(
        "sometimes",
        &[
            AGENT,
            "examples/evals/booking.yaml",
            "--cassettes",
            out("mode").to_str().unwrap(),
        ],
    );
    assert_eq!(status, Some(2), "{output}");
    assert!(output.contains("ADK_CASSETTE_MODE"), "{output}");
}

#[test]
fn an_eval_set_of_two_documents_is_refused_at_the_second() {
    let set = out("two-documents.yaml");
    std::fs::write(
        &set,
        "name: one\ncases:\n  - id: a\n    conversation:\n      - user: hi\n---\nname: two\n",
    )
    .unwrap();
    let (_, stderr) = eval(&[AGENT, set.to_str().unwrap()], 2);
    assert!(
        stderr.contains("error[syntax]: an eval set holds one YAML document"),
        "{stderr}"
    );
    assert!(stderr.contains("two-documents.yaml:7:1"), "{stderr}");
}
