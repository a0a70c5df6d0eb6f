//! Slot filling: a hotel booking assistant collects a city, a room type, a number of
//! nights and whether breakfast is included, over a conversation of two user messages.
//!
//! - `SlotFilling` gives the model one `set_slot_<name>` tool per slot, each with a schema
//!   that fits the slot (the room type is an enum);
//! - the model's first try at the room type is outside the allowed set: it is told the
//!   allowed values and asks the user;
//! - the second request carries the first run's slot values on; once every slot is set,
//!   the run completes at once, without another model call, with a summary;
//! - the values are read back, typed, from the result.
//!
//! It runs on the scripted model from `tower_adk::testing`, so it needs no API key:
//!
//! ```text
//! cargo run --example slot_filling
//! ```

mod common;

use futures::StreamExt;
use serde_json::json;
use tower_adk::handlers::{Slot, SlotFilling, SlotValue, SlotValues};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, AgentResult, Message};

/// Runs one request, printing its events; returns the result.
async fn run(
    agent: &Agent,
    request: AgentRequest,
) -> Result<AgentResult, Box<dyn std::error::Error>> {
    let mut run = agent.run(request);
    while let Some(event) = run.next().await {
        let event = event?;
        common::print_event(&event);
        if let tower_adk::AgentEvent::Completed(result) = event {
            return Ok(*result);
        }
    }
    Err("the run ended without a result".into())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedModel::new([
        // "I need a suite in Lisbon": the city is fine, "suite" is not a room type.
        Turn::call("c1", "set_slot_city", json!({"value": "Lisbon"})).with_call(
            "c2",
            "set_slot_room",
            json!({"value": "suite"}),
        ),
        Turn::text("We have single, double, twin and family rooms. Which would you like?"),
        // "A double for three nights, with breakfast": the last three slots, in one turn.
        Turn::call("c3", "set_slot_room", json!({"value": "double"}))
            .with_call("c4", "set_slot_nights", json!({"value": 3}))
            .with_call("c5", "set_slot_breakfast", json!({"value": true})),
        Turn::text("(never asked for: the run ends when the last slot is set)"),
    ]);
    let agent = Agent::builder(model.clone())
        .instruction("You book hotel rooms. Set each slot as soon as the guest tells you.")
        .build()?;
    let booking = SlotFilling::new([
        Slot::text("city", "The destination city"),
        Slot::categorical(
            "room",
            "The room type",
            ["single", "double", "twin", "family"],
        ),
        Slot::float("nights", "How many nights"),
        Slot::bool("breakfast", "Whether breakfast is included"),
    ])?;

    println!("The model is shown:");
    for slot in booking.slots() {
        println!(
            "  {}: {}",
            slot.tool_name(),
            slot.parameters()["properties"]["value"]
        );
    }

    println!("\n=== guest: I need a suite in Lisbon.");
    let first = run(
        &agent,
        AgentRequest::user("I need a suite in Lisbon.").with_handler(booking.clone()),
    )
    .await?;
    let so_far = SlotValues::from_locals(&first.locals)?;
    for (name, value) in so_far.iter() {
        println!("  slot so far: {name} = {value}");
    }

    println!("\n=== guest: A double for three nights, with breakfast.");
    // The conversation goes on: the history (without the instruction, which every run
    // adds again) and the slots set so far.
    let mut history: Vec<Message> = first
        .messages
        .iter()
        .filter(|m| !matches!(m, Message::System { .. }))
        .cloned()
        .collect();
    history.push(Message::user("A double for three nights, with breakfast."));
    let request = AgentRequest::new(history)
        .with_extension(so_far)
        .with_handler(booking);
    let second = run(&agent, request).await?;

    println!("\nFinal message:\n{}", second.final_message.content());
    let slots = SlotValues::from_locals(&second.locals)?;
    let nights = slots
        .get("nights")
        .and_then(SlotValue::as_f64)
        .unwrap_or_default();
    println!(
        "\nBooking {nights} night(s); model calls in all: {}",
        model.requests().len()
    );
    Ok(())
}
