//! A thousand runs interrupted at once, resumed at once: each resumes its own.

use futures::future::join_all;
use serde_json::json;
use tower::service_fn;
use tower_adk::interrupt::Decision;
use tower_adk::{Agent, AgentRequest, BoxError, Message, ModelRequest, ModelResponse, RunStatus};

use super::{AskBefore, Counter, counted};

/// A model that sends the user's text to `transfer`, then says what the tool answered.
async fn echo(request: ModelRequest) -> Result<ModelResponse, BoxError> {
    {
        let last = request.messages.last().cloned();
        let reply = match last {
            Some(Message::User { content }) => {
                let call = tower_adk::ToolCall::new("c", "transfer", json!({"to": content}));
                Message::assistant_with_calls("", vec![call])
            }
            Some(other) => Message::assistant(format!("result: {}", other.content())),
            None => Message::assistant("?"),
        };
        Ok(ModelResponse::message(reply))
    }
}

#[tokio::test]
async fn a_thousand_interrupted_runs_resume_concurrently_with_no_checkpoint_mixed_up() {
    const RUNS: usize = 1000;
    let runs = Counter::default();
    let agent = Agent::builder(service_fn(echo))
        .tool(counted("transfer", &runs))
        .build()
        .unwrap();
    let stopped = join_all((0..RUNS).map(|i| {
        let request = AgentRequest::user(format!("user-{i}")).with_handler(AskBefore("transfer"));
        agent.run(request).into_future()
    }))
    .await;
    let mut checkpoints = Vec::new();
    for (i, result) in stopped.into_iter().enumerate() {
        let result = result.unwrap();
        assert_eq!(result.status, RunStatus::Interrupted);
        assert_eq!(
            result.interrupts[0].payload["arguments"]["to"],
            format!("user-{i}")
        );
        checkpoints.push(result.checkpoint.unwrap());
    }
    assert_eq!(runs.get(), 0);

    let done = join_all(checkpoints.iter().map(|checkpoint| {
        let resume = AgentRequest::resume(
            checkpoint.clone(),
            [("agent:agent/tool:c", Decision::Approve)],
        )
        .with_handler(AskBefore("transfer"));
        agent.run(resume).into_future()
    }))
    .await;
    for (i, result) in done.into_iter().enumerate() {
        let result = result.unwrap();
        let expected = format!(r#"result: transfer({{"to":"user-{i}"}})"#);
        assert_eq!(result.final_message.content(), expected);
    }
    assert_eq!(runs.get(), RUNS);
}
