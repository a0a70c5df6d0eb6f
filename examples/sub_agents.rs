//! Agents that use agents: a support agent that asks a billing agent (as a tool), a
//! triage desk that hands the conversation off, and a research workflow.
//!
//! - **Sub-agent**: the support agent calls `billing` as a tool. The caller's role is
//!   passed down, so billing's `refund` tool, kept for admins by a role filter, is not
//!   offered to a viewer even though billing's model asks for it. Billing's events stream
//!   into the support run (printed indented), and its refund waits for an approval: the
//!   support run stops at the nested interrupt
//!   (`agent:support/tool:c1/agent:billing/tool:b1`) and resumes through it.
//! - **Handoff**: triage transfers the conversation to billing (`transfer_to_billing`).
//! - **Workflow**: two researchers in parallel, then a writer, as one service.
//!
//! It runs on the scripted model from `tower_adk::testing`, so it needs no API key:
//!
//! ```text
//! cargo run --example sub_agents
//! ```

use std::error::Error;
use std::io::Write;

use serde_json::json;
use tower::ServiceBuilder;
use tower_adk::checkpoint::MemoryStore;
use tower_adk::compose::{AgentTool, Handoffs, Parallel, Sequential, SubAgentEvent};
use tower_adk::interrupt::{Decision, Interrupt};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{
    Agent, AgentEvent, AgentRequest, AgentResult, AgentRun, HandlerLayer, RunStatus, Tool,
    ToolInfo, ToolOutput, ToolRequest, handlers,
};

/// The caller's role, from its identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Viewer,
    Admin,
}

/// What the session ended with, for the tests.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) viewer: AgentResult,
    pub(crate) admin: AgentResult,
    pub(crate) handoff: AgentResult,
    pub(crate) research: AgentResult,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let outcome = session(&mut std::io::stdout()).await?;
    println!("\n=== in the end");
    for (scene, result) in [
        ("viewer", &outcome.viewer),
        ("admin", &outcome.admin),
        ("handoff", &outcome.handoff),
        ("research", &outcome.research),
    ] {
        println!(
            "  {scene}: {:?}, {} model call(s)",
            result.status, result.model_calls
        );
    }
    Ok(())
}

/// Runs the three scenes, printing their events to `out`.
pub(crate) async fn session(out: &mut impl Write) -> Result<Outcome, Box<dyn Error>> {
    writeln!(out, "=== a viewer asks support for a refund")?;
    let viewer = support_run(Role::Viewer, out).await?;
    writeln!(out, "\n=== an admin asks support for a refund")?;
    let admin = support_run(Role::Admin, out).await?;

    writeln!(out, "\n=== triage hands off to billing")?;
    let triage = Agent::builder(ScriptedModel::new([Turn::call(
        "t1",
        "transfer_to_billing",
        json!({"reason": "refund"}),
    )]))
    .name("triage")
    .build()?;
    let billing = Agent::builder(ScriptedModel::new([Turn::text(
        "Billing here: refund sent.",
    )]))
    .name("billing")
    .build()?;
    let desk = Handoffs::new("triage", triage).to("billing", "Refunds and invoices", billing);
    let handoff = print_run(desk.run(AgentRequest::user("I want a refund")), out).await?;

    writeln!(
        out,
        "\n=== research: two researchers at once, then a writer"
    )?;
    let web = Agent::builder(ScriptedModel::new([Turn::text("tower-http has 20 layers")]))
        .name("web")
        .build()?;
    let papers = Agent::builder(ScriptedModel::new([Turn::text("middleware composes")]))
        .name("papers")
        .build()?;
    let writer = Agent::builder(ScriptedModel::new([Turn::text(
        "Tower's layers compose into services.",
    )]))
    .name("writer")
    .build()?;
    let research = Sequential::new()
        .then_named("research", Parallel::new().branch(web).branch(papers))
        .then(writer);
    let research = print_run(research.run(AgentRequest::user("Explain tower")), out).await?;

    Ok(Outcome {
        viewer,
        admin,
        handoff,
        research,
    })
}

