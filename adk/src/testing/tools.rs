//! Small tools for tests.

use std::convert::Infallible;
use std::time::Duration;

use futures::StreamExt;

use super::ScriptedError;
use crate::tool::Tool;
use crate::tool::ToolInfo;
use crate::tool::ToolOutput;
use crate::tool::ToolRequest;

fn info(name: &str, description: &str) -> ToolInfo {
    ToolInfo::new(name, description)
        .parameters(serde_json::json!({"type": "object", "additionalProperties": true}))
}

/// A tool that returns its arguments as JSON text.
pub fn echo_tool(name: &str) -> Tool {
    Tool::from_fn(
        info(name, "Returns its arguments."),
        |req: ToolRequest| async move {
            Ok::<_, Infallible>(ToolOutput::new(req.arguments.to_string()))
        },
    )
}

/// A tool that always returns `output`.
pub fn text_tool(name: &str, output: &str) -> Tool {
    let output = output.to_owned();
    Tool::from_fn(info(name, "Returns a fixed text."), move |_| {
        let output = output.clone();
        async move { Ok::<_, Infallible>(ToolOutput::new(output)) }
    })
}

/// A tool that always fails with `message`.
pub fn failing_tool(name: &str, message: &str) -> Tool {
    let message = message.to_owned();
    Tool::from_fn(info(name, "Always fails."), move |_| {
        let message = message.clone();
        async move { Err::<ToolOutput, _>(ScriptedError(message)) }
    })
}

/// A tool that panics with `message` when called.
pub fn panicking_tool(name: &str, message: &'static str) -> Tool {
    Tool::from_fn(info(name, "Always panics."), move |_| async move {
        if !message.is_empty() {
            panic!("{message}");
        }
        Ok::<_, Infallible>(ToolOutput::default())
    })
}

/// A tool that sleeps for `duration`, then returns `output`.
pub fn sleep_tool(name: &str, duration: Duration, output: &str) -> Tool {
    let output = output.to_owned();
    Tool::from_fn(info(name, "Sleeps, then answers."), move |_| {
        let output = output.clone();
        async move {
            tokio::time::sleep(duration).await;
            Ok::<_, Infallible>(ToolOutput::new(output))
        }
    })
}

/// A streaming tool that yields `chunks`, waiting `gap` before each one.
pub fn chunk_tool(name: &str, chunks: &[&str], gap: Duration) -> Tool {
    let chunks: Vec<String> = chunks.iter().map(|c| (*c).to_owned()).collect();
    Tool::stream_fn(info(name, "Streams chunks."), move |_| {
        futures::stream::iter(chunks.clone()).then(move |chunk| async move {
            if !gap.is_zero() {
                tokio::time::sleep(gap).await;
            }
            Ok::<_, Infallible>(chunk)
        })
    })
}
