//! Tool-call wrappers: their order, what they see, and what they may change.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tower_adk::handlers::{wrap_tool_invoke, wrap_tool_stream};
use tower_adk::testing::{ScriptedModel, Turn, echo_tool};
use tower_adk::{
    Agent, AgentRequest, BoxHandler, Tool, ToolError, ToolErrorKind, ToolInfo, ToolOutput,
    ToolStream,
};

use crate::{Log, counting_echo, tool_result};

/// A wrap_tool_invoke handler that logs `{name}-before` and `{name}-after` around the call.
fn logging_invoke(name: &'static str, log: &Log) -> BoxHandler {
    let log = log.clone();
    wrap_tool_invoke(move |req, next| {
        let log = log.clone();
        async move {
            log.push(format!("{name}-before"));
            let output = next.run(req).await?;
            log.push(format!("{name}-after"));
            Ok(output)
        }
    })
    .into()
}

/// A wrap_tool_stream handler that logs `{name}-before` and `{name}-after` around the call.
fn logging_stream(name: &'static str, log: &Log) -> BoxHandler {
    let log = log.clone();
    wrap_tool_stream(move |req, next| {
        let log = log.clone();
        async move {
            log.push(format!("{name}-before"));
            let stream = next.run(req).await?;
            log.push(format!("{name}-after"));
            Ok(stream)
        }
    })
    .into()
}

#[tokio::test]
async fn invoke_wrappers_nest_with_the_first_registered_outermost() {
    let log = Log::default();
    let tool_log = log.clone();
    let tool = Tool::from_fn(ToolInfo::new("t", "Logs its call."), move |_| {
        tool_log.push("tool");
        async { Ok::<_, std::convert::Infallible>(ToolOutput::new("ok")) }
    });
    let model = ScriptedModel::new([Turn::call("c1", "t", json!({})), Turn::text("done")]);
    let agent = Agent::builder(model).tool(tool).build().unwrap();

    let request = AgentRequest::user("go")
        .with_handler(logging_invoke("outer", &log))
        .with_handler(logging_invoke("inner", &log));
    agent.run(request).await.unwrap();

    assert_eq!(
        log.entries(),
        [
            "outer-before",
            "inner-before",
            "tool",
            "inner-after",
            "outer-after"
        ]
    );
}

#[tokio::test]
async fn stream_wrappers_nest_with_the_first_registered_outermost() {
    let log = Log::default();
    let tool_log = log.clone();
    let tool = Tool::stream_fn(ToolInfo::new("t", "Streams."), move |_| {
        tool_log.push("tool");
        futures::stream::iter([Ok::<_, std::convert::Infallible>("chunk")])
    });
    let model = ScriptedModel::new([Turn::call("c1", "t", json!({})), Turn::text("done")]);
    let agent = Agent::builder(model).tool(tool).build().unwrap();

    // Invoke wrappers must not see a streamed call.
    let request = AgentRequest::user("go")
        .with_handler(logging_stream("outer", &log))
        .with_handler(logging_invoke("invoke", &log))
        .with_handler(logging_stream("inner", &log));
    let result = agent.run(request).await.unwrap();

    assert_eq!(
        log.entries(),
        [
            "outer-before",
            "inner-before",
            "tool",
            "inner-after",
            "outer-after"
        ]
    );
    assert_eq!(result.tool_records[0].content, "chunk");
}

