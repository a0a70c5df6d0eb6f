//! The ReAct loop of one run, written as a stream of events.

use std::sync::Arc;

use futures::StreamExt;

use super::ToolFailurePolicy;
use super::compile::{Outcome, Step};
use super::exec::{self, BatchOptions, CallEvent};
use super::{AgentEvent, AgentInner, AgentRequest, AgentResult, AgentRun, RunStatus};
use super::{DefaultExecutor, ToolRecord};
use crate::handler::Chain;
use crate::run_shared::RunShared;
use crate::telemetry::{self, InSpan};
use crate::{
    AgentError, Message, MessageAccumulator, Messages, ModelDelta, ModelRequest, RunContext,
};
use crate::{Finish, RunState, Tool, ToolInfo};

/// The run's history: the instruction (if any), then the request's messages, in a new
/// vector with room for a few turns (growing one in place is the allocator's slow path).
fn history(input: Messages, instruction: &str) -> Messages {
    const ROOM: usize = 8;
    let mut history = Vec::with_capacity(input.len() + 1 + ROOM);
    if !instruction.is_empty() {
        history.push(Message::system(instruction));
    }
    history.extend(input.into_vec());
    Messages::from(history)
}

/// The request of one model call: the history so far, the run's tools, its extensions.
fn model_request(
    agent: &AgentInner,
    cx: &RunContext,
    state: &RunState,
    tool_infos: &Arc<[Arc<ToolInfo>]>,
) -> ModelRequest {
    let mut request = ModelRequest::with_extensions(
        state.messages.clone(),
        Arc::clone(tool_infos),
        cx.shared_extensions(),
    );
    request.options = agent.options.clone();
    request
}

