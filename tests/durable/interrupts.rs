//! Interrupts from tools, wrappers, streams and hooks; resumed with each decision.

use futures::StreamExt;
use serde_json::json;
use tower_adk::agent::ResumeError;
use tower_adk::interrupt::{Decision, Interrupt, Resumed};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentConfig, AgentError, AgentEvent, AgentRequest, BoxError, Handler};
use tower_adk::{History, RunContext, RunStatus, Tool, ToolInfo, ToolRequest};

use super::{AskBefore, Counter, counted};

fn transfer_script() -> ScriptedModel {
    ScriptedModel::new([
        Turn::call("c1", "transfer", json!({"amount": 5, "to": "bob"})),
        Turn::text("Done."),
    ])
}

fn bank(model: ScriptedModel, runs: &Counter) -> Agent {
    Agent::builder(model)
        .name("bank")
        .tool(counted("transfer", runs))
        .build()
        .unwrap()
}

/// Runs with the approval wrapper until the interrupt; returns the result.
async fn interrupted(agent: &Agent) -> tower_adk::AgentResult {
    let request = AgentRequest::user("send 5 to bob").with_handler(AskBefore("transfer"));
    let result = agent.run(request).await.unwrap();
    assert_eq!(result.status, RunStatus::Interrupted);
    result
}

fn resume(result: &tower_adk::AgentResult, decision: Decision) -> AgentRequest {
    let id = result.interrupts[0].id.clone();
    AgentRequest::resume(result.checkpoint.clone().unwrap(), [(id, decision)])
        .with_handler(AskBefore("transfer"))
}

