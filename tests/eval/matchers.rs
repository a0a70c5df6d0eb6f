//! Response and argument matchers, each kind passing and failing.

use serde_json::json;
use tower_adk::eval::{ArgMatcher, EvalSet, ResponseMatcher};

fn score(matcher: ResponseMatcher, answer: &str) -> f64 {
    matcher.check(answer).expect("not a judge").score
}

#[test]
fn exact_matches_the_whole_answer_trimmed() {
    let matcher = ResponseMatcher::Exact("Booked.".into());
    assert_eq!(score(matcher.clone(), "  Booked.\n"), 1.0);
    assert_eq!(score(matcher, "Booked. Anything else?"), 0.0);
}

#[test]
fn contains_finds_its_text_anywhere() {
    let matcher = ResponseMatcher::Contains("3 nights".into());
    assert_eq!(score(matcher.clone(), "Paris, 3 nights, double."), 1.0);
    assert_eq!(score(matcher, "Paris, three nights."), 0.0);
}

#[test]
fn regex_searches_the_answer_and_an_invalid_one_scores_zero_with_the_reason() {
    let matcher = ResponseMatcher::Regex(r"(?i)^how many \w+\?$".into());
    assert_eq!(score(matcher.clone(), "How many nights?"), 1.0);
    assert_eq!(score(matcher, "How many nights? And the room?"), 0.0);

    let broken = ResponseMatcher::Regex("(unclosed".into());
    assert_eq!(
        broken.invalid().unwrap(),
        "not a valid regular expression: unclosed group"
    );
    let check = broken.check("anything").unwrap();
    assert_eq!(check.score, 0.0);
    assert_eq!(
        check.detail,
        "not a valid regular expression: unclosed group"
    );
}

#[test]
fn json_schema_reads_the_answer_as_json_even_in_a_fenced_block() {
    let schema = json!({
        "type": "object",
        "properties": {"nights": {"type": "integer", "minimum": 1}},
        "required": ["nights"]
    });
    let matcher = ResponseMatcher::JsonSchema(schema);
    assert_eq!(score(matcher.clone(), r#"{"nights": 3}"#), 1.0);
    assert_eq!(score(matcher.clone(), "```json\n{\"nights\": 2}\n```"), 1.0);

    let check = matcher.check(r#"{"nights": 0}"#).unwrap();
    assert_eq!(check.score, 0.0);
    assert!(check.detail.starts_with("at `/nights`"), "{}", check.detail);
    let check = matcher.check("three nights").unwrap();
    assert!(check.detail.starts_with("not JSON"), "{}", check.detail);
}

#[test]
fn each_argument_matcher_accepts_and_refuses() {
    let cases = [
        (
            ArgMatcher::Equals(json!("Paris")),
            json!("Paris"),
            json!("paris"),
        ),
        (ArgMatcher::Any, json!(null), json!(null)),
        (
            ArgMatcher::Regex("^Par".into()),
            json!("Paris"),
            json!("Lyon"),
        ),
        (ArgMatcher::Regex("^3$".into()), json!("3"), json!(3)),
        (
            ArgMatcher::Contains("ar".into()),
            json!("Paris"),
            json!("Lyon"),
        ),
        (
            ArgMatcher::Contains("wifi".into()),
            json!(["wifi", "pool"]),
            json!(["pool"]),
        ),
        (
            ArgMatcher::Schema(json!({"type": "number", "minimum": 1})),
            json!(3),
            json!(0),
        ),
    ];
    for (matcher, good, bad) in cases {
        assert!(
            matcher.matches(Some(&good)),
            "{matcher:?} should accept {good}"
        );
        if matcher != ArgMatcher::Any {
            assert!(
                !matcher.matches(Some(&bad)),
                "{matcher:?} should refuse {bad}"
            );
        }
        // An argument the call does not have matches nothing, not even `$any`.
        assert!(
            !matcher.matches(None),
            "{matcher:?} should refuse a missing argument"
        );
    }
}

#[test]
fn argument_matchers_are_read_from_dollar_keys_and_plain_values_are_equal() {
    let read = |value| serde_json::from_value::<ArgMatcher>(value);
    assert_eq!(read(json!({"$any": true})).unwrap(), ArgMatcher::Any);
    assert_eq!(
        read(json!({"$contains": "ar"})).unwrap(),
        ArgMatcher::Contains("ar".into())
    );
    // A mapping of a key without `$`, or of two keys, is a plain value.
    assert_eq!(
        read(json!({"regex": "x"})).unwrap(),
        ArgMatcher::Equals(json!({"regex": "x"}))
    );
    let error = read(json!({"$regx": "x"})).unwrap_err().to_string();
    assert!(
        error.contains("unknown argument matcher `$regx`"),
        "{error}"
    );
    // Written back the same way.
    assert_eq!(
        serde_json::to_value(ArgMatcher::Regex("^P".into())).unwrap(),
        json!({"$regex": "^P"})
    );
}

#[test]
fn an_eval_set_reads_from_json_with_default_thresholds() {
    let set: EvalSet = serde_json::from_value(json!({
        "name": "s",
        "cases": [{"id": "a", "conversation": [{"user": "hi", "response": [{"judge": {"rubric": "polite"}}]}]}]
    }))
    .unwrap();
    assert_eq!(set.criteria.tool_trajectory_avg_score, 1.0);
    assert_eq!(set.criteria.response_match_score, 1.0);
    assert_eq!(
        set.cases[0].conversation[0].response[0],
        ResponseMatcher::judge("polite")
    );
}
