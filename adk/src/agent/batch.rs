//! The batch runner: one turn's tool calls, each run as a stream of events (lookup,
//! argument parsing, the wrapper chain, the tool itself), the streams merged as they come.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use futures::stream::{self, BoxStream};
use futures::{Stream, StreamExt};
use serde_json::Value;
use tower::BoxError;

use super::event::AgentEvent;
use super::merge::SmallMerge;
use crate::agent::error::AgentError;
use crate::config::AgentConfig;
use crate::content::Part;
use crate::context::Scope;
use crate::handler::{Chain, HandlerError};
use crate::message::ToolCall;
use crate::telemetry::{self, InSpan, metrics};
use crate::tool::ToolStream;
use crate::tool::{Finish, Tool, ToolError, ToolOutput, ToolRecord, ToolReport, ToolRequest};

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
    chain: &Chain,
    config: &AgentConfig,
    scope: &Scope,
    calls: impl ExactSizeIterator<Item = (usize, ToolCall)>,
    options: BatchOptions,
) -> BoxStream<'static, CallEvent> {
    let mut streams =
        calls.map(|(index, call)| run_call(chain, config, scope, options, index, call));
    match streams.len() {
        // One call needs no merging.
        1 => streams.next().unwrap_or_else(|| stream::empty().boxed()),
        n if n <= SMALL_BATCH => SmallMerge::new(streams, options.parallel).boxed(),
        _ => stream::iter(streams.collect::<Vec<_>>())
            .flatten_unordered(options.parallel)
            .boxed(),
    }
}

/// Up to this many calls, a turn's streams are merged by polling each live one in turn;
/// above, by `flatten_unordered`, whose per-stream wakers pay off only for many streams.
const SMALL_BATCH: usize = 8;

/// How the agent runs a batch of calls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchOptions {
    /// The most calls at a time; `None` for all.
    pub(crate) parallel: Option<usize>,
    /// Whether arguments are checked against the tool's schema before the wrappers.
    #[cfg(feature = "validation")]
    pub(crate) validate: bool,
    /// Whether the caller reads events: without, calls report only their records.
    pub(crate) events: bool,
}

fn run_call(
    chain: &Chain,
    config: &AgentConfig,
    scope: &Scope,
    options: BatchOptions,
    index: usize,
    call: ToolCall,
) -> BoxStream<'static, CallEvent> {
    let span = telemetry::tool_span(&call.name, &call.id);
    let tool = match config.tool(&call.name) {
        Some(tool) => Ok(tool.clone()),
        None => Err(unknown_tool(config, &call.name).into()),
    };
    let call = Call {
        returns_directly: tool.is_ok() && config.is_return_directly(&call.name),
        index,
        #[cfg(feature = "validation")]
        validate: options.validate,
        listening: options.events,
        scope: scope.clone(),
        call,
    };
    // Whole and streamed calls are separate streams: each keeps only its own state (a
    // whole call's stays under the allocator's cached sizes, 1 KiB).
    match tool {
        Ok(tool) if tool.is_streamable() => {
            InSpan::new(stream_call(chain.clone(), tool, call), span).boxed()
        }
        tool if call.listening => InSpan::new(invoke_call(chain.clone(), tool, call), span).boxed(),
        // No one reads the events: the call is the future of its record, made in place.
        tool => {
            let whole = stream::once(whole_call(chain.clone(), tool, call));
            InSpan::new(whole, span).boxed()
        }
    }
}

/// One call of a turn, with what running it needs besides the chain and the tool.
struct Call {
    call: ToolCall,
    /// Its place in the turn.
    index: usize,
    returns_directly: bool,
    #[cfg(feature = "validation")]
    validate: bool,
    /// Whether the caller reads events: without, the call reports only its record.
    listening: bool,
    scope: Scope,
}

/// A call whose result comes whole: its start event (when listened to), then its
/// record.
fn invoke_call(
    chain: Chain,
    tool: Result<Tool, BoxError>,
    call: Call,
) -> impl Stream<Item = CallEvent> + Send + 'static {
    InvokeCall::Waiting {
        start: Some((move |call| whole_call(chain, tool, call), call)),
    }
}

/// A whole call, from its arguments to its record.
async fn whole_call(chain: Chain, tool: Result<Tool, BoxError>, call: Call) -> CallEvent {
    let started = Instant::now();
    let outcome = match tool.and_then(|tool| prepare(tool, &call)) {
        Ok((tool, request)) => chain.invoke(request, tool).await,
        Err(error) => Err(error),
    };
    finished(call, started, outcome)
}

