//! The example agent files in examples/agents/: each read, loaded, checked per role and
//! run.

use std::path::PathBuf;

use tower::ServiceExt;
use tower_adk::file::{AgentFile, FileAgent, Registry, Role};
use tower_adk::handlers::{SlotValue, SlotValues};
use tower_adk::interrupt::Decision;
use tower_adk::testing::text_tool;
use tower_adk::{AgentRequest, AgentResult, Message, RunStatus};

pub(crate) fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/agents")
        .join(name)
}

async fn run(agent: &FileAgent, request: AgentRequest) -> AgentResult {
    agent
        .clone()
        .oneshot(request)
        .await
        .expect("starts")
        .await
        .expect("runs")
}

/// The Rust tools that support.yaml names.
pub(crate) fn support_registry() -> Registry {
    Registry::new()
        .tool(text_tool("lookup_order", "order 7: delivered, 25 EUR"))
        .tool(text_tool("refund", "refunded 25 EUR"))
}

#[tokio::test]
async fn the_support_agent_looks_up_refunds_after_approval_and_completes() {
    let registry = support_registry();
    let file = AgentFile::reader()
        .registry(&registry)
        .read_path(example("support.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (file.name(), file.description()),
        (
            "support",
            "Answers customers' questions about their orders, and refunds them."
        )
    );
    let agent = super::support::build(file, &registry).await;

    // Per role: agents see every tool; customers can only look orders up.
    let staff = agent.preview(Some("agent")).await.expect("preview");
    assert_eq!(
        staff.tool_names(),
        ["lookup_order", "refund", "task_completed"]
    );
    assert!(
        staff
            .instruction
            .starts_with("You are the support agent of a web shop. Answers customers'"),
        "{}",
        staff.instruction
    );
    assert!(
        staff.instruction.contains("(Europe/Berlin)."),
        "{}",
        staff.instruction
    );
    let customer = agent.preview(None).await.expect("preview");
    assert_eq!(customer.tool_names(), ["lookup_order", "task_completed"]);

    let request = AgentRequest::user("Please refund order 7").with_extension(Role::new("agent"));
    let stopped = run(&agent, request).await;
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(
        stopped.interrupts[0].payload["description"],
        "Refund this order?"
    );
    let looked_up = &stopped.tool_records[0].content;
    assert!(
        looked_up.contains("order 7: delivered, 25 EUR"),
        "{looked_up}"
    );

    let asked = stopped.interrupts[0].id.clone();
    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().expect("checkpoint"),
        [(asked, Decision::Approve)],
    )
    .with_extension(Role::new("agent"));
    let done = run(&agent, resume).await;
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(
        done.final_message.content(),
        "Order 7 is refunded; 25 EUR are on their way back to you."
    );
    assert!(
        done.tool_records
            .iter()
            .any(|r| r.name == "refund" && r.content.contains("refunded 25 EUR"))
    );
}

#[tokio::test]
async fn the_booking_agent_ends_once_its_exit_condition_holds() {
    let file = AgentFile::from_path(example("booking.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let agent = super::support::build(file, &Registry::new()).await;
    let preview = agent.preview(None).await.expect("preview");
    assert_eq!(
        preview.tool_names(),
        [
            "set_slot_city",
            "set_slot_nights",
            "set_slot_room",
            "set_slot_breakfast"
        ]
    );
    assert!(
        preview.instruction.contains("(America/New_York)."),
        "{}",
        preview.instruction
    );

    let first = run(&agent, AgentRequest::user("A room in Paris, please")).await;
    assert_eq!(
        first.final_message.content(),
        "How many nights, and which room type would you like?"
    );

    let mut history = first.messages.to_vec();
    history.push(Message::user("Three nights, a double"));
    let slots = SlotValues::from_locals(&first.locals).expect("slots");
    let second = run(&agent, AgentRequest::new(history).with_extension(slots)).await;
    let slots = SlotValues::from_locals(&second.locals).expect("slots");
    assert_eq!(slots.get("city").and_then(SlotValue::as_str), Some("Paris"));
    assert_eq!(slots.get("nights").and_then(SlotValue::as_f64), Some(3.0));
    assert_eq!(
        slots.get("room").and_then(SlotValue::as_str),
        Some("double")
    );
    assert!(!slots.is_set("breakfast"), "breakfast is optional");
    // The prompt showed the slots known so far on the second run's first call.
    let seen = agent.scripted_model().expect("scripted").requests();
    assert!(
        seen[2].messages[0]
            .content()
            .contains("Known so far: city = Paris;"),
        "{}",
        seen[2].messages[0].content()
    );
    assert_eq!(
        agent.scripted_model().expect("scripted").remaining(),
        0,
        "no model call after the exit"
    );
}

#[test]
fn the_mcp_example_needs_its_servers_paths_from_the_environment() {
    let errors = AgentFile::reader()
        .env(|_| None)
        .read_path(example("mcp.yaml"))
        .expect_err("no paths");
    let missing: Vec<_> = errors
        .problems()
        .iter()
        .filter(|p| p.kind() == tower_adk::file::ProblemKind::MissingEnv)
        .map(|p| p.message().to_owned())
        .collect();
    assert_eq!(
        missing,
        ["MCP_PYTHON", "MCP_TOOLBOX", "MCP_EVERYTHING"]
            .map(|v| format!("environment variable `{v}` is not set"))
    );
}
