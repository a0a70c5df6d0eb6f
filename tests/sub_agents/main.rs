//! Agents made of agents (`tower_adk::compose`): an agent as a tool of another (roles,
//! streamed events, interrupts resumed through the caller), handoffs, and workflows.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent_tool;
mod edges;
mod handoff;
mod interrupts;
mod workflows;

use futures::StreamExt;
use tower_adk::{AgentEvent, AgentResult, AgentRun};

/// Every event of a run, and its result.
pub async fn drain(mut run: AgentRun) -> (Vec<AgentEvent>, AgentResult) {
    let mut events = Vec::new();
    while let Some(event) = run.next().await {
        events.push(event.expect("the run does not fail"));
    }
    let Some(AgentEvent::Completed(result)) = events.last() else {
        panic!("the run ends with its result: {events:?}");
    };
    let result = (**result).clone();
    (events, result)
}

#[test]
fn the_compositions_are_cheap_to_share_between_tasks() {
    fn shared<T: Clone + Send + Sync + 'static>() {}
    shared::<tower_adk::compose::Sequential>();
    shared::<tower_adk::compose::Parallel>();
    shared::<tower_adk::compose::Loop>();
    shared::<tower_adk::compose::Handoffs>();
    shared::<tower_adk::compose::AgentTool>();
    shared::<tower_adk::compose::SubAgentEvent>();
    shared::<tower_adk::tool::ToolReport>();
    shared::<tower_adk::tool::ToolEvent>();
}