pub(super) fn start(agent: Arc<AgentInner>, request: AgentRequest) -> AgentRun {
    let timeout = agent.run_timeout;
    let audience = RunShared::new(agent.model.clone());
    let listeners = audience.clone();
    // The run's state is one allocation per run, held by every run in flight: it is kept
    // small. A local that lives across more than one `yield` or `await` takes room in it
    // for the whole run, so the steps below bind as little as they can across them.
    let (input, extensions, handlers) = request.into_parts();
    let chain = Chain::new(handlers);
    let mut cx = RunContext::new(extensions);
    // The input, until `before_agent` has said what instruction goes before it.
    let mut state = RunState::new(input);
    AgentRun::new(
        async_stream::try_stream! {
            let mut config = chain.before_agent(&mut cx, agent.config.clone()).await?;

            let tool_infos: Arc<[Arc<ToolInfo>]> = if config.shares_tools_with(&agent.config) {
                Arc::clone(&agent.tool_infos)
            } else {
                config.check_tools().map_err(AgentError::Config)?;
                config.tools().iter().map(Tool::shared_info).collect()
            };
            let graph = agent.variants.get(config.key());

            state.messages = history(std::mem::take(&mut state.messages), config.instruction());

            let mut records = Vec::new();
            // Rare (a finishing tool, a degraded end): boxed, so it costs the state 8 bytes.
            let mut returned: Option<Box<Message>> = None;
            let mut degraded = false;
            let mut iteration = 0;
            let mut at = graph.entry();
            loop {
                let outcome = match graph.step(at) {
                    Step::End => break,
                    Step::CallModel => {
                        if iteration == agent.max_iterations {
                            Err(AgentError::MaxIterations { limit: agent.max_iterations })?;
                        }
                        iteration += 1;
                        cx.set_iteration(iteration);
                        chain.before_model(&mut cx, &mut state).await?;

                        let span = telemetry::model_span(iteration, tool_infos.len());
                        let response = InSpan::new(
                            chain.model(model_request(&agent, &cx, &state, &tool_infos), audience.clone()),
                            span,
                        )
                        .await
                        .map_err(AgentError::from_chain)?;
                        // A whole reply goes into the history at once; a streamed one is
                        // assembled there, its text passed on as it comes.
                        let streamed = match response.into_whole() {
                            Ok(reply) => {
                                state.messages.push(reply);
                                None
                            }
                            Err(deltas) => Some(deltas),
                        };
                        match streamed {
                            None => {
                                let text = state.messages.last().map_or("", Message::content);
                                if !text.is_empty() && audience.listening() {
                                    let text = text.to_owned();
                                    yield AgentEvent::TextDelta(text);
                                }
                            }
                            Some(mut deltas) => {
                                let mut reply = MessageAccumulator::default();
                                loop {
                                    let text = {
                                        let delta = match deltas.next().await {
                                            Some(delta) => delta.map_err(AgentError::Model)?,
                                            None => break,
                                        };
                                        match delta {
                                            ModelDelta::Text(text) => text,
                                            other => {
                                                reply.push(other);
                                                continue;
                                            }
                                        }
                                    };
                                    reply.push_text(&text);
                                    if audience.listening() {
                                        yield AgentEvent::TextDelta(text);
                                    }
                                }
                                state.messages.push(reply.finish());
                            }
                        }

                        chain.after_model(&mut cx, &mut state).await?;
                        let tool_calls = state.messages.last().is_some_and(|m| !m.tool_calls().is_empty());
                        if audience.listening() && let Some(message) = state.messages.last() {
                            let filler = agent.filler_messages && tool_calls && !message.content().is_empty();
                            let text = filler.then(|| message.content().to_owned());
                            let message = message.clone();
                            yield AgentEvent::Message(message);
                            if let Some(text) = text {
                                yield AgentEvent::Filler(text);
                            }
                        }
                        Outcome { tool_calls, ..Outcome::default() }
                    }
                    Step::RunTools => {
                        let turn = state.messages.len() - 1;
                        let (mut events, mut finished) = {
                            let calls = state.messages.last().map(|m| m.tool_calls().to_vec()).unwrap_or_default();
                            let finished: Vec<Option<Arc<ToolRecord>>> = vec![None; calls.len()];
                            let options = BatchOptions { events: audience.listening(), ..agent.batch };
                            let extensions = cx.shared_extensions();
                            let events = match config.executor() {
                                Some(executor) => executor.run(
                                    calls,
                                    DefaultExecutor::new(chain.clone(), config.clone(), extensions, options),
                                ),
                                None => exec::run_batch(chain.clone(), config.clone(), extensions, calls, options),
                            };
                            (events, finished)
                        };
                        // The first finishing call, in the model's order, wins; its result is
                        // held back to come last.
                        let mut winner: Option<usize> = None;
                        loop {
                            let event = {
                                let Some(event) = events.next().await else { break };
                                match event {
                                    CallEvent::Event(event) => Some(event),
                                    CallEvent::Fatal(error) => Err(error)?,
                                    CallEvent::Done(_, record)
                                        if !record.is_success()
                                            && agent.on_tool_failure == ToolFailurePolicy::FailRun =>
                                    {
                                        Err(AgentError::ToolFailed(Box::new(Arc::unwrap_or_clone(record))))?
                                    }
                                    CallEvent::Done(index, record) => {
                                        let mut emit = Some(index);
                                        if record.finish.is_some() && winner.is_none_or(|w| index < w) {
                                            emit = winner.replace(index);
                                        }
                                        finished[index] = Some(record);
                                        emit.and_then(|i| finished[i].as_ref())
                                            .map(|record| AgentEvent::ToolResult(Arc::clone(record)))
                                    }
                                }
                            };
                            if let Some(event) = event.filter(|_| audience.listening()) {
                                yield event;
                            }
                        }
                        drop(events);
                        if let Some(record) = winner.and_then(|i| finished[i].as_ref()).filter(|_| audience.listening()) {
                            let event = AgentEvent::ToolResult(Arc::clone(record));
                            yield event;
                        }

                        state.messages.to_mut().extend(finished.iter().flatten().map(|r| r.to_message()));
                        let winner = winner.and_then(|i| finished[i].as_ref());
                        returned = winner.map(|record| {
                            Box::new(match &record.finish {
                                Some(Finish::WithTurnText) => Message::assistant(state.messages[turn].content()),
                                Some(Finish::With(message)) => message.clone(),
                                _ => record.to_message(),
                            })
                        });
                        // Return-directly tools are the topology's business; other finishes halt.
                        let returned_directly = winner.is_some_and(|r| config.is_return_directly(&r.name));
                        if returned.is_none() && agent.on_tool_failure == ToolFailurePolicy::EndDegraded {
                            // The first failed call, in the model's order, ends the run.
                            returned = finished
                                .iter()
                                .flatten()
                                .find(|r| !r.is_success())
                                .map(|r| Box::new(r.to_message()));
                            degraded = returned.is_some();
                        }
                        records.extend(finished.into_iter().flatten());
                        Outcome {
                            tool_calls: true,
                            returned_directly,
                            halt: returned.is_some() && !returned_directly,
                        }
                    }
                };
                at = graph.next(at, outcome);
            }

            chain.after_agent(&mut cx, &mut state).await?;
            let final_message = returned
                .map(|message| *message)
                .or_else(|| state.messages.last().cloned())
                .unwrap_or_else(|| Message::assistant(""));
            yield AgentEvent::Completed(Box::new(AgentResult {
                status: if degraded { RunStatus::Degraded } else { RunStatus::Completed },
                final_message,
                messages: state.messages,
                // The caller has usually dropped the events by now: then nothing is copied.
                tool_records: records.into_iter().map(Arc::unwrap_or_clone).collect(),
                iterations: iteration,
                model_calls: audience.model_calls(),
                locals: std::mem::take(cx.locals_mut()),
            }));
        },
        timeout,
        listeners,
    )
}
