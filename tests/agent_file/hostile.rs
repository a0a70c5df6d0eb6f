//! Hostile files: nesting too deep for any stack, aliases that expand to billions of
//! nodes, a megabyte of unknown keys. Each is refused (or reported) with its place, in
//! work that grows with the file's size, never with what its aliases would expand to.

use std::time::{Duration, Instant};

use tower_adk::file::{AgentFile, FileReader, ProblemKind};

use super::support::{places, problems};

use ProblemKind::*;

const MODEL: &str = "model: {provider: scripted, turns: [{text: hi}]}\n";

/// A bound no honest read comes near on the slowest machine, only a runaway one: the
/// reads below take milliseconds, the inputs took minutes (or aborted) before.
const GENEROUS: Duration = Duration::from_secs(20);

/// Reads `text`, checking it takes less than [`GENEROUS`].
fn problems_in_time(text: &str) -> Vec<tower_adk::file::Problem> {
    let start = Instant::now();
    let found = problems(text);
    let took = start.elapsed();
    assert!(took < GENEROUS, "reading took {took:?}");
    found
}

#[test]
fn a_file_nested_100_000_levels_deep_is_refused_at_the_level_past_the_limit() {
    // `x:` holds a list of a list of ... (block style: YAML's flow style stops at 255).
    let text = format!("{MODEL}x:\n{}1\n", "- ".repeat(100_000));
    let found = problems_in_time(&text);
    // The top mapping is level 1, `x`'s list level 2: the list past the limit is the
    // (MAX_DEPTH - 1)th `- ` of the line.
    let column = 1 + 2 * (FileReader::MAX_DEPTH - 1);
    assert_eq!(places(&found), [(TooDeep, 3, column)]);
    assert!(
        found[0]
            .message()
            .contains(&FileReader::MAX_DEPTH.to_string()),
        "{}",
        found[0].message()
    );
}

#[test]
fn a_file_exactly_as_deep_as_the_limit_is_read() {
    // `x`'s list is level 2, the innermost list level MAX_DEPTH.
    let text = format!("{MODEL}x:\n{}1\n", "- ".repeat(FileReader::MAX_DEPTH - 1));
    let found = problems(&text);
    // Only the unknown key: the nesting is allowed.
    assert_eq!(places(&found), [(UnknownKey, 2, 1)]);
}

#[test]
fn an_alias_that_brings_a_deep_anchor_deeper_than_the_limit_is_refused() {
    // Each half is within the limit; the alias puts one inside the other.
    let half = FileReader::MAX_DEPTH / 2 + 1;
    let deep = format!("[{}1{}]", "[".repeat(half - 1), "]".repeat(half - 1));
    let text = format!(
        "{MODEL}a: &deep {deep}\nb: {}*deep{}\n",
        "[".repeat(half),
        "]".repeat(half)
    );
    let found = problems_in_time(&text);
    assert_eq!(places(&found), [(TooDeep, 3, 4 + half)]);
}

/// The billion laughs in YAML: each level a list of ten aliases of the level before.
fn alias_bomb(levels: usize) -> String {
    let mut text = format!("{MODEL}l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..=levels {
        let aliases = vec![format!("*l{}", level - 1); 10].join(", ");
        text.push_str(&format!("l{level}: &l{level} [{aliases}]\n"));
    }
    text
}

#[test]
fn an_alias_bomb_is_refused_at_the_alias_that_repeats_too_much() {
    // Seven levels: 466 bytes that expand to ten million nodes.
    let text = alias_bomb(7);
    assert!(text.len() < 600, "{}", text.len());
    let found = problems_in_time(&text);
    // Level 1's aliases repeat 10 * 11 nodes, level 2's 10 * 111: level 3's eighth
    // alias (of 1,111 nodes) brings the total past the 10,000 that aliases may repeat,
    // well before the levels that would take gigabytes. (Line 5, `*l2` number 8.)
    assert_eq!(places(&found), [(AliasExpansion, 5, 10 + 7 * 5)]);
    assert!(
        found[0]
            .message()
            .contains(&FileReader::MAX_ALIASED_NODES.to_string()),
        "{}",
        found[0].message()
    );
}

#[test]
fn aliases_that_repeat_a_little_are_read_as_copies() {
    let text = "\
model:
  provider: scripted
  turns:
    - &ask {call: {tool: lookup_order, arguments: {id: 7}}}
    - *ask
    - text: done
";
    let file = AgentFile::reader()
        .env(|_| None)
        .read_str(text, "agent.yaml");
    assert!(file.is_ok(), "{}", file.unwrap_err());
}

#[test]
fn a_megabyte_of_unknown_keys_is_reported_and_shown_in_time_linear_in_its_size() {
    let mut text = MODEL.to_owned();
    let mut keys = 0;
    while text.len() < 1_000_000 {
        text.push_str(&format!("key_{keys}: 1\n"));
        keys += 1;
    }
    let start = Instant::now();
    let errors = AgentFile::reader()
        .env(|_| None)
        .read_str(&text, "keys.yaml")
        .expect_err("unknown keys");
    assert_eq!(errors.problems().len(), keys);
    assert!(errors.problems().iter().all(|p| p.kind() == UnknownKey));
    let shown = errors.to_string();
    let took = start.elapsed();
    assert!(took < GENEROUS, "reading and showing took {took:?}");
    // Each problem shows its own line, the last one too.
    let last = format!("{} | key_{}: 1\n", keys + 1, keys - 1);
    assert!(shown.contains(&last), "{}", &shown[shown.len() - 500..]);
}
