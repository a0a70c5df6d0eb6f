//! A streaming tool (W3): 10,000 chunks of 64 bytes, consumed raw, through an agent run
//! with 0 and 4 stream wrappers (awaited for the result, and read event by event), and through 4 hand-written boxed stream adapters (the
//! floor for 4 wrappers). Criterion reports chunks per second.
//!
//! ```text
//! cargo bench --bench streaming
//! ```

use std::convert::Infallible;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use serde_json::json;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentEvent, AgentRequest, BoxError, BoxHandler, Tool, ToolInfo, ToolRequest, handlers,
};

const CHUNKS: usize = 10_000;
const CHUNK: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn stream_tool() -> Tool {
    Tool::stream_fn(ToolInfo::new("stream", "streams chunks"), |_| {
        futures::stream::iter((0..CHUNKS).map(|_| Ok::<_, Infallible>(CHUNK)))
    })
}

fn request() -> ToolRequest {
    ToolRequest::new("c1", "stream", json!({}))
}

/// Drains a stream of chunks; returns the bytes seen.
async fn drain<S>(mut chunks: S) -> usize
where
    S: futures::Stream<Item = Result<String, BoxError>> + Unpin,
{
    let mut bytes = 0;
    while let Some(chunk) = chunks.next().await {
        bytes += chunk.map_or(0, |c| c.len());
    }
    bytes
}

/// A wrapper that passes every chunk through (its cost is the seam's own).
fn identity_wrapper() -> BoxHandler {
    handlers::wrap_tool_stream(
        |req, next| async move { Ok(next.run(req).await?.map_chunks(|c| c)) },
    )
    .into()
}

fn w3(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("w3_streaming_tool");
    group.throughput(Throughput::Elements(CHUNKS as u64));
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    group.sample_size(30);

    let tool = stream_tool();
    group.bench_function("raw", |b| {
        b.to_async(&runtime).iter(|| async {
            let chunks = tool
                .stream(request())
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            black_box(drain(chunks).await)
        });
    });

    group.bench_function("hand_written_4_boxed_adapters", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut chunks: BoxStream<'static, Result<String, BoxError>> = tool
                .stream(request())
                .await
                .unwrap_or_else(|e| panic!("{e}"))
                .boxed();
            for _ in 0..4 {
                chunks = chunks.map_ok(|c| c).boxed();
            }
            black_box(drain(chunks).await)
        });
    });

    let agent = Agent::builder(
        ScriptedModel::per_run([Turn::call("c1", "stream", json!({})), Turn::text("done")])
            .without_records(),
    )
    .tool(stream_tool())
    .build()
    .unwrap_or_else(|e| panic!("{e}"));
    for n in [0, 4] {
        let chain: Vec<BoxHandler> = (0..n).map(|_| identity_wrapper()).collect();
        group.bench_function(format!("agent_{n}_stream_wrappers"), |b| {
            b.to_async(&runtime).iter(|| async {
                let mut request = AgentRequest::user("go");
                request.handlers_mut().extend(chain.iter().cloned());
                let result = agent.run(request).await.unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(result.tool_records[0].content.len(), CHUNKS * CHUNK.len());
                black_box(result)
            });
        });
    }
    // The same, with the caller reading every chunk as an event (awaiting the result
    // alone skips building the chunk events).
    let chain: Vec<BoxHandler> = (0..4).map(|_| identity_wrapper()).collect();
    group.bench_function("agent_4_stream_wrappers_events_read", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut request = AgentRequest::user("go");
            request.handlers_mut().extend(chain.iter().cloned());
            let mut run = agent.run(request);
            let mut chunks = 0;
            while let Some(event) = run.next().await {
                if let AgentEvent::ToolOutputChunk { chunk, .. } =
                    event.unwrap_or_else(|e| panic!("{e}"))
                {
                    chunks += black_box(chunk).len() / CHUNK.len();
                }
            }
            assert_eq!(chunks, CHUNKS);
        });
    });
    group.finish();
}

criterion_group!(benches, w3);
criterion_main!(benches);