/// Support calls billing as a tool; billing's refund waits for an approval, given here.
async fn support_run(role: Role, out: &mut impl Write) -> Result<AgentResult, Box<dyn Error>> {
    let billing_model = ScriptedModel::new([
        Turn::call("b1", "refund", json!({"invoice": 7})),
        Turn::text("Billing is done with invoice 7."),
    ]);
    let billing = Agent::builder(billing_model)
        .name("billing")
        .instruction("You handle billing. Refund when asked.")
        .tool(text_tool("invoice", "invoice 7: 40 EUR, paid"))
        .tool(refund_tool())
        .checkpoints(MemoryStore::new())
        .build()?;
    // The refund tool is for admins: the caller's role decides, in billing's runs too.
    let admins_refund = handlers::filter_tools(|ext, tool| {
        tool.name() != "refund" || ext.get::<Role>() == Some(&Role::Admin)
    });
    let billing = ServiceBuilder::new()
        .layer(HandlerLayer::new(admins_refund))
        .service(billing);
    let support = Agent::builder(ScriptedModel::new([
        Turn::call("c1", "billing", json!({"request": "Refund invoice 7"})),
        Turn::text("Billing has dealt with invoice 7."),
    ]))
    .name("support")
    .tool(
        AgentTool::named("billing", billing)
            .description("Billing questions and refunds")
            .into_tool(),
    )
    .checkpoints(MemoryStore::new())
    .build()?;

    let request = AgentRequest::user("Please refund invoice 7").with_extension(role);
    let result = print_run(support.run(request), out).await?;
    if result.status != RunStatus::Interrupted {
        return Ok(result);
    }
    let checkpoint = result
        .checkpoint
        .clone()
        .ok_or("an interrupted run has a checkpoint")?;
    let decisions = result.interrupts.iter().map(|pending| {
        let _ = writeln!(
            out,
            "  ?? {} asks {} -> approve",
            pending.id, pending.payload
        );
        (pending.id.clone(), Decision::Approve)
    });
    // The resume is a request like any other: it carries the caller's identity again.
    let resume =
        AgentRequest::resume(checkpoint, decisions.collect::<Vec<_>>()).with_extension(role);
    print_run(support.run(resume), out).await
}

/// Refunds, once a person approved.
fn refund_tool() -> Tool {
    let info = ToolInfo::new("refund", "Refunds an invoice").parameters(json!({
        "type": "object",
        "properties": {"invoice": {"type": "integer"}},
        "required": ["invoice"]
    }));
    Tool::from_fn(info, |request: ToolRequest| async move {
        if request.decision().is_none() {
            let invoice = &request.arguments["invoice"];
            return Err(
                Interrupt::new(json!({"question": format!("Refund invoice {invoice}?")})).into(),
            );
        }
        Ok::<_, tower_adk::BoxError>(ToolOutput::new("refunded 40 EUR"))
    })
}

/// Prints a run's events, a sub-agent's indented under its call; returns its result.
async fn print_run(mut run: AgentRun, out: &mut impl Write) -> Result<AgentResult, Box<dyn Error>> {
    use futures::StreamExt;
    while let Some(event) = run.next().await {
        let event = event?;
        if let Some(nested) = SubAgentEvent::of(&event) {
            print_event(&format!("    [{}] ", nested.agent), &nested.event, out)?;
            continue;
        }
        if let AgentEvent::Completed(result) = event {
            writeln!(
                out,
                "  == {:?}: {}",
                result.status,
                result.final_message.content()
            )?;
            return Ok(*result);
        }
        print_event("  ", &event, out)?;
    }
    Err("the run ended without a result".into())
}

fn print_event(indent: &str, event: &AgentEvent, out: &mut impl Write) -> std::io::Result<()> {
    match event {
        AgentEvent::Message(message) if !message.content().is_empty() => {
            writeln!(out, "{indent}{}", message.content())
        }
        AgentEvent::ToolCallStarted { name, call_id } => {
            writeln!(out, "{indent}-> {name} ({call_id})")
        }
        AgentEvent::ToolResult(record) => match &record.error {
            None => writeln!(out, "{indent}<- {}: {}", record.name, record.content),
            Some(error) => writeln!(out, "{indent}<- {}: FAILED [{}]", record.name, error.kind()),
        },
        AgentEvent::Interrupt(pending) => writeln!(out, "{indent}!! interrupt {}", pending.id),
        _ => Ok(()),
    }
}