pin_project_lite::pin_project! {
    /// A whole call's stream: its start event, when the caller listens, then the record
    /// that its future makes. (Not a generator, nor a chain of streams: every call in
    /// flight holds one, so it is kept small; the call waits in the room its future
    /// takes once started.)
    #[project = InvokeCallProj]
    enum InvokeCall<S, F> {
        Waiting { start: Option<(S, Call)> },
        Running { #[pin] done: F },
        Done,
    }
}

impl<S, F> Stream for InvokeCall<S, F>
where
    S: FnOnce(Call) -> F,
    F: Future<Output = CallEvent>,
{
    type Item = CallEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<CallEvent>> {
        loop {
            match self.as_mut().project() {
                InvokeCallProj::Waiting { start } => {
                    let Some((start, call)) = start.take() else {
                        self.set(InvokeCall::Done);
                        continue;
                    };
                    let announce = call.listening.then(|| AgentEvent::ToolCallStarted {
                        call_id: Arc::from(call.call.id.clone()),
                        name: Arc::from(call.call.name.clone()),
                    });
                    self.set(InvokeCall::Running { done: start(call) });
                    if let Some(started) = announce {
                        return Poll::Ready(Some(CallEvent::Event(started)));
                    }
                }
                InvokeCallProj::Running { done } => {
                    let record = ready!(done.poll(cx));
                    self.set(InvokeCall::Done);
                    return Poll::Ready(Some(record));
                }
                InvokeCallProj::Done => return Poll::Ready(None),
            }
        }
    }
}

/// A call whose result comes in chunks, each an event for the caller: its start event
/// (when listened to), then the chunks, then its record.
fn stream_call(
    chain: Chain,
    tool: Tool,
    call: Call,
) -> impl Stream<Item = CallEvent> + Send + 'static {
    // Shared by all of the call's events, not copied per chunk.
    let ids: Option<(Arc<str>, Arc<str>)> = call.listening.then(|| {
        (
            Arc::from(call.call.id.clone()),
            Arc::from(call.call.name.clone()),
        )
    });
    let opening = prepare(tool, &call).map(|(tool, request)| {
        Box::pin(async move { chain.stream(request, tool).await }) as OpeningStream
    });
    ChunkedCall {
        announce: ids.is_some(),
        opening: Some(opening),
        chunks: None,
        content: String::new(),
        finish: None,
        report: None,
        ids,
        call: Some(call),
        started: None,
    }
}

/// The wrappers' future of a streamed call's chunks.
type OpeningStream = Pin<Box<dyn Future<Output = Result<ToolStream, BoxError>> + Send>>;

/// A streamed call: its start event (when listened to), then it opens the stream through the wrappers, passes
/// each chunk on (and keeps its text), then gives the record. Polled by hand rather than
/// written as a generator: a chunk is the most frequent event of a streaming run.
struct ChunkedCall {
    /// Whether the start event is still to come.
    announce: bool,
    /// The stream being opened, or why it could not be.
    opening: Option<Result<OpeningStream, BoxError>>,
    chunks: Option<ToolStream>,
    content: String,
    finish: Option<Finish>,
    /// What the tool reports besides its chunks, if it does; see [`ChunkedCall::reported`].
    report: Option<Box<Reported>>,
    ids: Option<(Arc<str>, Arc<str>)>,
    /// The call, until its record is made.
    call: Option<Call>,
    /// When it was first polled.
    started: Option<Instant>,
}

impl ChunkedCall {
    /// The record that ends the call; nothing comes after it.
    fn end(&mut self, outcome: Result<(String, Vec<Part>), BoxError>) -> Option<CallEvent> {
        self.chunks = None;
        let started = self.started.unwrap_or_else(Instant::now);
        let call = self.call.take()?;
        let finish = self.finish.take();
        let output = outcome.map(|(content, parts)| ToolOutput {
            content,
            parts,
            finish,
        });
        Some(finished(call, started, output))
    }
}

impl Stream for ChunkedCall {
    type Item = CallEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<CallEvent>> {
        let this = &mut *self;
        this.started.get_or_insert_with(Instant::now);
        if std::mem::take(&mut this.announce)
            && let Some((call_id, name)) = &this.ids
        {
            let started = AgentEvent::ToolCallStarted {
                call_id: Arc::clone(call_id),
                name: Arc::clone(name),
            };
            return Poll::Ready(Some(CallEvent::Event(started)));
        }
        if let Some(opening) = &mut this.opening {
            let opened = match opening {
                Ok(future) => ready!(future.as_mut().poll(cx)),
                Err(_) => match this.opening.take() {
                    Some(Err(error)) => Err(error),
                    _ => return Poll::Ready(None),
                },
            };
            this.opening = None;
            match opened {
                Ok(mut chunks) => {
                    this.finish = chunks.take_finish();
                    this.report = chunks.take_report().map(|report| {
                        // No one reads this call's events: its tool may skip them.
                        if this.ids.is_none() {
                            report.set_unread();
                        }
                        Box::new(Reported { report, held: None })
                    });
                    this.chunks = Some(chunks);
                }
                Err(error) => return Poll::Ready(this.end(Err(error))),
            }
        }
        if this.report.is_some() {
            return this.reported(cx);
        }
        let Some(chunks) = &mut this.chunks else {
            return Poll::Ready(None);
        };
        loop {
            match ready!(chunks.poll_next_unpin(cx)) {
                Some(Ok(chunk)) => {
                    this.content.push_str(&chunk);
                    if let Some((call_id, name)) = &this.ids {
                        return Poll::Ready(Some(CallEvent::Event(AgentEvent::ToolOutputChunk {
                            call_id: Arc::clone(call_id),
                            name: Arc::clone(name),
                            chunk,
                        })));
                    }
                }
                Some(Err(error)) => return Poll::Ready(this.end(Err(error))),
                None => {
                    let outcome = Ok((std::mem::take(&mut this.content), Vec::new()));
                    return Poll::Ready(this.end(outcome));
                }
            }
        }
    }
}

