//! The A2A client (`tower_adk::a2a::client`) against a real A2A agent: the official
//! Python SDK's server (`a2a-sdk`, installed by scripts/setup-a2a-peer) running the
//! scripted agent of tests/a2a/peer, started on a free port of 127.0.0.1 for each test
//! and killed after it. A peer that cannot start fails the test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(feature = "config")]
mod agent_file;
mod calls;
mod errors;
mod handoff;
mod hostile;
mod interrupts;
#[cfg(feature = "server")]
mod ours;
mod peer;

use futures::StreamExt;
use tower_adk::{AgentEvent, AgentResult, AgentRun};

/// Every event of a run, and its result.
pub(crate) async fn drain(mut run: AgentRun) -> (Vec<AgentEvent>, AgentResult) {
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
fn the_client_s_types_are_cheap_to_share_between_tasks() {
    fn shared<T: Clone + Send + Sync + 'static>() {}
    shared::<tower_adk::a2a::client::RemoteAgent>();
    shared::<tower_adk::a2a::client::RemoteAgentTool>();
    shared::<tower_adk::a2a::client::RemoteAgentBuilder>();
    fn error<T: std::error::Error + Send + Sync + 'static>() {}
    error::<tower_adk::a2a::client::A2aError>();
}
