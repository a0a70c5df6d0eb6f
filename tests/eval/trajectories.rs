//! Exact, in-order and any-order trajectories.

use serde_json::json;
use tower_adk::eval::{ArgMatcher, CalledTool, ExpectedCall, Trajectory, TrajectoryMatch};

fn made(calls: &[(&str, serde_json::Value)]) -> Vec<CalledTool> {
    calls
        .iter()
        .map(|(name, args)| CalledTool::new(*name, args.clone()))
        .collect()
}

fn expect(how: TrajectoryMatch, names: &[&str]) -> Trajectory {
    names.iter().fold(Trajectory::new(how), |t, name| {
        t.call(ExpectedCall::new(*name))
    })
}

#[test]
fn exact_needs_the_same_calls_in_the_same_order_and_no_others() {
    let calls = made(&[("search", json!({})), ("book", json!({}))]);
    assert_eq!(
        expect(TrajectoryMatch::Exact, &["search", "book"])
            .check(&calls)
            .score,
        1.0
    );

    let swapped = expect(TrajectoryMatch::Exact, &["book", "search"]).check(&calls);
    assert_eq!(swapped.score, 0.0);
    assert!(
        swapped
            .detail
            .starts_with("call 1: expected `book`, found `search`"),
        "{}",
        swapped.detail
    );

    let fewer = expect(TrajectoryMatch::Exact, &["search"]).check(&calls);
    assert_eq!(fewer.score, 0.0);
    assert!(
        fewer.detail.contains("`book` is one too many"),
        "{}",
        fewer.detail
    );

    let more = expect(TrajectoryMatch::Exact, &["search", "book", "pay"]).check(&calls);
    assert!(more.detail.contains("`pay` is missing"), "{}", more.detail);
}

#[test]
fn in_order_allows_calls_between_but_not_a_different_order() {
    let calls = made(&[
        ("search", json!({})),
        ("weather", json!({})),
        ("book", json!({})),
    ]);
    assert_eq!(
        expect(TrajectoryMatch::InOrder, &["search", "book"])
            .check(&calls)
            .score,
        1.0
    );
    assert_eq!(
        expect(TrajectoryMatch::Exact, &["search", "book"])
            .check(&calls)
            .score,
        0.0
    );
    let reversed = expect(TrajectoryMatch::InOrder, &["book", "search"]).check(&calls);
    assert_eq!(reversed.score, 0.0);
    assert!(
        reversed
            .detail
            .starts_with("`search` is missing, in this order"),
        "{}",
        reversed.detail
    );
}

#[test]
fn any_order_allows_any_order_and_extra_calls_but_not_a_missing_one() {
    let calls = made(&[
        ("book", json!({})),
        ("weather", json!({})),
        ("search", json!({})),
    ]);
    assert_eq!(
        expect(TrajectoryMatch::AnyOrder, &["search", "book"])
            .check(&calls)
            .score,
        1.0
    );
    assert_eq!(
        expect(TrajectoryMatch::InOrder, &["search", "book"])
            .check(&calls)
            .score,
        0.0
    );
    let missing = expect(TrajectoryMatch::AnyOrder, &["search", "pay"]).check(&calls);
    assert_eq!(missing.score, 0.0);
    assert!(
        missing.detail.starts_with("`pay` is missing"),
        "{}",
        missing.detail
    );
    // One call cannot count for two expected ones.
    let twice = expect(TrajectoryMatch::AnyOrder, &["book", "book"]).check(&calls);
    assert_eq!(twice.score, 0.0);
}

#[test]
fn any_order_gives_a_loose_expectation_the_call_a_strict_one_does_not_need() {
    // `$any` listed first could take the Paris call, which the strict one needs.
    let expected = Trajectory::new(TrajectoryMatch::AnyOrder)
        .call(ExpectedCall::new("set_city").arg("value", ArgMatcher::Any))
        .call(ExpectedCall::new("set_city").arg("value", json!("Paris")));
    let calls = made(&[
        ("set_city", json!({"value": "Paris"})),
        ("set_city", json!({"value": "Lyon"})),
    ]);
    assert_eq!(expected.check(&calls).score, 1.0);
}

#[test]
fn arguments_are_matched_by_name_and_unnamed_ones_are_let_be() {
    let expected = Trajectory::new(TrajectoryMatch::Exact).call(
        ExpectedCall::new("book")
            .arg("city", ArgMatcher::Regex("^Par".into()))
            .arg(
                "nights",
                ArgMatcher::Schema(json!({"type": "integer", "minimum": 1})),
            ),
    );
    let good = made(&[(
        "book",
        json!({"city": "Paris", "nights": 3, "note": "quiet"}),
    )]);
    assert_eq!(expected.check(&good).score, 1.0);

    let bad = expected.check(&made(&[("book", json!({"city": "Paris", "nights": 0}))]));
    assert_eq!(bad.score, 0.0);
    assert!(
        bad.detail
            .contains("`book` argument `nights`: 0 does not match"),
        "{}",
        bad.detail
    );
    let missing = expected.check(&made(&[("book", json!({"city": "Paris"}))]));
    assert!(
        missing.detail.contains("argument `nights`: missing"),
        "{}",
        missing.detail
    );
}
