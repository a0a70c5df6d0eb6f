//! Slot filling: generated tools, refused values, completion and the values in the result.

use serde_json::json;
use tower_adk::handlers::{Slot, SlotError, SlotFilling, SlotValue, SlotValues};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, AgentResult, Message, ToolCall, ToolErrorKind};

use crate::tool_result;

/// A hotel booking: where, which room, how many nights, breakfast or not.
fn booking() -> SlotFilling {
    SlotFilling::new([
        Slot::text("city", "The destination city"),
        Slot::categorical(
            "room",
            "The room type",
            ["single", "double", "twin", "family"],
        ),
        Slot::float("nights", "How many nights"),
        Slot::bool("breakfast", "Whether breakfast is included"),
    ])
    .unwrap()
}

/// Runs `slots` on a model scripted with `turns`.
async fn fill(slots: SlotFilling, turns: Vec<Turn>) -> (ScriptedModel, AgentResult) {
    let model = ScriptedModel::new(turns);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let result = agent
        .run(AgentRequest::user("Book me a room").with_handler(slots))
        .await
        .unwrap();
    (model, result)
}

#[tokio::test]
async fn a_refused_categorical_value_is_retried_and_the_run_ends_the_moment_every_slot_is_set() {
    let (model, result) = fill(
        booking(),
        vec![
            Turn::call("c1", "set_slot_city", json!({"value": "Paris"})),
            Turn::call("c2", "set_slot_room", json!({"value": "suite"})),
            Turn::call("c3", "set_slot_room", json!({"value": "double"})),
            Turn::call("c4", "set_slot_nights", json!({"value": 3})).with_call(
                "c5",
                "set_slot_breakfast",
                json!({"value": true}),
            ),
            Turn::text("this turn is never asked for"),
        ],
    )
    .await;

    // The model saw why "suite" was refused, with every allowed value.
    let (content, is_error) = tool_result(&model.requests()[2], "c2");
    assert!(is_error);
    assert_eq!(
        content,
        r#"error (invalid_arguments): at `/value`: "suite" is not one of "single", "double", "twin" or "family""#
    );
    assert_eq!(
        result.tool_records[1].error.as_ref().map(|e| e.kind()),
        Some(ToolErrorKind::InvalidArguments)
    );

    // The fourth turn set the last slots: no fifth model call.
    assert_eq!(model.requests().len(), 4);
    assert_eq!(model.remaining(), 1);
    assert_eq!(result.iterations, 4);
    assert_eq!(
        result.final_message,
        Message::assistant(
            "I have everything I need:\n- city: Paris\n- room: double\n- nights: 3\n- breakfast: true"
        )
    );

    let slots = SlotValues::from_locals(&result.locals).unwrap();
    assert_eq!(slots.len(), 4);
    assert_eq!(slots.get("city"), Some(&SlotValue::Text("Paris".into())));
    assert_eq!(
        slots.get("room").and_then(SlotValue::as_str),
        Some("double")
    );
    assert_eq!(slots.get("nights").and_then(SlotValue::as_f64), Some(3.0));
    assert_eq!(
        slots.get("breakfast").and_then(SlotValue::as_bool),
        Some(true)
    );
}

#[tokio::test]
async fn each_accepted_value_tells_the_model_which_slots_are_still_unset() {
    let (model, _) = fill(
        booking(),
        vec![
            Turn::call("c1", "set_slot_city", json!({"value": "Paris"})),
            Turn::text("Which room would you like?"),
        ],
    )
    .await;

    assert_eq!(
        tool_result(&model.requests()[1], "c1"),
        (
            r#"The slot `city` is set to "Paris". Not set yet: room, nights, breakfast."#.into(),
            false
        )
    );
}

#[tokio::test]
async fn a_custom_exit_condition_ends_the_run_before_every_slot_is_set() {
    let slots = booking()
        .exit_when(|slots| slots.is_set("city") && slots.is_set("nights"))
        .finish_with(|slots| {
            let city = slots
                .get("city")
                .map(ToString::to_string)
                .unwrap_or_default();
            Message::assistant(format!("Looking for rooms in {city}."))
        });
    let (model, result) = fill(
        slots,
        vec![
            Turn::call("c1", "set_slot_city", json!({"value": "Lyon"})),
            Turn::call("c2", "set_slot_nights", json!({"value": 2.5})),
            Turn::text("this turn is never asked for"),
        ],
    )
    .await;

    assert_eq!(model.requests().len(), 2);
    assert_eq!(result.final_message.content(), "Looking for rooms in Lyon.");
    let slots = SlotValues::from_locals(&result.locals).unwrap();
    assert_eq!(slots.len(), 2);
    assert!(!slots.is_set("room"));
    assert_eq!(slots.get("nights").and_then(SlotValue::as_f64), Some(2.5));
}

