//! Every setting of a file, seen through a run with the scripted model.

use std::time::{Duration, SystemTime};

use serde_json::json;
use tower::ServiceExt;
use tower_adk::file::{FileAgent, Registry, Role};
use tower_adk::futures::StreamExt;
use tower_adk::handlers::{SlotValue, SlotValues};
use tower_adk::testing::{sleep_tool, text_tool};
use tower_adk::{AgentError, AgentEvent, AgentRequest, AgentResult, RunStatus, ToolErrorKind};

use super::support::{agent, scripted};

async fn run(agent: &FileAgent, request: AgentRequest) -> Result<AgentResult, AgentError> {
    match agent.clone().oneshot(request).await {
        Ok(run) => run.await,
        Err(never) => match never {},
    }
}

/// Every event of a run of `request`, in order.
async fn events(agent: &FileAgent, request: AgentRequest) -> Vec<Result<AgentEvent, AgentError>> {
    match agent.clone().oneshot(request).await {
        Ok(run) => run.collect().await,
        Err(never) => match never {},
    }
}

fn user(text: &str) -> AgentRequest {
    AgentRequest::user(text)
}

#[tokio::test]
async fn the_prompt_template_renders_the_description_date_time_and_timezone() {
    let text = format!(
        "name: clock\ndescription: You tell the time.\n{}prompt: '{{{{ description }}}} Be exact.'\ninclude_date_time: true\ntimezone: Asia/Tokyo\n",
        scripted("[{text: ok}]")
    );
    let agent = agent(&text, &Registry::new()).await;
    run(&agent, user("time?")).await.expect("runs");
    let seen = agent.scripted_model().expect("scripted").requests();
    let instruction = seen[0].messages[0].content().to_owned();
    assert!(
        instruction.starts_with("You tell the time. Be exact.\n\nCurrent date and time: "),
        "{instruction}"
    );
    assert!(instruction.ends_with("(Asia/Tokyo)."), "{instruction}");
}

#[tokio::test]
async fn the_description_alone_is_the_instruction() {
    let text = format!(
        "description: You answer in French.\n{}",
        scripted("[{text: oui}]")
    );
    let agent = agent(&text, &Registry::new()).await;
    run(&agent, user("hi")).await.expect("runs");
    let seen = agent.scripted_model().expect("scripted").requests();
    assert_eq!(seen[0].messages[0].content(), "You answer in French.");
}

