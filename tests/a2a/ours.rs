//! Our client calling our own A2A server (`server::a2a`) across a real socket: an
//! approval asked by the remote agent's tool surfaces as the caller's interrupt, named
//! by the remote's own id; the caller's resume answers it, and the remote run goes on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower_adk::a2a::client::RemoteAgent;
use tower_adk::checkpoint::MemoryStore;
use tower_adk::interrupt::{Decision, Interrupt};
use tower_adk::server::Server;
use tower_adk::server::a2a::A2a;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentRequest, BoxError, RunStatus, Tool, ToolInfo, ToolOutput, ToolRequest,
};

use super::drain;

/// A refund tool that asks before it refunds; counts the refunds made.
fn refund_tool(refunds: &Arc<AtomicUsize>) -> Tool {
    let refunds = Arc::clone(refunds);
    Tool::from_fn(
        ToolInfo::new("refund", "Refunds an order"),
        move |request: ToolRequest| {
            let refunds = Arc::clone(&refunds);
            async move {
                if request.decision().is_none() {
                    let payload = json!({"description": "Refund 40 EUR to order 7?"});
                    return Err(Interrupt::new(payload).into());
                }
                refunds.fetch_add(1, Ordering::SeqCst);
                Ok::<_, BoxError>(ToolOutput::new("refunded"))
            }
        },
    )
}

/// Our server with the agent `billing` over A2A, on a free port; stopped when dropped.
struct Served {
    base: String,
    /// The remote agent's model.
    model: ScriptedModel,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(refunds: &Arc<AtomicUsize>) -> Served {
    let model = ScriptedModel::per_run([
        Turn::call("c9", "refund", json!({"order": 7})),
        Turn::text("Refund done."),
    ]);
    let billing = Agent::builder(model.clone())
        .name("billing")
        .tool(refund_tool(refunds))
        .build()
        .unwrap();
    let server = Server::new().agent("billing", billing).a2a(A2a::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        server.serve(listener).await.unwrap();
    });
    Served { base, model, task }
}

/// Our agent `front`, with the remote `billing` as a tool.
async fn front(served: &Served) -> (Agent, ScriptedModel) {
    let billing = RemoteAgent::connect(format!("{}/agents/billing", served.base))
        .await
        .unwrap();
    let model = ScriptedModel::new([
        Turn::call("c1", "billing", json!({"message": "Refund order 7"})),
        Turn::text("Billing has answered."),
    ]);
    let agent = Agent::builder(model.clone())
        .name("front")
        .tool(billing.as_tool())
        .checkpoints(MemoryStore::new())
        .build()
        .unwrap();
    (agent, model)
}

#[tokio::test]
async fn an_approval_asked_by_our_remote_agent_crosses_the_boundary_both_ways() {
    let refunds = Arc::new(AtomicUsize::new(0));
    let served = serve(&refunds).await;
    let (front, _) = front(&served).await;

    let (_, stopped) = drain(front.run(AgentRequest::user("Refund order 7"))).await;
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(stopped.interrupts.len(), 1);
    let pending = &stopped.interrupts[0];
    // The remote run's own interrupt, behind our call's address.
    assert_eq!(pending.id, "agent:front/tool:c1/agent:billing/tool:c9");
    assert_eq!(pending.payload["description"], "Refund 40 EUR to order 7?");
    assert_eq!(refunds.load(Ordering::SeqCst), 0);

    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [(pending.id.clone(), Decision::Approve)],
    );
    let (_, done) = drain(front.run(resume)).await;
    assert_eq!(done.status, RunStatus::Completed);
    // The remote run resumed from its interrupt: the refund ran there, once.
    assert_eq!(refunds.load(Ordering::SeqCst), 1);
    assert_eq!(done.tool_record("c1").unwrap().content, "Refund done.");
    assert_eq!(done.final_message.content(), "Billing has answered.");
}

#[tokio::test]
async fn a_rejection_crosses_the_boundary_and_the_remote_tool_never_runs() {
    let refunds = Arc::new(AtomicUsize::new(0));
    let served = serve(&refunds).await;
    let (front, _) = front(&served).await;
    let (_, stopped) = drain(front.run(AgentRequest::user("Refund order 7"))).await;
    let pending = &stopped.interrupts[0];
    let reject = Decision::Reject {
        reason: "not without a receipt".to_owned(),
    };
    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [(pending.id.clone(), reject)],
    );
    let (_, done) = drain(front.run(resume)).await;
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(refunds.load(Ordering::SeqCst), 0);
    assert_eq!(done.tool_record("c1").unwrap().content, "Refund done.");
    // The remote model read the person's reason as its tool's result.
    let requests = served.model.requests();
    let last = requests.last().unwrap().messages.last().unwrap();
    assert!(
        last.content().contains("not without a receipt"),
        "{}",
        last.content()
    );
}