#[tokio::test]
async fn slots_set_in_one_turn_are_all_kept() {
    let (model, result) = fill(
        booking(),
        vec![
            Turn::calls([
                ToolCall::new("c1", "set_slot_city", json!({"value": "Oslo"})),
                ToolCall::new("c2", "set_slot_room", json!({"value": "twin"})),
                ToolCall::new("c3", "set_slot_nights", json!({"value": 1})),
                ToolCall::new("c4", "set_slot_breakfast", json!({"value": false})),
            ]),
            Turn::text("this turn is never asked for"),
        ],
    )
    .await;

    assert_eq!(model.requests().len(), 1);
    assert!(result.tool_records.iter().all(|r| r.is_success()));
    assert_eq!(
        result.final_message.content(),
        "I have everything I need:\n- city: Oslo\n- room: twin\n- nights: 1\n- breakfast: false"
    );
    let slots = SlotValues::from_locals(&result.locals).unwrap();
    let names: Vec<_> = slots.iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["breakfast", "city", "nights", "room"]);
}

#[tokio::test]
async fn slots_set_in_the_turn_that_meets_a_custom_condition_are_kept_too() {
    let slots = booking().exit_when(|slots| slots.is_set("city"));
    let (model, result) = fill(
        slots,
        vec![
            Turn::call("c1", "set_slot_city", json!({"value": "Rome"})).with_call(
                "c2",
                "set_slot_breakfast",
                json!({"value": true}),
            ),
        ],
    )
    .await;

    assert_eq!(model.requests().len(), 1);
    let slots = SlotValues::from_locals(&result.locals).unwrap();
    assert_eq!(slots.get("city").and_then(SlotValue::as_str), Some("Rome"));
    assert_eq!(
        slots.get("breakfast").and_then(SlotValue::as_bool),
        Some(true)
    );
}

#[tokio::test]
async fn the_model_is_shown_one_tool_per_slot_with_a_schema_that_fits_the_slot() {
    let (model, _) = fill(booking(), vec![Turn::text("Where to?")]).await;

    let request = &model.requests()[0];
    let tools: Vec<_> = request
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_str(), &t.parameters))
        .collect();
    let object = |value: serde_json::Value| {
        json!({
            "type": "object",
            "properties": {"value": value},
            "required": ["value"],
            "additionalProperties": false
        })
    };
    assert_eq!(
        tools,
        [
            (
                "set_slot_city",
                "Sets the slot `city` (text): The destination city",
                &object(json!({"type": "string", "description": "The destination city"}))
            ),
            (
                "set_slot_room",
                r#"Sets the slot `room` (one of "single", "double", "twin" or "family"): The room type"#,
                &object(json!({
                    "type": "string",
                    "enum": ["single", "double", "twin", "family"],
                    "description": r#"The room type; one of "single", "double", "twin" or "family""#
                }))
            ),
            (
                "set_slot_nights",
                "Sets the slot `nights` (a number): How many nights",
                &object(json!({"type": "number", "description": "How many nights"}))
            ),
            (
                "set_slot_breakfast",
                "Sets the slot `breakfast` (true or false): Whether breakfast is included",
                &object(json!({"type": "boolean", "description": "Whether breakfast is included"}))
            ),
        ]
    );
}

#[tokio::test]
async fn a_run_that_sets_no_slot_ends_with_empty_slot_values() {
    let (_, result) = fill(booking(), vec![Turn::text("Where to?")]).await;

    let slots = SlotValues::from_locals(&result.locals).unwrap();
    assert!(slots.is_empty());
    assert!(result.locals.contains(SlotValues::LOCALS_KEY));
}

#[tokio::test]
async fn with_argument_validation_off_a_value_outside_the_allowed_set_is_still_refused() {
    let model = ScriptedModel::new([
        Turn::call("c1", "set_slot_room", json!({"value": "suite"})),
        Turn::text("Which room, then?"),
    ]);
    let agent = Agent::builder(model.clone())
        .validate_arguments(false)
        .build()
        .unwrap();
    let result = agent
        .run(AgentRequest::user("A suite, please").with_handler(booking()))
        .await
        .unwrap();

    assert_eq!(
        tool_result(&model.requests()[1], "c1"),
        (
            r#"error (invalid_arguments): at `/value`: "suite" is not one of "single", "double", "twin" or "family""#.into(),
            true
        )
    );
    assert!(SlotValues::from_locals(&result.locals).unwrap().is_empty());
}

