//! Running one turn's tool calls: lookup, argument parsing, the wrapper chain, and the
//! tool itself, as a stream of events per call.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use futures::stream::{self, BoxStream};
use futures::{Stream, StreamExt};
use serde_json::Value;
use tower::BoxError;

use super::{AgentConfig, AgentEvent, ToolRecord};
use crate::handler::{Chain, HandlerError};
use crate::telemetry::{self, InSpan};
use crate::{AgentError, Finish, ToolCall, ToolError, ToolRequest};

/// What one call reports while it runs.
pub(crate) enum CallEvent {
    /// An event for the caller (call started, output chunk).
    Event(AgentEvent),
    /// The call with this index in the turn finished. (Shared from the start: the run
    /// hands the record to the caller in an event and keeps it.)
    Done(usize, Arc<ToolRecord>),
    /// A tool wrapper failed with a handler error: the run stops.
    Fatal(AgentError),
}

/// Runs a turn's calls with at most `cap` at a time, merging their events as they come.
pub(super) fn run_batch(
    chain: Chain,
    config: AgentConfig,
    extensions: Arc<http::Extensions>,
    calls: Vec<ToolCall>,
    options: BatchOptions,
) -> BoxStream<'static, CallEvent> {
    let mut streams = calls
        .into_iter()
        .enumerate()
        .map(move |(index, call)| run_call(&chain, &config, &extensions, options, index, call));
    match streams.len() {
        // One call needs no merging.
        1 => streams.next().unwrap_or_else(|| stream::empty().boxed()),
        n if n <= SMALL_BATCH => SmallMerge::new(streams.collect(), options.parallel).boxed(),
        _ => stream::iter(streams)
            .flatten_unordered(options.parallel)
            .boxed(),
    }
}

/// Up to this many calls, a turn's streams are merged by polling each live one in turn;
/// above, by `flatten_unordered`, whose per-stream wakers pay off only for many streams.
const SMALL_BATCH: usize = 8;

/// Merges a few streams: starts them in order, at most `cap` at a time, and on every
/// poll polls each live stream, from the one after the last that yielded, so none
/// starves. No allocation per stream or per wake-up.
struct SmallMerge {
    waiting: std::vec::IntoIter<BoxStream<'static, CallEvent>>,
    live: Vec<BoxStream<'static, CallEvent>>,
    cap: usize,
    /// Where the next round of polls starts.
    from: usize,
}

impl SmallMerge {
    fn new(streams: Vec<BoxStream<'static, CallEvent>>, cap: Option<usize>) -> Self {
        let cap = cap.unwrap_or(usize::MAX).max(1);
        SmallMerge {
            live: Vec::with_capacity(streams.len().min(cap)),
            waiting: streams.into_iter(),
            cap,
            from: 0,
        }
    }
}

impl Stream for SmallMerge {
    type Item = CallEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<CallEvent>> {
        let this = &mut *self;
        'round: loop {
            while this.live.len() < this.cap {
                match this.waiting.next() {
                    Some(stream) => this.live.push(stream),
                    None => break,
                }
            }
            let live = this.live.len();
            if live == 0 {
                return Poll::Ready(None);
            }
            for offset in 0..live {
                let at = (this.from + offset) % live;
                match this.live[at].poll_next_unpin(cx) {
                    Poll::Ready(Some(event)) => {
                        this.from = at + 1;
                        return Poll::Ready(Some(event));
                    }
                    Poll::Ready(None) => {
                        // Keep the start order of the rest; refill, and poll them all again.
                        drop(this.live.remove(at));
                        this.from = at;
                        continue 'round;
                    }
                    Poll::Pending => {}
                }
            }
            return Poll::Pending;
        }
    }
}

/// How the agent runs a batch of calls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchOptions {
    /// The most calls at a time; `None` for all.
    pub(crate) parallel: Option<usize>,
    /// Whether arguments are checked against the tool's schema before the wrappers.
    pub(crate) validate: bool,
    /// Whether the caller reads events: without, calls report only their records.
    pub(crate) events: bool,
}

