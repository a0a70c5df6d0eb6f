//! Prompt templates: the rendered instruction the model sees, its variables, refreshing,
//! and the errors caught when the handler is made.

use std::error::Error as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::json;
use tower_adk::handlers::{PromptTemplate, Resumed, Slot, SlotFilling, TemplateError};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{Agent, AgentRequest, BoxHandler, Hook};

/// 2026-03-29 01:30:00 UTC: that night Europe/Berlin moves from CET (+01:00) to CEST
/// (+02:00) at 01:00 UTC.
const BERLIN_DST_NIGHT: u64 = 1_774_747_800;

fn at(seconds: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
}

/// The system messages the model saw, one per model call.
async fn instructions(
    handlers: Vec<BoxHandler>,
    turns: Vec<Turn>,
    request: AgentRequest,
) -> Vec<String> {
    let model = ScriptedModel::new(turns);
    let agent = Agent::builder(model.clone())
        .tool(text_tool("lookup", "found"))
        .build()
        .unwrap();
    let request = handlers
        .into_iter()
        .fold(request, AgentRequest::with_handler);
    agent.run(request).await.unwrap();
    model
        .requests()
        .iter()
        .map(|r| r.messages[0].content().to_owned())
        .collect()
}

/// The system message of a one-turn run with `template`.
async fn rendered(template: PromptTemplate) -> String {
    let seen = instructions(
        vec![template.into()],
        vec![Turn::text("ok")],
        AgentRequest::user("hi"),
    )
    .await;
    seen[0].clone()
}

const TIME: &str = "{{ now }} | {{ weekday }} {{ date }} {{ time }} {{ timezone_abbreviation }} ({{ timezone }}, {{ utc_offset }})";

#[tokio::test]
async fn the_time_is_rendered_in_the_configured_zone_on_either_side_of_a_dst_change() {
    let berlin = |seconds| {
        PromptTemplate::new(TIME)
            .unwrap()
            .timezone("Europe/Berlin")
            .unwrap()
            .clock(move || at(seconds))
    };

    assert_eq!(
        rendered(berlin(BERLIN_DST_NIGHT)).await,
        "2026-03-29T03:30:00+02:00 | Sunday 2026-03-29 03:30 CEST (Europe/Berlin, +02:00)"
    );
    assert_eq!(
        rendered(berlin(BERLIN_DST_NIGHT - 3600)).await,
        "2026-03-29T01:30:00+01:00 | Sunday 2026-03-29 01:30 CET (Europe/Berlin, +01:00)"
    );
}

#[tokio::test]
async fn the_time_is_rendered_in_utc_unless_a_zone_is_configured() {
    let template = PromptTemplate::new(TIME)
        .unwrap()
        .clock(|| at(BERLIN_DST_NIGHT));

    assert_eq!(
        rendered(template).await,
        "2026-03-29T01:30:00+00:00 | Sunday 2026-03-29 01:30 UTC (UTC, +00:00)"
    );
}

#[tokio::test]
async fn the_description_and_the_slots_set_so_far_are_rendered_before_each_model_call() {
    let template = PromptTemplate::new(
        "{{ description }} Known: {% for name, value in slots|items %}{{ name }}={{ value }}; {% endfor %}",
    )
    .unwrap()
    .description("You book rooms.");
    let slots = SlotFilling::new([
        Slot::text("city", "The city"),
        Slot::float("nights", "How many nights"),
    ])
    .unwrap();
    let turns = || {
        vec![
            Turn::call("c1", "set_slot_city", json!({"value": "Paris"})),
            Turn::call("c2", "set_slot_nights", json!({"value": 2})),
        ]
    };

    // The template reads the run's slots whichever handler comes first.
    let orders: [Vec<BoxHandler>; 2] = [
        vec![template.clone().into(), slots.clone().into()],
        vec![slots.into(), template.into()],
    ];
    for handlers in orders {
        let seen = instructions(handlers, turns(), AgentRequest::user("hi")).await;
        assert_eq!(
            seen,
            [
                "You book rooms. Known: ",
                "You book rooms. Known: city=Paris; "
            ]
        );
    }
}

