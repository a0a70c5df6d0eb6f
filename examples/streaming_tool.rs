//! A tool that streams its progress, wrapped chunk by chunk.
//!
//! The `crawl` tool yields one chunk per page it fetches. Two stream wrappers sit around
//! every streamed call: one numbers the chunks, one redacts e-mail addresses. Both work
//! lazily, one chunk at a time, so the caller prints each chunk as soon as the tool
//! produces it (watch the timestamps), and the model then sees the concatenation of the
//! transformed chunks.
//!
//! ```text
//! cargo run --example streaming_tool
//! ```

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentEvent, AgentRequest, Message, Tool, ToolInfo, handlers};

fn crawl() -> Tool {
    Tool::stream_fn(
        ToolInfo::new("crawl", "Fetches the pages of a site").parameters(json!({
            "type": "object",
            "properties": {"site": {"type": "string"}},
            "required": ["site"]
        })),
        |req| {
            let site = req.arguments["site"]
                .as_str()
                .unwrap_or("example.com")
                .to_owned();
            futures::stream::iter(["/", "/about", "/contact"]).then(move |page| {
                let site = site.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    let contact = if page == "/contact" {
                        " - mail sales@example.com"
                    } else {
                        ""
                    };
                    Ok::<_, std::convert::Infallible>(format!("fetched {site}{page}{contact}\n"))
                }
            })
        },
    )
}

/// Replaces each word that contains `@`, keeping the whitespace after it.
fn redact_emails(text: &str) -> String {
    text.split_inclusive(char::is_whitespace)
        .map(|word| {
            let end = word.trim_end();
            if end.contains('@') {
                format!("[redacted]{}", &word[end.len()..])
            } else {
                word.to_owned()
            }
        })
        .collect()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedModel::new([
        Turn::stream(["I'll crawl ", "the site."]).with_call(
            "c1",
            "crawl",
            json!({"site": "example.com"}),
        ),
        Turn::text("The site has three pages."),
    ]);
    let agent = Agent::builder(model.clone()).tool(crawl()).build()?;

    // Outermost: numbers the chunks it sees. Inner: redacts e-mail addresses.
    let number = handlers::wrap_tool_stream(|req, next| async move {
        let mut n = 0;
        Ok(next.run(req).await?.map_chunks(move |chunk| {
            n += 1;
            format!("{n}. {chunk}")
        }))
    });
    let redact = handlers::wrap_tool_stream(|req, next| async move {
        Ok(next
            .run(req)
            .await?
            .map_chunks(|chunk| redact_emails(&chunk)))
    });

    let start = Instant::now();
    let request = AgentRequest::user("Crawl example.com")
        .with_handler(number)
        .with_handler(redact);
    let mut run = agent.run(request);
    while let Some(event) = run.next().await {
        match event? {
            AgentEvent::TextDelta(text) => {
                println!("[{:>4} ms] model: {text}", start.elapsed().as_millis())
            }
            AgentEvent::ToolOutputChunk { chunk, .. } => {
                print!("[{:>4} ms] chunk: {chunk}", start.elapsed().as_millis());
            }
            AgentEvent::Completed(result) => {
                println!(
                    "[{:>4} ms] done: {}",
                    start.elapsed().as_millis(),
                    result.final_message.content()
                );
            }
            _ => {}
        }
    }

    // What the model saw as the tool's result: the transformed chunks, concatenated.
    let second_call = &model.requests()[1];
    if let Some(Message::Tool { content, .. }) = second_call.messages.last() {
        println!("\nthe model saw:\n{content}");
    }
    Ok(())
}