#[tokio::test]
async fn a_prompt_file_is_read_relative_to_the_agent_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/agent_file_tests/prompt_file");
    std::fs::create_dir_all(dir.join("prompts")).expect("dir");
    std::fs::write(
        dir.join("prompts/p.jinja2"),
        "From the file: {{ description }}",
    )
    .expect("prompt");
    let text = format!(
        "description: d\nprompt_file: prompts/p.jinja2\n{}",
        scripted("[{text: ok}]")
    );
    std::fs::write(dir.join("agent.yaml"), text).expect("agent file");
    let file = tower_adk::file::AgentFile::from_path(dir.join("agent.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let agent = super::support::build(file, &Registry::new()).await;
    run(&agent, user("hi")).await.expect("runs");
    let seen = agent.scripted_model().expect("scripted").requests();
    assert_eq!(seen[0].messages[0].content(), "From the file: d");
}

#[tokio::test]
async fn environment_variables_are_substituted() {
    let text = format!(
        "description: 'Shop ${{SHOP}}, $${{literal}}'\n{}",
        scripted("[{text: ok}]")
    );
    let registry = Registry::new();
    let file = super::support::read_with(&text, &registry, &[("SHOP", "Acme")]).expect("reads");
    assert_eq!(file.description(), "Shop Acme, ${literal}");
}

#[tokio::test]
async fn model_options_are_sent_with_each_call() {
    let text = "model:\n  provider: scripted\n  temperature: 0.5\n  max_tokens: 64\n  top_p: 0.9\n  seed: 7\n  stop: [END]\n  turns: [{text: ok}]\n";
    let agent = agent(text, &Registry::new()).await;
    run(&agent, user("hi")).await.expect("runs");
    let options = &agent.scripted_model().expect("scripted").requests()[0].options;
    assert_eq!(options.temperature, Some(0.5));
    assert_eq!(options.max_tokens, Some(64));
    assert_eq!(options.top_p, Some(0.9));
    assert_eq!(options.seed, Some(7));
    assert_eq!(options.stop, ["END"]);
}

#[tokio::test]
async fn max_iterations_bounds_the_model_calls() {
    let turns = "[{call: {tool: ping}}, {call: {tool: ping}}, {call: {tool: ping}}, {text: done}]";
    let text = format!("{}tools: [ping]\nmax_iterations: 2\n", scripted(turns));
    let agent = agent(&text, &Registry::new().tool(text_tool("ping", "pong"))).await;
    let error = run(&agent, user("go")).await.expect_err("stops");
    assert!(
        matches!(error, AgentError::MaxIterations { limit: 2 }),
        "{error}"
    );
}

#[tokio::test(start_paused = true)]
async fn timeout_is_a_deadline_for_the_whole_run() {
    let text = format!("{}timeout: 5s\n", scripted("[{text: late, delay: 1m}]"));
    let agent = agent(&text, &Registry::new()).await;
    let error = run(&agent, user("hi")).await.expect_err("times out");
    assert_eq!(error.code(), "run_timeout");
}

#[tokio::test(start_paused = true)]
async fn tool_timeout_is_a_deadline_for_each_tool_call() {
    let text = format!(
        "{}tools: [slow]\ntool_timeout: 2s\n",
        scripted("[{call: {tool: slow, id: c1}}, {text: gave up}]")
    );
    let registry = Registry::new().tool(sleep_tool("slow", Duration::from_secs(60), "finally"));
    let agent = agent(&text, &registry).await;
    let result = run(&agent, user("go")).await.expect("runs");
    let record = result.tool_record("c1").expect("record");
    assert_eq!(
        record.error.as_ref().map(|e| e.kind()),
        Some(ToolErrorKind::Timeout)
    );
}

#[tokio::test]
async fn filler_messages_can_be_switched_off() {
    let turns = "[{text: 'Looking it up.', call: {tool: ping}}, {text: done}]";
    for (on, expected) in [("true", 1), ("false", 0)] {
        let text = format!("{}tools: [ping]\nfiller_messages: {on}\n", scripted(turns));
        let agent = agent(&text, &Registry::new().tool(text_tool("ping", "pong"))).await;
        let events = events(&agent, user("go")).await;
        let fillers = events
            .iter()
            .filter(|e| matches!(e, Ok(AgentEvent::Filler(_))))
            .count();
        assert_eq!(fillers, expected, "filler_messages: {on}");
    }
}

#[tokio::test]
async fn return_directly_ends_the_run_with_the_tools_result() {
    let text = format!(
        "{}tools: [answer]\nreturn_directly: [answer]\n",
        scripted("[{call: {tool: answer}}, {text: never}]")
    );
    let agent = agent(&text, &Registry::new().tool(text_tool("answer", "42"))).await;
    let result = run(&agent, user("?")).await.expect("runs");
    assert_eq!(result.final_message.content(), "42");
    assert_eq!(agent.scripted_model().expect("scripted").calls(), 1);
}

#[tokio::test]
async fn parallel_tool_calls_of_zero_is_refused_and_one_is_accepted() {
    let problems = super::support::problems(&format!(
        "{}parallel_tool_calls: 0\n",
        scripted("[{text: ok}]")
    ));
    assert_eq!(
        super::support::places(&problems),
        [(tower_adk::file::ProblemKind::InvalidValue, 4, 22)]
    );
    let agent = agent(
        &format!("{}parallel_tool_calls: 1\n", scripted("[{text: ok}]")),
        &Registry::new(),
    )
    .await;
    assert_eq!(
        run(&agent, user("hi"))
            .await
            .expect("runs")
            .final_message
            .content(),
        "ok"
    );
}

const SHOP: &str = "tools: [read, delete]\nhandlers:\n  - role_filter:\n      roles: {admin: ['*'], viewer: [read]}\n      default: []\n";

#[tokio::test]
async fn role_filter_shows_each_role_its_tools() {
    let text = format!("{}{SHOP}", scripted("[{text: ok}]"));
    let registry = Registry::new()
        .tool(text_tool("read", "data"))
        .tool(text_tool("delete", "gone"));
    let shop = agent(&text, &registry).await;
    assert_eq!(shop.roles(), ["admin", "viewer"]);
    assert_eq!(
        shop.preview(Some("admin"))
            .await
            .expect("preview")
            .tool_names(),
        ["read", "delete"]
    );
    assert_eq!(
        shop.preview(Some("viewer"))
            .await
            .expect("preview")
            .tool_names(),
        ["read"]
    );
    assert!(shop.preview(None).await.expect("preview").tools.is_empty());

    // Through a run: the viewer's call of `delete` is an unknown tool, never executed.
    let text = format!(
        "{}{SHOP}",
        scripted("[{call: {tool: delete, id: c1}}, {text: ok}]")
    );
    let agent = agent(&text, &registry).await;
    let request = user("delete it").with_extension(Role::new("viewer"));
    let result = run(&agent, request).await.expect("runs");
    let seen = agent.scripted_model().expect("scripted").requests();
    assert_eq!(seen[0].tool_names().collect::<Vec<_>>(), ["read"]);
    let record = result.tool_record("c1").expect("record");
    assert_eq!(
        record.error.as_ref().map(|e| e.kind()),
        Some(ToolErrorKind::UnknownTool)
    );
}

#[tokio::test]
async fn approval_interrupts_with_the_files_description_and_decisions() {
    let text = format!(
        "name: shop\n{}tools: [refund]\nhandlers:\n  - approval:\n      tools:\n        refund: {{description: Refund this?, allow: [approve, reject]}}\n",
        scripted("[{call: {tool: refund, id: c1}}, {text: refunded}]")
    );
    let agent = agent(&text, &Registry::new().tool(text_tool("refund", "done"))).await;
    let result = run(&agent, user("refund")).await.expect("runs");
    assert_eq!(result.status, RunStatus::Interrupted);
    let asked = &result.interrupts[0];
    assert_eq!(asked.id, "agent:shop/tool:c1");
    assert_eq!(asked.payload["description"], "Refund this?");
    assert_eq!(asked.payload["allowed"], json!(["approve", "reject"]));

    let checkpoint = result.checkpoint.clone().expect("checkpoint");
    let resume = AgentRequest::resume(
        checkpoint,
        [(asked.id.clone(), tower_adk::interrupt::Decision::Approve)],
    );
    let done = run(&agent, resume).await.expect("resumes");
    assert_eq!(done.tool_record("c1").expect("record").content, "done");
    assert_eq!(done.final_message.content(), "refunded");
}

#[tokio::test]
async fn policy_denies_with_the_files_reason_and_asks_a_person() {
    let text = format!(
        "{}tools: [close, refund]\nhandlers:\n  - policy: {{deny: {{close: back office only}}, ask: [refund]}}\n",
        scripted("[{call: {tool: close, id: c1}}, {call: {tool: refund, id: c2}}, {text: never}]")
    );
    let registry = Registry::new()
        .tool(text_tool("close", "closed"))
        .tool(text_tool("refund", "done"));
    let agent = agent(&text, &registry).await;
    let result = run(&agent, user("go")).await.expect("runs");
    let denied = result.tool_record("c1").expect("record");
    assert_eq!(
        denied.error.as_ref().map(|e| e.kind()),
        Some(ToolErrorKind::Denied)
    );
    assert!(
        denied.content.contains("back office only"),
        "{}",
        denied.content
    );
    assert_eq!(result.status, RunStatus::Interrupted);
    assert!(result.interrupts[0].id.ends_with("tool:c2"));
}

#[tokio::test]
async fn call_limits_answer_the_call_over_the_limit() {
    let text = format!(
        "{}tools: [ping]\nhandlers:\n  - call_limits: {{per_tool: {{ping: 1}}, on_limit: answer_model}}\n",
        scripted("[{calls: [{tool: ping, id: c1}, {tool: ping, id: c2}]}, {text: done}]")
    );
    let agent = agent(&text, &Registry::new().tool(text_tool("ping", "pong"))).await;
    let result = run(&agent, user("go")).await.expect("runs");
    let kinds: Vec<_> = ["c1", "c2"]
        .iter()
        .map(|id| {
            result
                .tool_record(id)
                .expect("record")
                .error
                .as_ref()
                .map(|e| e.kind())
        })
        .collect();
    assert_eq!(kinds, [None, Some(ToolErrorKind::LimitReached)]);
}

#[tokio::test]
async fn output_cap_and_envelope_shape_what_the_model_reads() {
    let text = format!(
        "{}tools: [long]\nhandlers:\n  - envelope: {{note: FROM A TOOL}}\n  - output_cap: {{max_chars: 10}}\n",
        scripted("[{call: {tool: long, id: c1}}, {text: done}]")
    );
    let agent = agent(
        &text,
        &Registry::new().tool(text_tool("long", &"x".repeat(100))),
    )
    .await;
    let result = run(&agent, user("go")).await.expect("runs");
    let content = &result.tool_record("c1").expect("record").content;
    assert!(content.contains("FROM A TOOL"), "{content}");
    assert!(
        content.contains(&"x".repeat(10)) && !content.contains(&"x".repeat(11)),
        "{content}"
    );
}

#[tokio::test]
async fn stop_at_tool_ends_the_run_at_its_call() {
    let text = format!(
        "{}tools: [handoff]\nhandlers:\n  - stop_at_tool: {{on_call: [handoff]}}\n",
        scripted("[{call: {tool: handoff, id: c1}}, {text: never}]")
    );
    let agent = agent(
        &text,
        &Registry::new().tool(text_tool("handoff", "to a person")),
    )
    .await;
    let result = run(&agent, user("help")).await.expect("runs");
    assert_eq!(result.final_message.content(), "to a person");
    assert_eq!(agent.scripted_model().expect("scripted").calls(), 1);
}

#[tokio::test]
async fn task_completed_ends_a_general_purpose_agent_with_its_closing_text() {
    let text = format!(
        "{}handlers:\n  - task_completed: {{description: Call when done.}}\n",
        scripted("[{text: All set., call: {tool: task_completed}}, {text: never}]")
    );
    let agent = agent(&text, &Registry::new()).await;
    let result = run(&agent, user("thanks")).await.expect("runs");
    assert_eq!(result.final_message.content(), "All set.");
    let seen = agent.scripted_model().expect("scripted").requests();
    assert_eq!(seen[0].tools[0].description, "Call when done.");
}

#[tokio::test]
async fn slots_end_a_task_specific_agent_when_exit_if_holds() {
    let text = format!(
        "{}handlers:\n  - slots:\n      slots:\n        - {{name: city}}\n        - {{name: room, type: categorical, values: [single, double]}}\n        - {{name: note}}\n      exit_if: [\"slots.room == 'double'\"]\n",
        scripted(
            "[{call: {tool: set_slot_room, arguments: {value: single}}}, {call: {tool: set_slot_room, arguments: {value: double}}}, {text: never}]"
        )
    );
    let agent = agent(&text, &Registry::new()).await;
    let result = run(&agent, user("a room")).await.expect("runs");
    assert_eq!(
        agent.scripted_model().expect("scripted").calls(),
        2,
        "ends once the room is double"
    );
    let slots = SlotValues::from_locals(&result.locals).expect("slots");
    assert_eq!(
        slots.get("room").and_then(SlotValue::as_str),
        Some("double")
    );
    let seen = agent.scripted_model().expect("scripted").requests();
    let tools: Vec<_> = seen[0].tool_names().collect();
    assert_eq!(tools, ["set_slot_city", "set_slot_room", "set_slot_note"]);
}

#[tokio::test]
async fn a_value_outside_a_categorical_slot_is_refused() {
    let text = format!(
        "{}handlers:\n  - slots: {{slots: [{{name: room, type: categorical, values: [single]}}]}}\n",
        scripted(
            "[{call: {tool: set_slot_room, id: c1, arguments: {value: suite}}}, {text: which?}]"
        )
    );
    let agent = agent(&text, &Registry::new()).await;
    let result = run(&agent, user("a suite")).await.expect("runs");
    let record = result.tool_record("c1").expect("record");
    assert_eq!(
        record.error.as_ref().map(|e| e.kind()),
        Some(ToolErrorKind::InvalidArguments)
    );
}

#[tokio::test]
async fn durable_runs_checkpoint_each_finished_turn_in_the_files_store() {
    let turns = "[{call: {tool: ping, id: c1}}, {text: never, delay: 10m}]";
    let text = format!(
        "name: durable_one\n{}tools: [ping]\ncheckpoints: {{store: memory, durable: true}}\n",
        scripted(turns)
    );
    let agent = agent(&text, &Registry::new().tool(text_tool("ping", "pong"))).await;
    assert_eq!(agent.name(), "durable_one");
    assert_eq!(agent.agent().name(), "durable_one");
    let run = tokio::spawn(run_owned(agent.clone(), user("go").on_thread("job")));
    // While the second model call waits, the first turn is in the store already.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let head = agent.agent().last_checkpoint("job").await.expect("reads");
        if let Some((_, checkpoint)) = head.filter(|(_, c)| c.run.records().count() == 1) {
            assert_eq!(
                checkpoint.status,
                tower_adk::agent::CheckpointStatus::Running
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no checkpoint of the first turn"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    run.abort();
}

async fn run_owned(agent: FileAgent, request: AgentRequest) -> Result<AgentResult, AgentError> {
    run(&agent, request).await
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn a_sqlite_store_is_opened_from_its_url() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent_file_tests/sqlite");
    std::fs::create_dir_all(&dir).expect("dir");
    let db = dir.join("agent.db");
    let _ = std::fs::remove_file(&db);
    let text = format!(
        "{}checkpoints: {{store: 'sqlite:{}'}}\n",
        scripted("[{text: ok}]"),
        db.display()
    );
    let agent = agent(&text, &Registry::new()).await;
    run(&agent, user("hi").on_thread("t1")).await.expect("runs");
    assert!(db.exists(), "the store's file was created");
    assert!(
        agent
            .agent()
            .last_checkpoint("t1")
            .await
            .expect("reads")
            .is_some()
    );
}

#[tokio::test]
async fn a_streamed_scripted_turn_arrives_in_its_chunks() {
    let text = scripted("[{stream: ['Order 7 ', 'arrives ', 'tomorrow.']}]");
    let agent = agent(&text, &Registry::new()).await;
    let events = events(&agent, user("where?")).await;
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Ok(AgentEvent::TextDelta(delta)) => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["Order 7 ", "arrives ", "tomorrow."]);
}

#[tokio::test]
async fn the_prompt_substitutes_environment_variables() {
    let text = format!(
        "{}prompt: \"Hello ${{ADK_TEST_NAME}}, {{{{ 1 + 1 }}}}\"\n",
        scripted("[{text: ok}]")
    );
    let registry = Registry::new();
    let vars = [("ADK_TEST_NAME", "Ada")];
    let file = super::support::read_with(&text, &registry, &vars).expect("reads");
    let agent = super::support::build(file, &registry).await;
    run(&agent, user("hi")).await.expect("runs");
    let seen = agent.scripted_model().expect("scripted").requests();
    assert_eq!(seen[0].messages[0].content(), "Hello Ada, 2");
}

#[tokio::test]
async fn exit_if_may_call_a_method_on_a_slot() {
    let text = format!(
        "{}handlers:\n  - slots:\n      slots: [{{name: city}}, {{name: note}}]\n      exit_if: [\"slots.city is not none and slots.city.lower() == 'paris'\"]\n",
        scripted("[{call: {tool: set_slot_city, arguments: {value: Paris}}}, {text: never}]")
    );
    let agent = agent(&text, &Registry::new()).await;
    run(&agent, user("Paris")).await.expect("runs");
    assert_eq!(agent.scripted_model().expect("scripted").calls(), 1);
}

#[tokio::test]
async fn a_registrys_clock_fixes_the_date_and_time_the_prompt_gives() {
    let text = format!(
        "{}include_date_time: true\ntimezone: Europe/Berlin\n",
        scripted("[{text: ok}, {text: ok}]")
    );
    // 2026-03-29 01:30 UTC: 03:30 in Berlin, which moved to summer time at 01:00 UTC.
    let fixed = SystemTime::UNIX_EPOCH + Duration::from_secs(1_774_747_800);
    let agent = agent(&text, &Registry::new().clock(move || fixed)).await;
    run(&agent, user("time?")).await.expect("runs");
    run(&agent, user("and now?")).await.expect("runs");
    let seen = agent.scripted_model().expect("scripted").requests();
    for request in &seen {
        assert_eq!(
            request.messages[0].content(),
            "Current date and time: Sunday, 2026-03-29 03:30 (Europe/Berlin)."
        );
    }
}