#[tokio::test]
async fn resumed_is_true_only_when_the_request_carries_the_resumed_marker() {
    let template =
        || PromptTemplate::new("{% if resumed %}Welcome back.{% else %}Hello.{% endif %}").unwrap();
    let run = |request: AgentRequest| async move {
        instructions(vec![template().into()], vec![Turn::text("ok")], request).await
    };

    assert_eq!(run(AgentRequest::user("hi")).await, ["Hello."]);
    assert_eq!(
        run(AgentRequest::user("hi").with_extension(Resumed)).await,
        ["Welcome back."]
    );
}

/// A clock that moves one hour on each reading, from [`BERLIN_DST_NIGHT`].
fn ticking_clock() -> impl Fn() -> SystemTime + Send + Sync + 'static {
    let hours = Arc::new(AtomicU64::new(0));
    move || at(BERLIN_DST_NIGHT + 3600 * hours.fetch_add(1, Ordering::SeqCst))
}

fn two_turns() -> Vec<Turn> {
    vec![Turn::call("c1", "lookup", json!({})), Turn::text("ok")]
}

#[tokio::test]
async fn the_instruction_follows_the_clock_from_one_model_call_to_the_next() {
    let template = PromptTemplate::new("{{ time }}")
        .unwrap()
        .clock(ticking_clock());

    let seen = instructions(vec![template.into()], two_turns(), AgentRequest::user("hi")).await;

    // Rendered in before_agent (01:30), before the first call (02:30), before the second (03:30).
    assert_eq!(seen, ["02:30", "03:30"]);
}

#[tokio::test]
async fn with_refresh_off_the_instruction_is_rendered_once_per_run() {
    let template = PromptTemplate::new("{{ time }}")
        .unwrap()
        .clock(ticking_clock())
        .refresh(false);

    let seen = instructions(vec![template.into()], two_turns(), AgentRequest::user("hi")).await;

    assert_eq!(seen, ["01:30", "01:30"]);
}

#[tokio::test]
async fn a_system_message_that_a_later_handler_rewrote_is_not_refreshed() {
    let template = PromptTemplate::new("{{ time }}")
        .unwrap()
        .clock(ticking_clock());
    let suffix = tower_adk::handlers::instruction_fn(|_, current| format!("{current} (Berlin)"));

    let seen = instructions(
        vec![template.into(), suffix.into()],
        two_turns(),
        AgentRequest::user("hi"),
    )
    .await;

    assert_eq!(seen, ["01:30 (Berlin)", "01:30 (Berlin)"]);
}

#[test]
fn an_unknown_time_zone_is_an_error_when_the_handler_is_made() {
    let error = PromptTemplate::new("{{ time }}")
        .unwrap()
        .timezone("Europe/Atlantis")
        .unwrap_err();

    assert!(
        matches!(&error, TemplateError::InvalidTimezone { name, .. } if name == "Europe/Atlantis"),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("`Europe/Atlantis` is not a known IANA time zone")
    );
}

#[test]
fn a_template_that_does_not_compile_is_an_error_when_the_handler_is_made() {
    let error = PromptTemplate::new("Hello {{ description").unwrap_err();

    assert!(matches!(error, TemplateError::Compile { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("the template does not compile: "),
        "{error}"
    );
}

#[tokio::test]
async fn a_template_that_fails_to_render_fails_the_run_before_the_model_is_called() {
    let model = ScriptedModel::new([Turn::text("never")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let template = PromptTemplate::new("{{ description.missing.deeper }}").unwrap();

    let error = agent
        .run(AgentRequest::user("hi").with_handler(template))
        .await
        .unwrap_err();

    let error = error.as_handler().expect("a handler error");
    assert_eq!(error.hook(), Hook::BeforeAgent);
    assert_eq!(error.handler(), "prompt_template");
    let source = error.source().map(ToString::to_string).unwrap_or_default();
    assert!(
        source.starts_with("the template failed to render: "),
        "{source}"
    );
    assert_eq!(model.calls(), 0);
}

#[test]
fn the_handler_is_send_sync_and_clone() {
    fn assert_handler<T: tower_adk::Handler + Clone + std::fmt::Debug>() {}
    assert_handler::<PromptTemplate>();
}
