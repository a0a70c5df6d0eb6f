//! [`Summarizer`]: keeps a run's history within a token budget by replacing its older
//! turns with a summary, written by a model.

mod cut;

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::sync::Arc;

use adk::{BoxError, BoxModel, Handler, History, Message, ModelRequest, ModelResponse, RunContext};
use tower::{Service, ServiceExt};

use crate::tokens::{CharEstimate, TokenCounter};

/// What the summary model is told to do.
pub const DEFAULT_PROMPT: &str = "Summarise the conversation below for the assistant that \
    continues it: what the user wants, the facts and decisions so far (names, numbers, \
    ids, tool results that matter), and what is still open. Be brief; write only the \
    summary.";

/// The start of the message that holds the summary.
pub const SUMMARY_PREFIX: &str = "Summary of the conversation so far:";

/// A handler that keeps the history within a token budget: before a model call, when the
/// history is over the budget, its older turns are summarised by a model and replaced by
/// one message with the summary.
///
/// - **What stays**: the leading system messages, and the most recent messages that fit
///   in [`keep_recent`](Summarizer::keep_recent) tokens (default half the budget). What
///   lies between (a previous summary included) is summarised.
/// - **Tool calls stay paired**: the cut never falls between an assistant message with
///   tool calls and its results; they stay together or go into the summary together.
///   The last turn stays, even when it alone is over the budget (a single huge tool
///   result is [`ToolResultOffload`](crate::ToolResultOffload)'s to shrink: register it
///   before the summariser).
/// - **The summary** is written by `model`, any tower model service (a small, cheap
///   one will do), from a transcript of the older turns, with at most
///   [`summary_tokens`](Summarizer::summary_tokens) tokens (default a quarter of the
///   budget; asked for with `max_tokens`, and cut to it if the model writes more). It
///   goes in as a user message starting with [`SUMMARY_PREFIX`], right after the system
///   messages.
/// - **Counting**: with a [`TokenCounter`] (default [`CharEstimate`]; for OpenAI models
///   [`counter_for_model`](crate::counter_for_model)). The budget is for the messages;
///   the tools' schemas come on top.
///
/// The history it rewrites is the run's (`before_model`): later turns, the run's result
/// and the thread's saved history hold the summary. Each model call of the run costs a
/// count of the history (linear in its length, which the budget bounds); see
/// BENCHMARKS.md.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::Summarizer;
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::{Agent, AgentRequest, Message};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let summary_model = ScriptedModel::new([Turn::text("The user likes tea.")]);
/// let model = ScriptedModel::new([Turn::text("Tea it is.")]);
/// let agent = Agent::builder(model.clone()).build()?;
///
/// let long_ago: Vec<Message> = (0..50).map(|i| Message::user(format!("message {i} about tea"))).collect();
/// let mut input = long_ago;
/// input.push(Message::user("What do I like?"));
/// let summarizer = Summarizer::new(summary_model, 200).keep_recent(10);
/// agent.run(AgentRequest::new(input).with_handler(summarizer)).await?;
///
/// let seen = &model.requests()[0].messages;
/// assert_eq!(seen.len(), 2);
/// assert_eq!(seen[0].content(), "Summary of the conversation so far:\nThe user likes tea.");
/// assert_eq!(seen[1].content(), "What do I like?");
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Summarizer {
    model: BoxModel,
    counter: Arc<dyn TokenCounter>,
    budget: usize,
    keep: usize,
    summary_tokens: usize,
    prompt: Arc<str>,
}

impl Summarizer {
    /// Summarises with `model` when the history passes `budget` tokens.
    pub fn new<M>(model: M, budget: usize) -> Self
    where
        M: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
        M::Error: Into<BoxError>,
        M::Future: Send + 'static,
    {
        Summarizer {
            model: BoxModel::new(model.map_err(Into::into)),
            counter: Arc::new(CharEstimate),
            budget,
            keep: budget / 2,
            summary_tokens: budget / 4,
            prompt: Arc::from(DEFAULT_PROMPT),
        }
    }

    /// Counts tokens with this counter (default [`CharEstimate`]).
    pub fn counter(mut self, counter: impl TokenCounter) -> Self {
        self.counter = Arc::new(counter);
        self
    }

    /// How many tokens of the most recent messages stay as they are (default half the
    /// budget).
    pub fn keep_recent(mut self, tokens: usize) -> Self {
        self.keep = tokens;
        self
    }

    /// The most tokens a summary may have (default a quarter of the budget).
    pub fn summary_tokens(mut self, tokens: usize) -> Self {
        self.summary_tokens = tokens;
        self
    }

    /// What the summary model is told to do (default [`DEFAULT_PROMPT`]).
    pub fn prompt(mut self, prompt: impl Into<Arc<str>>) -> Self {
        self.prompt = prompt.into();
        self
    }

