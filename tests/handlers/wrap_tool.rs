//! `Handler::wrap_tool`: one hook that wraps every tool call, invoked or streamed, for a
//! handler that only touches the request or the output.

use std::convert::Infallible;

use futures::StreamExt;
use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, BoxError, Handler, ToolCallNext, ToolError};
use tower_adk::{Tool, ToolErrorKind, ToolInfo, ToolOutput, ToolRequest, ToolResponse};

use crate::support::Log;

/// Refuses calls without `"ok": true`, and brackets every chunk of what the others
/// return; logs whether each call it saw was streamed.
struct Bracket(Log);

impl Handler for Bracket {
    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        self.0
            .push(format!("{} streamed={}", request.name, next.is_streamed()));
        if request.arguments["ok"] != json!(true) {
            return Err(ToolError::denied("not ok").into());
        }
        Ok(next
            .run(request)
            .await?
            .map_text(|text| format!("[{text}]")))
    }
}

fn agent(model: ScriptedModel) -> Agent {
    let whole = Tool::from_fn(ToolInfo::new("whole", "Answers whole"), |_| async {
        Ok::<_, Infallible>(ToolOutput::new("all"))
    });
    let chunks = Tool::stream_fn(ToolInfo::new("chunks", "Streams"), |_| {
        futures::stream::iter(["a", "b"]).map(Ok::<_, Infallible>)
    });
    Agent::builder(model)
        .tool(whole)
        .tool(chunks)
        .build()
        .unwrap()
}

#[tokio::test]
async fn one_hook_wraps_invoked_and_streamed_calls_alike_and_streams_stay_chunked() {
    let log = Log::default();
    let model = ScriptedModel::new([
        Turn::call("c1", "whole", json!({"ok": true}))
            .with_call("c2", "chunks", json!({"ok": true}))
            .with_call("c3", "chunks", json!({"ok": false})),
        Turn::text("done"),
    ]);
    let request = AgentRequest::user("go").with_handler(Bracket(log.clone()));
    let mut run = agent(model).run(request);
    let mut chunks = Vec::new();
    let mut result = None;
    while let Some(event) = run.next().await {
        match event.unwrap() {
            AgentEvent::ToolOutputChunk { chunk, .. } => chunks.push(chunk),
            AgentEvent::Completed(done) => result = Some(done),
            _ => {}
        }
    }
    let result = result.unwrap();

    let mut seen = log.entries();
    seen.sort();
    assert_eq!(
        seen,
        [
            "chunks streamed=true",
            "chunks streamed=true",
            "whole streamed=false"
        ]
    );
    // Each chunk of the streamed call is mapped as it comes, not collected first.
    assert_eq!(chunks, ["[a]", "[b]"]);
    let records = &result.tool_records;
    assert_eq!(records[0].content, "[all]");
    assert_eq!(records[1].content, "[a][b]");
    // A refusal is the model's to read, for a streamed call too.
    let refused = records[2].error.as_ref().map(ToolError::kind);
    assert_eq!(refused, Some(ToolErrorKind::Denied));
}
