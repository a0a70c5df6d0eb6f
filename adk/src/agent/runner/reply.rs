//! The model's step of the loop: call the model, read its reply as it streams, and take
//! it (`after_model` may rewrite it; the loop routes on it).

use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use tower::BoxError;

use super::{Runner, Work};
use crate::agent::compile::Outcome;
use crate::agent::error::AgentError;
use crate::agent::event::AgentEvent;
use crate::agent::run::RunStep;
use crate::handler::Hook;
use crate::model::{MessageAccumulator, ModelDelta, ModelRequest, Usage};
use crate::telemetry::metrics::{self, ModelCall};
use crate::telemetry::{self, InSpan};

/// A reply that streams: what came so far, and the rest.
pub(super) struct Streaming {
    reply: MessageAccumulator,
    /// In the call's span, which ends with the reply.
    deltas: InSpan<BoxStream<'static, Result<ModelDelta, BoxError>>>,
    /// The call, until its stream ends.
    call: ModelCall,
}

impl Runner {
    /// Calls the model: `before_model`, then the `wrap_model` chain. A whole reply goes
    /// into the history at once; a streamed one is read by [`Runner::read_reply`].
    pub(super) async fn call_model(&mut self) -> Result<Option<AgentEvent>, AgentError> {
        let limit = self.agent.max_iterations;
        let iteration = self.run.context().iteration() + 1;
        if iteration > limit {
            return Err(AgentError::MaxIterations { limit });
        }
        self.run.context_mut().set_iteration(iteration);
        let (cx, history) = self.run.parts();
        if self.chain.calls(Hook::BeforeModel) {
            self.chain.before_model(cx, history).await?;
        }

        // The history the request is made of (a `wrap_model` hook may send less).
        let history = &self.run.history().messages;
        let span = telemetry::model_span(iteration, self.tool_infos.len(), history);
        let request = self.model_request();
        self.lend_locals();
        let (timed, call) = (
            ModelCall::start(),
            self.chain.model(request, self.audience.model()),
        );
        let response = InSpan::new(call, span.clone()).await;
        self.take_locals_back();
        let response = response.map_err(AgentError::from_chain);
        let response = response.inspect_err(|e| {
            timed.end(&self.agent.name, Some(e.code()));
            telemetry::record_failure(&span, e.code());
        })?;
        self.run
            .set_model_calls(self.model_calls + self.audience.model_calls());
        match response.into_whole() {
            Ok((reply, metered)) => {
                timed.end(&self.agent.name, None);
                telemetry::record_reply(&span, &reply);
                let listening = self.audience.listening() && !reply.content().is_empty();
                let text = listening.then(|| AgentEvent::TextDelta(reply.content().to_owned()));
                self.run.history_mut().messages.push(reply);
                self.run.set_step(RunStep::AfterModel);
                let Some(metered) = metered else {
                    return Ok(text);
                };
                telemetry::record_usage(&span, metered.model.as_deref(), &metered.usage);
                let usage = self.take_usage(metered.model, metered.usage);
                if text.is_none() {
                    return Ok(usage);
                }
                self.queued = usage.map(Box::new);
                Ok(text)
            }
            Err(deltas) => {
                let reply = MessageAccumulator::default();
                let deltas = InSpan::new(deltas, span);
                let streaming = Streaming {
                    reply,
                    deltas,
                    call: timed,
                };
                self.work = Work::Reply(Box::new(streaming));
                Ok(None)
            }
        }
    }

    /// Reads the next delta of a streamed reply; its text is passed on as it comes.
    pub(super) async fn read_reply(&mut self) -> Result<Option<AgentEvent>, AgentError> {
        let Work::Reply(streaming) = &mut self.work else {
            return Ok(None);
        };
        match streaming.deltas.next().await {
            Some(Ok(ModelDelta::Text(text))) => {
                streaming.reply.push_text(&text);
                Ok(Some(AgentEvent::TextDelta(text)).filter(|_| self.audience.listening()))
            }
            Some(Ok(ModelDelta::Reasoning(piece))) => {
                let listening = self.audience.listening() && !piece.text.is_empty();
                let event = listening.then(|| AgentEvent::ReasoningDelta(piece.text.clone()));
                streaming.reply.push(ModelDelta::Reasoning(piece));
                Ok(event)
            }
            Some(Ok(ModelDelta::Usage { model, usage })) => {
                telemetry::record_usage(streaming.deltas.span(), model.as_deref(), &usage);
                Ok(self.take_usage(model, usage))
            }
            Some(Ok(delta)) => {
                streaming.reply.push(delta);
                Ok(None)
            }
            Some(Err(error)) => {
                streaming.call.end(&self.agent.name, Some("model_failed"));
                telemetry::record_failure(streaming.deltas.span(), "model_failed");
                Err(AgentError::Model(error))
            }
            None => {
                let Work::Reply(streaming) = std::mem::replace(&mut self.work, Work::Idle) else {
                    return Ok(None);
                };
                streaming.call.end(&self.agent.name, None);
                let reply = streaming.reply.finish();
                telemetry::record_reply(streaming.deltas.span(), &reply);
                self.run.history_mut().messages.push(reply);
                self.run.set_step(RunStep::AfterModel);
                Ok(None)
            }
        }
    }

    /// Takes the model's reply: `after_model` may rewrite it, then the loop routes on it.
    pub(super) async fn take_reply(&mut self) -> Result<Option<AgentEvent>, AgentError> {
        let (cx, history) = self.run.parts();
        if self.chain.calls(Hook::AfterModel) {
            self.chain.after_model(cx, history).await?;
        }
        let messages = &self.run.history().messages;
        let tool_calls = messages.last().is_some_and(|m| !m.tool_calls().is_empty());
        let outcome = Outcome {
            tool_calls,
            ..Outcome::default()
        };
        self.run
            .set_step(self.graph.next(RunStep::AfterModel, outcome));

        let reply = self.run.history().messages.last();
        let Some(reply) = reply.filter(|_| self.audience.listening()) else {
            return Ok(None);
        };
        if self.agent.filler_messages && tool_calls && !reply.content().is_empty() {
            self.filler = Some(reply.content().to_owned());
        }
        Ok(Some(AgentEvent::Message(reply.clone())))
    }

    /// Adds what a call used to the run's usage; the event that says it, if listened to.
    fn take_usage(&mut self, model: Option<String>, usage: Usage) -> Option<AgentEvent> {
        metrics::tokens(&self.agent.name, model.as_deref(), &usage);
        self.run.add_usage(model.as_deref(), usage);
        let listening = self.audience.listening();
        listening.then_some(AgentEvent::Usage { model, usage })
    }

    /// The request of one model call: the history so far, the run's tools, its scope.
    /// (A run that resumes from a `wrap_model` interrupt carries the decision in it.)
    fn model_request(&mut self) -> ModelRequest {
        let messages = self.run.history().messages.clone();
        let tools = Arc::clone(&self.tool_infos);
        let mut request = ModelRequest::for_run(messages, tools, self.scope());
        request.options = self.agent.options.clone();
        if let Some(answer) = self.run.context_mut().take_answer_for(Hook::WrapModel) {
            request.extensions_mut().insert(answer);
        }
        request
    }
}