/// A stream's report, and the item read from the stream that waits for the events the
/// tool reported before it.
struct Reported {
    report: ToolReport,
    held: Option<Option<Result<String, BoxError>>>,
}

impl ChunkedCall {
    /// Polls a stream that has a [`ToolReport`]: the events it reported come before the
    /// next chunk (an empty chunk only hands them on), and its result, if it set one,
    /// is what the model reads.
    #[cold]
    fn reported(&mut self, cx: &mut Context<'_>) -> Poll<Option<CallEvent>> {
        loop {
            let (Some(reported), Some(chunks)) = (&mut self.report, &mut self.chunks) else {
                return Poll::Ready(None);
            };
            if let Some(event) = reported.report.next_event() {
                if let Some((call_id, name)) = &self.ids {
                    return Poll::Ready(Some(CallEvent::Event(AgentEvent::ToolEvent {
                        call_id: Arc::clone(call_id),
                        name: Arc::clone(name),
                        event,
                    })));
                }
                continue;
            }
            let item = match reported.held.take() {
                Some(item) => item,
                None => {
                    reported.held = Some(ready!(chunks.poll_next_unpin(cx)));
                    continue;
                }
            };
            match item {
                Some(Ok(chunk)) if chunk.is_empty() => continue,
                Some(Ok(chunk)) => {
                    self.content.push_str(&chunk);
                    if let Some((call_id, name)) = &self.ids {
                        return Poll::Ready(Some(CallEvent::Event(AgentEvent::ToolOutputChunk {
                            call_id: Arc::clone(call_id),
                            name: Arc::clone(name),
                            chunk,
                        })));
                    }
                }
                Some(Err(error)) => return Poll::Ready(self.end(Err(error))),
                None => {
                    let content = reported
                        .report
                        .take_result()
                        .unwrap_or_else(|| std::mem::take(&mut self.content));
                    let parts = reported.report.take_parts();
                    return Poll::Ready(self.end(Ok((content, parts))));
                }
            }
        }
    }
}

/// The call's arguments, parsed and (unless switched off) validated, as the request of
/// the tool seam.
fn prepare(tool: Tool, call: &Call) -> Result<(Tool, ToolRequest), BoxError> {
    let arguments = parse_arguments(&call.call.arguments)?;
    #[cfg(feature = "validation")]
    if call.validate {
        tool.validate(&arguments)?;
    }
    let request = ToolRequest::for_run(&call.call, arguments, call.scope.clone(), tool.clone());
    Ok((tool, request))
}

/// The event that ends a call: its record (content and finish, or the failure the model
/// sees), or the handler error that stops the run.
fn finished(call: Call, started: Instant, outcome: Result<ToolOutput, BoxError>) -> CallEvent {
    let (content, parts, mut finish, error) = match outcome {
        Ok(output) => (output.content, output.parts, output.finish, None),
        Err(failure) => match classify(failure) {
            Ok(error) => {
                telemetry::record_error(error.kind().as_str());
                (error.to_model_text(), Vec::new(), None, Some(error))
            }
            Err(fatal) => return CallEvent::Fatal(fatal),
        },
    };
    telemetry::record_tool_content(&call.call, &content);
    if call.returns_directly && finish.is_none() {
        finish = Some(Finish::WithResult);
    }
    let latency = started.elapsed();
    metrics::tool_call(&call.call.name, error.as_ref(), latency);
    let ToolCall {
        id,
        name,
        arguments,
        ..
    } = call.call;
    CallEvent::Done(
        call.index,
        Arc::new(ToolRecord {
            call_id: id,
            name,
            arguments,
            content,
            parts,
            error,
            latency,
            finish,
            purpose: None,
        }),
    )
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
    serde_json::from_str(text).or_else(|e| {
        if text.trim().is_empty() {
            return Ok(Value::Object(serde_json::Map::new()));
        }
        Err(ToolError::invalid_arguments(format!(
            "the arguments are not valid JSON ({e})"
        )))
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