#[tokio::test]
async fn an_interrupted_call_names_its_address_call_and_payload_and_runs_once_approved() {
    let runs = Counter::default();
    let model = transfer_script();
    let agent = bank(model.clone(), &runs);

    let stopped = interrupted(&agent).await;
    assert_eq!(runs.get(), 0, "nothing ran before the approval");
    let pending = &stopped.interrupts[0];
    assert_eq!(pending.id, "agent:bank/tool:c1");
    let call = pending.call.as_ref().unwrap();
    assert_eq!((call.id.as_str(), call.name.as_str()), ("c1", "transfer"));
    assert_eq!(pending.payload["approve"], "transfer");
    assert_eq!(stopped.interrupts.len(), 1);
    assert_eq!(model.calls(), 1);

    let done = agent
        .run(resume(&stopped, Decision::Approve))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(done.final_message.content(), "Done.");
    assert_eq!(runs.get(), 1);
    let record = done.tool_record("c1").unwrap();
    assert_eq!(record.content, r#"transfer({"amount":5,"to":"bob"})"#);
    // The model's second call sees the history of the whole run, in one piece.
    let second = &model.requests()[1];
    assert_eq!(
        second.messages.tool_result("c1").unwrap().content(),
        record.content
    );
    assert_eq!(done.iterations, 2);
}

#[tokio::test]
async fn an_edit_runs_the_call_with_the_new_arguments_and_the_history_shows_them() {
    let runs = Counter::default();
    let model = transfer_script();
    let agent = bank(model.clone(), &runs);
    let stopped = interrupted(&agent).await;

    let edit = Decision::Edit {
        arguments: json!({"amount": 3, "to": "bob"}),
    };
    let done = agent.run(resume(&stopped, edit)).await.unwrap();
    assert_eq!(runs.get(), 1);
    assert_eq!(
        done.tool_record("c1").unwrap().content,
        r#"transfer({"amount":3,"to":"bob"})"#
    );
    let reply = &model.requests()[1].messages;
    let call = &reply.last_assistant().unwrap().tool_calls()[0];
    assert_eq!(call.arguments, r#"{"amount":3,"to":"bob"}"#);
}

#[tokio::test]
async fn an_invalid_edit_is_refused_and_the_checkpoint_stays_usable() {
    let runs = Counter::default();
    let agent = bank(transfer_script(), &runs);
    let stopped = interrupted(&agent).await;

    let bad = Decision::Edit {
        arguments: json!({"amount": "five"}),
    };
    let error = agent.run(resume(&stopped, bad)).await.unwrap_err();
    let AgentError::Resume(refused) = &error else {
        panic!("{error}")
    };
    let ResumeError::InvalidEdit { id, reason } = &**refused else {
        panic!("{refused}")
    };
    assert_eq!(id, "agent:bank/tool:c1");
    assert!(reason.contains("amount"), "{reason}");
    assert_eq!(runs.get(), 0);

    let done = agent
        .run(resume(&stopped, Decision::Approve))
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn a_rejected_call_never_reaches_its_tool_and_the_model_reads_the_reason() {
    let runs = Counter::default();
    let model = transfer_script();
    let agent = bank(model.clone(), &runs);
    let stopped = interrupted(&agent).await;

    let reject = Decision::Reject {
        reason: "not today".into(),
    };
    // Even without the wrapper that asked, the rejected call does not run.
    let request = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [(stopped.interrupts[0].id.clone(), reject)],
    );
    let done = agent.run(request).await.unwrap();
    assert_eq!(runs.get(), 0);
    let record = done.tool_record("c1").unwrap();
    assert!(!record.is_success());
    assert!(record.content.contains("not today"), "{}", record.content);
    let seen = model.requests()[1]
        .messages
        .tool_result("c1")
        .unwrap()
        .clone();
    assert!(seen.content().contains("not today"));
    assert!(seen.is_error());
}

#[tokio::test]
async fn a_response_is_the_calls_result_and_the_tool_does_not_run() {
    let runs = Counter::default();
    let model = transfer_script();
    let agent = bank(model.clone(), &runs);
    let stopped = interrupted(&agent).await;

    let respond = Decision::Respond {
        answer: json!("transferred by hand"),
    };
    let done = agent.run(resume(&stopped, respond)).await.unwrap();
    assert_eq!(runs.get(), 0);
    assert_eq!(
        done.tool_record("c1").unwrap().content,
        "transferred by hand"
    );
    let seen = &model.requests()[1].messages;
    assert_eq!(
        seen.tool_result("c1").unwrap().content(),
        "transferred by hand"
    );
}

#[tokio::test]
async fn of_three_parallel_calls_one_interrupts_and_the_others_never_run_twice() {
    let (search, transfer) = (Counter::default(), Counter::default());
    let model = ScriptedModel::new([
        Turn::call("a", "search", json!({"to": "x"}))
            .with_call("b", "transfer", json!({"amount": 1}))
            .with_call("c", "search", json!({"to": "y"})),
        Turn::text("All done."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(counted("search", &search))
        .tool(counted("transfer", &transfer))
        .build()
        .unwrap();
    let request = AgentRequest::user("go").with_handler(AskBefore("transfer"));
    let mut run = agent.run(request);
    let mut events = Vec::new();
    while let Some(event) = run.next().await {
        events.push(event.unwrap());
    }
    let Some(AgentEvent::Completed(stopped)) = events.last() else {
        panic!("the run ends with its result")
    };
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Interrupt(i) if i.id == "agent:agent/tool:b"))
    );
    // The calls that did not interrupt finished, and their results are kept.
    assert_eq!((search.get(), transfer.get()), (2, 0));
    let kept: Vec<&str> = stopped
        .tool_records
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(kept, ["a", "c"]);

    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [("agent:agent/tool:b", Decision::Approve)],
    )
    .with_handler(AskBefore("transfer"));
    let done = agent.run(resume).await.unwrap();
    assert_eq!((search.get(), transfer.get()), (2, 1), "nothing ran twice");
    let order: Vec<&str> = done
        .tool_records
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(order, ["a", "b", "c"], "the records keep the model's order");
    // The model's second request holds the three results, in the model's order.
    let ids: Vec<_> = model.requests()[1]
        .messages
        .iter()
        .filter_map(|m| m.tool_call_id().map(str::to_owned))
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
}

/// Asks for the customer's name before the first model call, and puts the answer in
/// the run's values.
struct AskName;

impl Handler for AskName {
    async fn before_model(&self, cx: &mut RunContext, _: &mut History) -> Result<(), BoxError> {
        if cx.locals().contains("name") {
            return Ok(());
        }
        match cx.decision() {
            Some(Decision::Respond { answer }) => {
                let answer = answer.clone();
                cx.locals_mut().insert("name", &answer)?;
                Ok(())
            }
            _ => Err(Interrupt::new(json!({"question": "name?"})).into()),
        }
    }
}

/// Notes whether `before_agent` saw the `Resumed` marker.
struct SeesResumed;

impl Handler for SeesResumed {
    async fn before_agent(
        &self,
        cx: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        let resumed = cx.extensions().get::<Resumed>().is_some();
        let count = cx.locals().get::<u32>("starts")?.unwrap_or(0) + 1;
        cx.locals_mut().insert("starts", &count)?;
        cx.locals_mut().insert("resumed", &resumed)?;
        Ok(config)
    }
}

#[tokio::test]
async fn a_hook_interrupts_and_reads_its_answer_when_it_runs_again() {
    let model = ScriptedModel::new([Turn::text("Hello, Ada.")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let request = AgentRequest::user("hi")
        .with_handler(SeesResumed)
        .with_handler(AskName);
    let stopped = agent.run(request).await.unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(model.calls(), 0, "the model was not called");
    let pending = &stopped.interrupts[0];
    assert!(pending.call.is_none());
    assert!(
        pending.id.starts_with("agent:agent/before_model:") && pending.id.ends_with("AskName"),
        "{}",
        pending.id
    );
    assert_eq!(stopped.locals.get::<bool>("resumed").unwrap(), Some(false));

    // Edits are for tool calls only.
    let edit = Decision::Edit {
        arguments: json!({}),
    };
    let checkpoint = stopped.checkpoint.clone().unwrap();
    let wrong = agent
        .run(AgentRequest::resume(
            checkpoint.clone(),
            [(pending.id.clone(), edit)],
        ))
        .await
        .unwrap_err();
    assert!(
        matches!(&wrong, AgentError::Resume(e) if matches!(**e, ResumeError::WrongDecision { .. }))
    );

    let answer = Decision::Respond {
        answer: json!("Ada"),
    };
    let resume = AgentRequest::resume(checkpoint, [(pending.id.clone(), answer)])
        .with_handler(SeesResumed)
        .with_handler(AskName);
    let done = agent.run(resume).await.unwrap();
    assert_eq!(done.final_message.content(), "Hello, Ada.");
    assert_eq!(
        done.locals.get::<String>("name").unwrap().as_deref(),
        Some("Ada")
    );
    // `before_agent` ran again, seeing the marker; the run's values were kept.
    assert_eq!(done.locals.get::<u32>("starts").unwrap(), Some(2));
    assert_eq!(done.locals.get::<bool>("resumed").unwrap(), Some(true));
    assert_eq!(
        done.iterations, 1,
        "the interrupted model call is the same iteration"
    );
    // The system message and the input are in the history once.
    assert_eq!(model.requests()[0].messages.len(), 1);
}

#[tokio::test]
async fn a_streaming_tool_interrupts_mid_stream_and_streams_again_once_approved() {
    let runs = Counter::default();
    let counter = runs.clone();
    let info = ToolInfo::new("deploy", "Deploys, streaming its progress");
    let deploy = Tool::stream_fn(info, move |request: ToolRequest| {
        counter.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let approved = request.decision().is_some();
        futures::stream::iter([
            Ok::<_, BoxError>("building ".to_owned()),
            if approved {
                Ok("deployed".to_owned())
            } else {
                Err(Interrupt::new(json!({"confirm": "deploy to production?"})).into())
            },
        ])
    });
    let model = ScriptedModel::new([Turn::call("d1", "deploy", json!({})), Turn::text("Live.")]);
    let agent = Agent::builder(model).tool(deploy).build().unwrap();

    let mut run = agent.run(AgentRequest::user("ship it"));
    let mut chunks = Vec::new();
    let mut stopped = None;
    while let Some(event) = run.next().await {
        match event.unwrap() {
            AgentEvent::ToolOutputChunk { chunk, .. } => chunks.push(chunk),
            AgentEvent::Completed(result) => stopped = Some(result),
            _ => {}
        }
    }
    let stopped = stopped.unwrap();
    assert_eq!(chunks, ["building "]);
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(
        stopped.interrupts[0].payload["confirm"],
        "deploy to production?"
    );
    assert!(
        stopped.tool_records.is_empty(),
        "the interrupted call has no record"
    );

    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [("agent:agent/tool:d1", Decision::Approve)],
    );
    let done = agent.run(resume).await.unwrap();
    assert_eq!(done.tool_record("d1").unwrap().content, "building deployed");
    assert_eq!(runs.get(), 2, "the call ran again from the start");
    assert_eq!(done.final_message.content(), "Live.");
}

#[tokio::test]
async fn a_tool_reads_an_idempotency_key_that_is_the_same_after_a_resume() {
    let keys = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = keys.clone();
    let info = ToolInfo::new("charge", "Charges once");
    let charge = Tool::from_fn(info, move |request: ToolRequest| {
        let seen = seen.clone();
        async move {
            let key = request.idempotency_key().unwrap();
            seen.lock().unwrap().push(key.to_string());
            if request.decision().is_none() {
                return Err(Interrupt::new(json!("charge?")).into());
            }
            Ok::<_, BoxError>(tower_adk::ToolOutput::new("charged"))
        }
    });
    let model = ScriptedModel::new([Turn::call("k1", "charge", json!({})), Turn::text("ok")]);
    let agent = Agent::builder(model).tool(charge).build().unwrap();
    let stopped = agent.run(AgentRequest::user("charge")).await.unwrap();
    let checkpoint = stopped.checkpoint.clone().unwrap();
    let resume = AgentRequest::resume(
        checkpoint.clone(),
        [("agent:agent/tool:k1", Decision::Approve)],
    );
    agent.run(resume).await.unwrap();
    let keys = keys.lock().unwrap().clone();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], keys[1]);
    assert_eq!(keys[0], format!("{}/k1", checkpoint.run));
}