#[tokio::test]
async fn a_wrapper_can_change_the_arguments_and_the_result() {
    let model = ScriptedModel::new([
        Turn::call("c1", "echo", json!({"city": "oslo"})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(echo_tool("echo"))
        .build()
        .unwrap();
    let rewrite = wrap_tool_invoke(|mut req, next| async move {
        req.arguments["city"] = json!("OSLO");
        req.arguments["units"] = json!("metric");
        let mut output = next.run(req).await?;
        output.content = format!("checked: {}", output.content);
        Ok(output)
    });

    let result = agent
        .run(AgentRequest::user("go").with_handler(rewrite))
        .await
        .unwrap();

    // The echo tool answers with the arguments it received: the rewritten ones.
    let expected = r#"checked: {"city":"OSLO","units":"metric"}"#;
    assert_eq!(result.tool_records[0].content, expected);
    assert_eq!(
        tool_result(&model.requests()[1], "c1"),
        (expected.to_owned(), false)
    );
    // The record keeps the arguments as the model sent them.
    assert_eq!(result.tool_records[0].arguments, r#"{"city":"oslo"}"#);
}

#[tokio::test]
async fn a_stream_wrapper_can_change_the_arguments_the_tool_sees() {
    let tool = Tool::stream_fn(ToolInfo::new("spell", "Streams a word."), |req| {
        let word = req.arguments["word"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        futures::stream::iter(
            word.chars()
                .map(|c| Ok::<_, std::convert::Infallible>(c.to_string()))
                .collect::<Vec<_>>(),
        )
    });
    let model = ScriptedModel::new([
        Turn::call("c1", "spell", json!({"word": "ab"})),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model.clone()).tool(tool).build().unwrap();
    let rewrite = wrap_tool_stream(|mut req, next| async move {
        req.arguments["word"] = json!("xyz");
        next.run(req).await
    });

    let result = agent
        .run(AgentRequest::user("go").with_handler(rewrite))
        .await
        .unwrap();

    assert_eq!(result.tool_records[0].content, "xyz");
    assert_eq!(tool_result(&model.requests()[1], "c1").0, "xyz");
}

#[tokio::test]
async fn wrappers_see_the_tool_name_and_call_id() {
    let log = Log::default();
    let invoke_log = log.clone();
    let stream_log = log.clone();
    let tool = Tool::stream_fn(ToolInfo::new("ticker", "Streams."), |_| {
        futures::stream::iter([Ok::<_, std::convert::Infallible>("tick")])
    });
    let model = ScriptedModel::new([
        Turn::calls([
            tower_adk::ToolCall::new("call-a", "echo", json!({"n": 1})),
            tower_adk::ToolCall::new("call-b", "ticker", json!({})),
        ]),
        Turn::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(echo_tool("echo"))
        .tool(tool)
        .build()
        .unwrap();
    let request = AgentRequest::user("go")
        .with_handler(wrap_tool_invoke(move |req, next| {
            invoke_log.push(format!(
                "invoke {} {} {}",
                req.name, req.call_id, req.arguments
            ));
            next.run(req)
        }))
        .with_handler(wrap_tool_stream(move |req, next| {
            stream_log.push(format!("stream {} {}", req.name, req.call_id));
            next.run(req)
        }));

    agent.run(request).await.unwrap();

    let mut entries = log.entries();
    entries.sort();
    assert_eq!(
        entries,
        [r#"invoke echo call-a {"n":1}"#, "stream ticker call-b"]
    );
}

#[tokio::test]
async fn a_wrapper_that_denies_a_call_answers_the_model_and_the_tool_never_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        Turn::call("c1", "delete", json!({"id": 1})),
        Turn::text("I was not allowed."),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(counting_echo("delete", &calls))
        .build()
        .unwrap();
    let deny = wrap_tool_invoke(|req, next| async move {
        if req.name == "delete" {
            return Err(ToolError::denied("deleting needs approval").into());
        }
        next.run(req).await
    });

    let result = agent
        .run(AgentRequest::user("go").with_handler(deny))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(result.final_message.content(), "I was not allowed.");
    let record = &result.tool_records[0];
    assert_eq!(record.error.as_ref().unwrap().kind(), ToolErrorKind::Denied);
    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(is_error);
    assert!(content.contains("deleting needs approval"), "{content}");
    assert!(content.contains("denied"), "{content}");
}

#[tokio::test]
async fn a_stream_wrapper_that_denies_a_call_answers_the_model_and_the_tool_never_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let tool = Tool::stream_fn(ToolInfo::new("dump", "Streams."), move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        futures::stream::iter([Ok::<_, std::convert::Infallible>("secret")])
    });
    let model = ScriptedModel::new([Turn::call("c1", "dump", json!({})), Turn::text("ok")]);
    let agent = Agent::builder(model.clone()).tool(tool).build().unwrap();
    let deny = wrap_tool_stream(|_, _| async {
        Err::<ToolStream, _>(ToolError::denied("no dumps").into())
    });

    let result = agent
        .run(AgentRequest::user("go").with_handler(deny))
        .await
        .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(
        result.tool_records[0].error.as_ref().unwrap().kind(),
        ToolErrorKind::Denied
    );
    let (content, is_error) = tool_result(&model.requests()[1], "c1");
    assert!(is_error && content.contains("no dumps"), "{content}");
}
