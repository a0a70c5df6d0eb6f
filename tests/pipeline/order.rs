//! The documented order of the pipeline: validate, policy, pre-transforms, tool wrappers,
//! tool, post-transforms; then the limit and the envelope.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use serde_json::json;
use tower::{ServiceBuilder, ServiceExt};
use tower_adk::handlers::{
    Decision, ToolGuard, map_arguments, map_output, map_output_chunks, max_output_bytes,
    max_output_chars, policy, untrusted_envelope, wrap_tool_invoke, wrap_tool_stream,
};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{
    Agent, AgentRequest, HandlerLayer, Tool, ToolErrorKind, ToolInfo, ToolOutput, ToolRequest,
};

use crate::{Log, counted_stream, n_schema, one_call, run_with_chunks};

/// A guard whose policy rewrites `n` to 2 and whose pre-transform sets it to 3, logging
/// what each stage sees; its post-transform logs the output (whole or per chunk).
fn logging_guard(log: &Log, per_chunk: bool) -> ToolGuard<impl tower_adk::handlers::Policy> {
    let (policy_log, pre_log, post_log) = (log.clone(), log.clone(), log.clone());
    let post = move |text: String| {
        post_log.push(format!("post {text}"));
        text
    };
    ToolGuard::new()
        .policy(policy(move |call| {
            policy_log.push(format!("policy {} {}", call.call_id, call.arguments));
            Decision::rewrite(json!({"n": 2}))
        }))
        .pre(map_arguments(move |call| {
            pre_log.push(format!("pre {}", call.arguments));
            if let Some(arguments) = call.arguments.as_object_mut() {
                arguments.insert("n".into(), json!(3));
            }
        }))
        .post(if per_chunk {
            map_output_chunks(post)
        } else {
            map_output(post)
        })
}

/// The model first sends invalid arguments (stopped by validation), then valid ones.
fn invalid_then_valid() -> ScriptedModel {
    ScriptedModel::new([
        Turn::call("c1", "t", json!({"n": "one"})),
        Turn::call("c2", "t", json!({"n": 1})),
        Turn::text("done"),
    ])
}

#[tokio::test]
async fn an_invoked_call_goes_validate_policy_pre_wrappers_tool_post() {
    let log = Log::default();
    let tool_log = log.clone();
    let tool = Tool::from_fn(
        ToolInfo::new("t", "Logs its call.").parameters(n_schema()),
        move |req: ToolRequest| {
            tool_log.push(format!("tool {}", req.arguments));
            async { Ok::<_, Infallible>(ToolOutput::new("out")) }
        },
    );
    let agent = Agent::builder(invalid_then_valid())
        .tool(tool)
        .build()
        .unwrap();
    // The guard on the agent's layer (outermost), another wrapper on the request.
    let agent = ServiceBuilder::new()
        .layer(HandlerLayer::new(logging_guard(&log, false)))
        .service(agent);
    let wrapper_log = log.clone();
    let wrapper = wrap_tool_invoke(move |req, next| {
        let log = wrapper_log.clone();
        async move {
            log.push(format!("wrapper-before {}", req.arguments));
            let mut output = next.run(req).await?;
            log.push(format!("wrapper-after {}", output.content));
            output.content = format!("wrapped({})", output.content);
            Ok(output)
        }
    });

    let run = agent
        .oneshot(AgentRequest::user("go").with_handler(wrapper))
        .await
        .unwrap();
    let result = run.await.unwrap();

    // c1 was stopped by validation before the policy saw it; c2 went through every stage.
    assert_eq!(
        result.tool_records[0].error.as_ref().map(|e| e.kind()),
        Some(ToolErrorKind::InvalidArguments)
    );
    assert_eq!(
        log.entries(),
        [
            r#"policy c2 {"n":1}"#,
            r#"pre {"n":2}"#,
            r#"wrapper-before {"n":3}"#,
            r#"tool {"n":3}"#,
            "wrapper-after out",
            "post wrapped(out)",
        ]
    );
    assert_eq!(result.tool_records[1].content, "wrapped(out)");
}

#[tokio::test]
async fn a_streamed_call_goes_validate_policy_pre_wrappers_tool_post() {
    let log = Log::default();
    let tool_log = log.clone();
    let tool = Tool::stream_fn(
        ToolInfo::new("t", "Logs its call.").parameters(n_schema()),
        move |req: ToolRequest| {
            tool_log.push(format!("tool {}", req.arguments));
            futures::stream::iter([Ok::<_, Infallible>("a"), Ok("b")])
        },
    );
    let agent = Agent::builder(invalid_then_valid())
        .tool(tool)
        .build()
        .unwrap();
    let wrapper_log = log.clone();
    let wrapper = wrap_tool_stream(move |req, next| {
        let log = wrapper_log.clone();
        async move {
            log.push(format!("wrapper-before {}", req.arguments));
            let chunks = next.run(req).await?;
            log.push("wrapper-after");
            let chunk_log = log.clone();
            Ok(chunks.map_chunks(move |chunk| {
                chunk_log.push(format!("wrapper {chunk}"));
                chunk.to_uppercase()
            }))
        }
    });
    // Both on the request: the guard registered first.
    let request = AgentRequest::user("go")
        .with_handler(logging_guard(&log, true))
        .with_handler(wrapper);

    let (chunks, records) = run_with_chunks(&agent, request).await;

    assert_eq!(
        records[0].error.as_ref().map(|e| e.kind()),
        Some(ToolErrorKind::InvalidArguments)
    );
    assert_eq!(
        log.entries(),
        [
            r#"policy c2 {"n":1}"#,
            r#"pre {"n":2}"#,
            r#"wrapper-before {"n":3}"#,
            r#"tool {"n":3}"#,
            "wrapper-after",
            "wrapper a",
            "post A",
            "wrapper b",
            "post B",
        ]
    );
    assert_eq!(chunks, ["A", "B"]);
}

#[tokio::test]
async fn the_guard_limits_the_transformed_output_and_wraps_it_last() {
    let agent = Agent::builder(one_call("t", json!({})))
        .tool(text_tool("t", "abcdef"))
        .build()
        .unwrap();
    let guard = ToolGuard::new()
        .post(map_output(|text| text.repeat(2)))
        .limit(max_output_chars(8))
        .envelope(untrusted_envelope().note(""));

    let result = agent
        .run(AgentRequest::user("go").with_handler(guard))
        .await
        .unwrap();

    assert_eq!(
        result.tool_records[0].content,
        "<tool_output untrusted=\"true\">\nabcdefab…[truncated: 4 more chars]\n</tool_output>"
    );
}

#[tokio::test]
async fn the_guard_limits_a_transformed_stream_and_wraps_it_last() {
    let produced = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(one_call("t", json!({"n": 1})))
        .tool(counted_stream(
            "t",
            &["abc", "def", "ghi", "jkl"],
            &produced,
        ))
        .build()
        .unwrap();
    let guard = ToolGuard::new()
        .post(map_output_chunks(|chunk| chunk.to_uppercase()))
        .limit(max_output_bytes(5))
        .envelope(untrusted_envelope().note(""));

    let (chunks, _) = run_with_chunks(&agent, AgentRequest::user("go").with_handler(guard)).await;

    assert_eq!(
        chunks,
        [
            "<tool_output untrusted=\"true\">\n",
            "ABC",
            "DE",
            "…[truncated: the output is longer than 5 bytes]",
            "\n</tool_output>",
        ]
    );
    assert_eq!(produced.load(std::sync::atomic::Ordering::SeqCst), 2);
}