#[tokio::test]
async fn a_history_with_dangling_calls_is_repaired_before_the_model_sees_it() {
    use tower_adk::{Message, ToolCall};
    let model = ScriptedModel::new([Turn::text("Let us start again.")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let input = vec![
        Message::user("book"),
        Message::assistant_with_calls("", vec![ToolCall::new("x1", "book", json!({}))]),
        Message::user("hello?"),
    ];
    agent.run(AgentRequest::new(input)).await.unwrap();
    let sent = &model.requests()[0].messages;
    let result = sent.tool_result("x1").unwrap();
    assert!(result.is_error());
    assert_eq!(sent[2].tool_call_id(), Some("x1"), "right after its call");
}

#[tokio::test]
async fn call_limit_counts_go_on_from_where_they_were_after_a_resume() {
    use tower_adk::ToolErrorKind;
    use tower_adk::handlers::{CallLimits, OnLimit};
    let (search, transfer) = (Counter::default(), Counter::default());
    let model = ScriptedModel::new([
        Turn::call("c1", "search", json!({})).with_call("c2", "transfer", json!({})),
        Turn::call("c3", "search", json!({})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(counted("search", &search))
        .tool(counted("transfer", &transfer))
        .build()
        .unwrap();
    let limits = || {
        CallLimits::new()
            .per_tool("search", 1)
            .on_limit(OnLimit::AnswerModel)
    };
    let request = AgentRequest::user("go")
        .with_handler(limits())
        .with_handler(AskBefore("transfer"));
    let stopped = agent.run(request).await.unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);

    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [("agent:agent/tool:c2", Decision::Approve)],
    )
    .with_handler(limits())
    .with_handler(AskBefore("transfer"));
    let done = agent.run(resume).await.unwrap();
    // The search before the interrupt counts: the one after it is over the limit.
    let over = done
        .tool_record("c3")
        .unwrap()
        .error
        .as_ref()
        .map(|e| e.kind());
    assert_eq!(over, Some(ToolErrorKind::LimitReached));
    assert_eq!((search.get(), transfer.get()), (1, 1));
}

/// Asks once before the model is called; lets the call through when approved.
struct AskBeforeModel;

impl Handler for AskBeforeModel {
    async fn wrap_model(
        &self,
        request: tower_adk::ModelRequest,
        next: tower_adk::ModelNext,
    ) -> Result<tower_adk::ModelResponse, BoxError> {
        match request.decision() {
            Some(decision) if decision.allows_call() => next.run(request).await,
            Some(_) => Err("refused by a person".into()),
            None => Err(Interrupt::new(json!("call the model?")).into()),
        }
    }
}

#[tokio::test]
async fn a_model_wrapper_interrupts_and_its_call_runs_once_approved() {
    let model = ScriptedModel::new([Turn::text("hi")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let stopped = agent
        .run(AgentRequest::user("hello").with_handler(AskBeforeModel))
        .await
        .unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    assert_eq!(model.calls(), 0);
    let id = stopped.interrupts[0].id.clone();
    assert!(id.starts_with("agent:agent/wrap_model:"), "{id}");
    let resume = AgentRequest::resume(
        stopped.checkpoint.clone().unwrap(),
        [(id, Decision::Approve)],
    )
    .with_handler(AskBeforeModel);
    let done = agent.run(resume).await.unwrap();
    assert_eq!(done.final_message.content(), "hi");
    assert_eq!((done.iterations, model.calls()), (1, 1));
}