fn run_call(
    chain: &Chain,
    config: &AgentConfig,
    extensions: &Arc<http::Extensions>,
    options: BatchOptions,
    index: usize,
    call: ToolCall,
) -> BoxStream<'static, CallEvent> {
    let chain = chain.clone();
    let tool = config.tool(&call.name).cloned();
    let unknown: Option<BoxError> = tool
        .is_none()
        .then(|| unknown_tool(config, &call.name).into());
    let returns_directly = unknown.is_none() && config.is_return_directly(&call.name);
    let extensions = Arc::clone(extensions);
    let span = telemetry::tool_span(&call.name, &call.id);
    let events = async_stream::stream! {
        let started = Instant::now();
        if options.events {
            yield CallEvent::Event(AgentEvent::ToolCallStarted {
                call_id: call.id.clone(),
                name: call.name.clone(),
            });
        }
        let mut content = String::new();
        let mut finish = None;
        let failure: Option<BoxError> = 'call: {
            let Some(tool) = tool else {
                break 'call unknown;
            };
            let arguments = match parse_arguments(&call.arguments) {
                Ok(arguments) => arguments,
                Err(error) => break 'call Some(error.into()),
            };
            if options.validate
                && let Err(error) = tool.validate(&arguments) {
                    break 'call Some(error.into());
                }
            let request = ToolRequest::for_run(&call.id, arguments, extensions, tool.clone());
            if !tool.is_streamable() {
                match chain.invoke(request, tool).await {
                    Ok(output) => {
                        content = output.content;
                        finish = output.finish;
                        break 'call None;
                    }
                    Err(error) => break 'call Some(error),
                }
            }
            let mut chunks = match chain.stream(request, tool).await {
                Ok(chunks) => chunks,
                Err(error) => break 'call Some(error),
            };
            finish = chunks.take_finish();
            while let Some(chunk) = chunks.next().await {
                match chunk {
                    Ok(chunk) => {
                        content.push_str(&chunk);
                        if options.events {
                            yield CallEvent::Event(AgentEvent::ToolOutputChunk {
                                call_id: call.id.clone(),
                                name: call.name.clone(),
                                chunk,
                            });
                        }
                    }
                    Err(error) => break 'call Some(error),
                }
            }
            None
        };
        let error = match failure.map(classify).transpose() {
            Ok(error) => error,
            Err(fatal) => {
                yield CallEvent::Fatal(fatal);
                return;
            }
        };
        if let Some(error) = &error {
            telemetry::record_error(error.kind().as_str());
            content = error.to_model_text();
            finish = None;
        }
        if returns_directly && finish.is_none() {
            finish = Some(Finish::WithResult);
        }
        yield CallEvent::Done(index, Arc::new(ToolRecord {
            call_id: call.id,
            name: call.name,
            arguments: call.arguments,
            content,
            error,
            latency: started.elapsed(),
            finish,
            purpose: None,
        }));
    };
    InSpan::new(events, span).boxed()
}

/// A tool failure the model sees, or a handler error that stops the run.
fn classify(error: BoxError) -> Result<ToolError, AgentError> {
    match error.downcast::<HandlerError>() {
        Ok(handler_error) => Err(AgentError::Handler(*handler_error)),
        Err(error) => Ok(ToolError::from_boxed(error)),
    }
}

/// Parses the model's argument text once. Empty text means no arguments.
fn parse_arguments(text: &str) -> Result<Value, ToolError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(text).map_err(|e| {
        ToolError::invalid_arguments(format!("the arguments are not valid JSON ({e})"))
    })
}

fn unknown_tool(config: &AgentConfig, name: &str) -> ToolError {
    let available: Vec<&str> = config.tool_names().collect();
    let mut error = ToolError::unknown_tool(name);
    if !available.is_empty() {
        error = ToolError::new(
            error.kind(),
            format!(
                "{}; the tools available are: {}",
                error.message(),
                available.join(", ")
            ),
        );
    }
    error
}
