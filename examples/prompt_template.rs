//! A prompt template: the instruction of each run rendered from a minijinja template.
//!
//! The template uses every variable `PromptTemplate` offers: a description, the date and
//! time in a configured IANA time zone (Europe/Berlin here), the slots a `SlotFilling`
//! handler has set so far, and whether the run resumes an interrupted one. It is
//! rendered when the run starts and again before each model call, so the second model
//! call sees the slot the first one set. A second request carries the `Resumed` marker and
//! the slots set so far.
//!
//! It runs on the scripted model from `tower_adk::testing`, so it needs no API key:
//!
//! ```text
//! cargo run --example prompt_template
//! ```

use serde_json::json;
use tower_adk::handlers::{PromptTemplate, Resumed, Slot, SlotFilling, SlotValues};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest};

const TEMPLATE: &str = "\
{{ description }}
{% if resumed %}You are continuing an earlier conversation; do not greet the guest again.
{% endif %}It is {{ weekday }} {{ date }}, {{ time }} {{ timezone_abbreviation }} ({{ timezone }}).
{% if slots %}Known so far:{% for name, value in slots|items %} {{ name }}={{ value }}{% endfor %}
{% else %}Nothing is known yet.
{% endif %}";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedModel::new([
        // The first request.
        Turn::call("c1", "set_slot_city", json!({"value": "Berlin"})),
        Turn::text("How many nights will you stay in Berlin?"),
        // The second request, resuming.
        Turn::text("Welcome back: how many nights?"),
    ]);
    let agent = Agent::builder(model.clone()).build()?;

    // Both errors would show here, before any run: a template that does not compile, and
    // a time zone that does not exist.
    let prompt = PromptTemplate::new(TEMPLATE)?
        .description("You book hotel rooms for Hotel Adler.")
        .timezone("Europe/Berlin")?;
    let slots = SlotFilling::new([
        Slot::text("city", "The destination city"),
        Slot::float("nights", "How many nights"),
    ])?;

    let first = AgentRequest::user("A room in Berlin, please.")
        .with_handler(prompt.clone())
        .with_handler(slots.clone());
    let result = agent.run(first).await?;
    println!("Reply: {}", result.final_message.content());

    // A conversation that goes on outside a thread: the caller marks the run as resumed
    // itself (a resume from a checkpoint inserts the marker), and carries the slots set
    // so far on.
    let resumed = AgentRequest::user("Hello again.")
        .with_extension(Resumed)
        .with_extension(SlotValues::from_locals(&result.locals)?)
        .with_handler(prompt)
        .with_handler(slots);
    agent.run(resumed).await?;

    for (i, request) in model.requests().iter().enumerate() {
        println!("\n--- instruction at model call {} ---", i + 1);
        println!("{}", request.messages[0].content());
    }
    Ok(())
}