#[test]
fn slot_definitions_are_checked_when_the_handler_is_made() {
    let error = |slots: Vec<Slot>| SlotFilling::new(slots).unwrap_err();

    assert_eq!(error(vec![]), SlotError::NoSlots);
    assert_eq!(
        error(vec![Slot::text("city", "a"), Slot::bool("city", "b")]),
        SlotError::DuplicateName {
            name: "city".into()
        }
    );
    assert_eq!(
        error(vec![Slot::text("the city", "a")]),
        SlotError::InvalidName {
            name: "the city".into()
        }
    );
    assert_eq!(
        error(vec![Slot::text("x".repeat(56), "a")]),
        SlotError::InvalidName {
            name: "x".repeat(56)
        }
    );
    assert_eq!(
        error(vec![Slot::categorical("room", "a", Vec::<String>::new())]),
        SlotError::NoAllowedValues {
            name: "room".into()
        }
    );
    assert!(SlotFilling::new([Slot::text("x".repeat(55), "a")]).is_ok());
}

#[test]
fn the_handler_is_send_sync_and_clone() {
    fn assert_handler<T: tower_adk::Handler + Clone + std::fmt::Debug>() {}
    assert_handler::<SlotFilling>();
}

#[tokio::test]
async fn a_request_carrying_the_previous_runs_values_starts_from_them() {
    let model = ScriptedModel::new([
        Turn::calls([
            ToolCall::new("c1", "set_slot_city", json!({"value": "Paris"})),
            ToolCall::new("c2", "set_slot_room", json!({"value": "double"})),
        ]),
        Turn::text("How many nights, and with breakfast?"),
        Turn::call("c3", "set_slot_nights", json!({"value": 2})).with_call(
            "c4",
            "set_slot_breakfast",
            json!({"value": false}),
        ),
    ]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let first = agent
        .run(AgentRequest::user("A double in Paris").with_handler(booking()))
        .await
        .unwrap();

    let mut history = first.messages.to_vec();
    history.push(Message::user("Two nights, no breakfast"));
    let carried = SlotValues::from_locals(&first.locals).unwrap();
    let second = agent
        .run(
            AgentRequest::new(history)
                .with_extension(carried)
                .with_handler(booking()),
        )
        .await
        .unwrap();

    assert_eq!(model.requests().len(), 3);
    assert_eq!(
        second.final_message.content(),
        "I have everything I need:\n- city: Paris\n- room: double\n- nights: 2\n- breakfast: false"
    );
    assert_eq!(SlotValues::from_locals(&second.locals).unwrap().len(), 4);
}

/// In a conversation on a thread, where each user message is a run, the slots the
/// thread's earlier runs set carry over by themselves; another thread starts with none.
#[tokio::test]
async fn slots_set_on_a_thread_carry_over_to_its_next_run() {
    let model = ScriptedModel::new([
        Turn::calls([
            ToolCall::new("c1", "set_slot_city", json!({"value": "Paris"})),
            ToolCall::new("c2", "set_slot_room", json!({"value": "double"})),
        ]),
        Turn::text("How many nights, and with breakfast?"),
        Turn::call("c3", "set_slot_nights", json!({"value": 2})).with_call(
            "c4",
            "set_slot_breakfast",
            json!({"value": false}),
        ),
        Turn::call("c5", "set_slot_nights", json!({"value": 1})),
        Turn::text("Which city?"),
    ]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let on = |thread: &str, text: &str| {
        AgentRequest::user(text)
            .on_thread(thread)
            .with_handler(booking())
    };
    agent.run(on("t1", "A double in Paris")).await.unwrap();
    let second = agent
        .run(on("t1", "Two nights, no breakfast"))
        .await
        .unwrap();
    assert_eq!(
        second.final_message.content(),
        "I have everything I need:\n- city: Paris\n- room: double\n- nights: 2\n- breakfast: false"
    );

    let other = agent.run(on("t2", "One night")).await.unwrap();
    let values = SlotValues::from_locals(&other.locals).unwrap();
    assert_eq!(values.len(), 1, "{values:?}");
    assert_eq!(values.get("nights"), Some(&SlotValue::Float(1.0)));
}