    /// The budget, in tokens.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Asks the model for a summary of `older`, cut to the summary's budget.
    async fn summarize(&self, older: &[Message]) -> Result<String, BoxError> {
        let mut request = ModelRequest::new(
            vec![
                Message::system(&*self.prompt),
                Message::user(transcript(older)),
            ]
            .into(),
        );
        request.options.max_tokens = u32::try_from(self.summary_tokens).ok();
        let reply = self.model.clone().oneshot(request).await?;
        let mut summary = reply.into_message().await?.content().trim().to_owned();
        while self.counter.count(&summary) > self.summary_tokens {
            let mut at = summary.len() * 9 / 10;
            while !summary.is_char_boundary(at) {
                at -= 1;
            }
            summary.truncate(at);
        }
        Ok(format!("{SUMMARY_PREFIX}\n{summary}"))
    }
}

impl Handler for Summarizer {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("summarizer")
    }

    async fn before_model(
        &self,
        _: &mut RunContext,
        history: &mut History,
    ) -> Result<(), BoxError> {
        if self.counter.count_messages(&history.messages) <= self.budget {
            return Ok(());
        }
        let count = |m: &Message| self.counter.count_message(m);
        let Some(older) = cut::older_turns(&history.messages, self.keep, count) else {
            return Ok(());
        };
        let summary = self.summarize(&history.messages[older.clone()]).await?;
        history
            .messages
            .to_mut()
            .splice(older, [Message::user(summary)]);
        Ok(())
    }
}

impl fmt::Debug for Summarizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Summarizer")
            .field("budget", &self.budget)
            .field("keep_recent", &self.keep)
            .field("summary_tokens", &self.summary_tokens)
            .finish_non_exhaustive()
    }
}

/// The older turns as text for the summary model: one line (or paragraph) per message;
/// images and files as placeholders, the model's reasoning left out (it goes with the
/// turns it is summarised with, never to the summary model).
fn transcript(messages: &[Message]) -> String {
    let mut text = String::new();
    for message in messages {
        let _ = match message {
            Message::System { content } => writeln!(text, "system: {content}"),
            Message::User { content } => writeln!(text, "user: {}", content.readable()),
            Message::Tool { name, content, .. } => {
                writeln!(text, "tool `{name}` answered: {}", content.readable())
            }
            Message::Assistant { content, .. } => {
                let said = content.readable();
                if !said.is_empty() {
                    let _ = writeln!(text, "assistant: {said}");
                }
                for call in message.tool_calls() {
                    let _ = writeln!(
                        text,
                        "assistant called `{}` with {}",
                        call.name, call.arguments
                    );
                }
                Ok(())
            }
            _ => writeln!(text, "{}", message.content()),
        };
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use adk::content::{Content, Part, Reasoning, Source};
    use adk::{Message, ToolCall};
    use serde_json::json;

    use super::cut::older_turns;
    use super::transcript;

    #[test]
    fn the_transcript_shows_images_as_placeholders_and_leaves_reasoning_out() {
        let mut question = Content::from("What is this?");
        question.push(Part::image(Source::url("https://example.com/cat.png")));
        let thinking = Reasoning::new("anthropic", "secret musings").with_data("signature", "c2ln");
        let mut answer = Content::from(vec![Part::Reasoning(thinking)]);
        answer.push(Part::text("A cat."));
        let text = transcript(&[Message::user(question), Message::assistant(answer)]);

        assert!(text.contains("user: What is this?\n\n[an image: https://example.com/cat.png]"));
        assert!(text.contains("assistant: A cat."));
        assert!(!text.contains("secret musings"), "{text}");
    }

    #[test]
    fn a_call_and_the_reasoning_that_made_it_are_kept_or_summarised_together() {
        let thinking = Reasoning::new("anthropic", "look it up").with_data("signature", "c2ln");
        let call = ToolCall::new("c1", "find", json!({}));
        let mut reply = Message::assistant_with_calls("", vec![call]);
        reply
            .full_content_mut()
            .unwrap()
            .push(Part::Reasoning(thinking));
        let history = [
            Message::user("old question"),
            Message::assistant("old answer"),
            Message::user("find it"),
            reply,
            Message::tool("c1", "find", "found"),
        ];
        // Whatever the budget of the tail, the cut falls between whole messages, and the
        // reply with its reasoning is never parted from its result.
        for keep in 0..40 {
            let Some(older) = older_turns(&history, keep, |m| m.content().len() + 5) else {
                continue;
            };
            let tail = &history[older.end..];
            let reasoning = tail
                .iter()
                .filter(|m| m.full_content().reasoning().count() > 0);
            let results = tail.iter().filter(|m| m.tool_call_id().is_some());
            assert_eq!(reasoning.count(), results.count(), "keep {keep}: {older:?}");
        }
    }
}
