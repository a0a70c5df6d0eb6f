//! A model's reply, read whole or as a stream of [`ModelDelta`]s ([`ModelResponse`]), and
//! [`MessageAccumulator`], which builds the assistant message from the streamed pieces.

use std::fmt;

use futures::stream::{self, BoxStream};
use futures::{Stream, StreamExt, TryStreamExt};
use tower::BoxError;

use crate::content::{Content, Part, Reasoning};
use crate::message::{Message, ToolCall};
use crate::model::Usage;

/// One piece of a streamed model reply.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelDelta {
    /// More text.
    Text(String),
    /// A piece of a tool call. Pieces with the same `index` belong to the same call: the
    /// first piece usually carries the id and name, later ones append to the arguments.
    /// A later id replaces the earlier one; a later name piece is appended to the name,
    /// unless it repeats the whole name so far (servers that send the name in every piece).
    ToolCall {
        /// The position of the call in the message.
        index: usize,
        /// The call id, if this piece carries it.
        id: Option<String>,
        /// The tool name, if this piece carries it.
        name: Option<String>,
        /// Arguments text to append.
        arguments: String,
    },
    /// A piece of the model's reasoning: its readable text to append, and its opaque
    /// data when this piece carries it (a signature at the end of a thinking block).
    /// Pieces of one provider and id, until one carries data, build one [`Reasoning`]
    /// part; the loop passes the text on as
    /// [`AgentEvent::ReasoningDelta`](crate::agent::AgentEvent::ReasoningDelta).
    Reasoning(Reasoning),
    /// A whole part of the reply, in its place among the others: an image the model
    /// made, a whole reasoning block.
    Part(Part),
    /// What the call used, as the server counted it (usually once, at the end of the
    /// stream), and the name of the model that answered, when the server said. The loop
    /// adds it to the run's [`UsageTotals`](super::UsageTotals) and passes it on as
    /// [`AgentEvent::Usage`](crate::agent::AgentEvent::Usage).
    Usage {
        /// The model that answered.
        model: Option<String>,
        /// Its usage.
        usage: Usage,
    },
}

impl ModelDelta {
    /// A whole tool call as one delta.
    pub fn tool_call(index: usize, call: ToolCall) -> Self {
        ModelDelta::ToolCall {
            index,
            id: Some(call.id.into()),
            name: Some(call.name.into()),
            arguments: call.arguments.into(),
        }
    }
}

/// A model's reply, read whole or as a stream of [`ModelDelta`]s.
pub struct ModelResponse(Inner);

enum Inner {
    Message(Message, Option<Box<Metered>>),
    Stream(BoxStream<'static, Result<ModelDelta, BoxError>>),
}

/// The usage a whole reply reports, and the model that answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Metered {
    pub(crate) model: Option<String>,
    pub(crate) usage: Usage,
}

impl ModelResponse {
    /// A reply that is already whole.
    pub fn message(message: Message) -> Self {
        ModelResponse(Inner::Message(message, None))
    }

    /// The reply, reporting what the call used and which model answered: a whole reply
    /// keeps it, a streamed one ends with a [`ModelDelta::Usage`].
    ///
    /// ```
    /// use futures::StreamExt;
    /// use tower_adk::model::{ModelDelta, ModelResponse, Usage};
    /// use tower_adk::Message;
    ///
    /// # futures::executor::block_on(async {
    /// let reply = ModelResponse::message(Message::assistant("hi"))
    ///     .with_usage(Some("small".into()), Usage::new(3, 1, 4));
    /// let deltas: Vec<_> = reply.into_stream().collect().await;
    /// assert!(matches!(
    ///     deltas.last(),
    ///     Some(Ok(ModelDelta::Usage { usage, .. })) if usage.total_tokens == 4
    /// ));
    /// # });
    /// ```
    pub fn with_usage(self, model: Option<String>, usage: Usage) -> Self {
        match self.0 {
            Inner::Message(message, _) => ModelResponse(Inner::Message(
                message,
                Some(Box::new(Metered { model, usage })),
            )),
            Inner::Stream(deltas) => {
                let end = stream::once(async move { Ok(ModelDelta::Usage { model, usage }) });
                ModelResponse(Inner::Stream(deltas.chain(end).boxed()))
            }
        }
    }

    /// A streamed reply.
    pub fn stream<S, E>(deltas: S) -> Self
    where
        S: Stream<Item = Result<ModelDelta, E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        ModelResponse(Inner::Stream(deltas.map_err(Into::into).boxed()))
    }

    /// Whether the reply streams (rather than being whole already).
    ///
    /// ```
    /// use tower_adk::{Message, ModelDelta, ModelResponse};
    ///
    /// assert!(!ModelResponse::message(Message::assistant("hi")).is_streamed());
    /// let deltas = futures::stream::iter([Ok::<_, tower_adk::BoxError>(ModelDelta::Text("hi".into()))]);
    /// assert!(ModelResponse::stream(deltas).is_streamed());
    /// ```
    pub fn is_streamed(&self) -> bool {
        matches!(self.0, Inner::Stream(_))
    }

    /// The reply as a stream of deltas; a whole reply becomes its text, then its calls.
    pub fn into_stream(self) -> BoxStream<'static, Result<ModelDelta, BoxError>> {
        match self.0 {
            Inner::Stream(deltas) => deltas,
            Inner::Message(message, metered) => {
                let (content, calls) = match message {
                    Message::Assistant {
                        content,
                        tool_calls,
                    } => (content, tool_calls),
                    other => (Content::from(other.content()), Vec::new()),
                };
                let parts: Vec<ModelDelta> = match content {
                    Content::Text(text) if text.is_empty() => Vec::new(),
                    Content::Text(text) => vec![ModelDelta::Text(text)],
                    Content::Parts(parts) => (parts.into_iter())
                        .map(|part| match part {
                            Part::Text { text } => ModelDelta::Text(text),
                            part => ModelDelta::Part(part),
                        })
                        .collect(),
                };
                let calls = calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| ModelDelta::tool_call(i, c));
                let usage = metered.map(|m| ModelDelta::Usage {
                    model: m.model,
                    usage: m.usage,
                });
                stream::iter(parts.into_iter().chain(calls).chain(usage).map(Ok)).boxed()
            }
        }
    }

    /// The reply as one assistant message (and the usage it reports) if it is already
    /// whole, else its deltas.
    #[allow(clippy::type_complexity)]
    pub(crate) fn into_whole(
        self,
    ) -> Result<(Message, Option<Box<Metered>>), BoxStream<'static, Result<ModelDelta, BoxError>>>
    {
        match self.0 {
            Inner::Message(message @ Message::Assistant { .. }, metered) => Ok((message, metered)),
            Inner::Message(other, metered) => Ok((Message::assistant(other.content()), metered)),
            Inner::Stream(deltas) => Err(deltas),
        }
    }

    /// Reads the whole reply into one assistant message (what it reports it used is
    /// left out: read [`into_stream`](Self::into_stream) for that).
    ///
    /// # Errors
    ///
    /// The first error of the stream.
    pub async fn into_message(self) -> Result<Message, BoxError> {
        match self.0 {
            Inner::Message(message, _) => Ok(message),
            Inner::Stream(mut deltas) => {
                let mut acc = MessageAccumulator::default();
                while let Some(delta) = deltas.next().await {
                    acc.push(delta?);
                }
                Ok(acc.finish())
            }
        }
    }
}

impl fmt::Debug for ModelResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Inner::Message(m, None) => f.debug_tuple("ModelResponse").field(m).finish(),
            Inner::Message(m, Some(metered)) => (f.debug_tuple("ModelResponse"))
                .field(m)
                .field(&metered.usage)
                .finish(),
            Inner::Stream(_) => f.debug_tuple("ModelResponse").field(&"<stream>").finish(),
        }
    }
}

/// Builds an assistant message from streamed [`ModelDelta`]s.
///
/// # Example
///
/// ```
/// use tower_adk::{MessageAccumulator, ModelDelta};
///
/// let mut acc = MessageAccumulator::default();
/// acc.push(ModelDelta::Text("Let me look. ".into()));
/// acc.push(ModelDelta::ToolCall { index: 0, id: Some("c1".into()), name: Some("search".into()), arguments: "{\"q\":".into() });
/// acc.push(ModelDelta::ToolCall { index: 0, id: None, name: None, arguments: "\"rust\"}".into() });
/// let message = acc.finish();
/// assert_eq!(message.content(), "Let me look. ");
/// assert_eq!(message.tool_calls()[0].arguments, r#"{"q":"rust"}"#);
/// ```
#[derive(Debug, Default, Clone)]
pub struct MessageAccumulator {
    /// The text, while the reply has no other part (the common case).
    text: String,
    /// The parts in order, once the reply has one that is not text (`text` then joins
    /// them first).
    parts: Vec<Part>,
    calls: Vec<PartialCall>,
}

/// A call whose pieces are still coming.
#[derive(Debug, Default, Clone)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl MessageAccumulator {
    /// Adds text.
    pub fn push_text(&mut self, text: &str) {
        if self.parts.is_empty() {
            self.text.push_str(text);
            return;
        }
        match self.parts.last_mut() {
            Some(Part::Text { text: last }) => last.push_str(text),
            _ => self.parts.push(Part::text(text)),
        }
    }

    /// Adds a part in its place (the text so far goes first).
    fn push_part(&mut self, part: Part) {
        if self.parts.is_empty() && !self.text.is_empty() {
            let text = std::mem::take(&mut self.text);
            self.parts.push(Part::Text { text });
        }
        self.parts.push(part);
    }

    /// Adds a piece of reasoning: to the reasoning part it continues (same provider and
    /// id, still without data), else as a new part.
    fn push_reasoning(&mut self, piece: Reasoning) {
        if let Some(Part::Reasoning(open)) = self.parts.last_mut()
            && open.provider == piece.provider
            && open.data.is_none()
            && (piece.id.is_none() || open.id == piece.id)
        {
            open.text.push_str(&piece.text);
            if piece.data.is_some() {
                open.data = piece.data;
                open.kind = piece.kind;
            }
            return;
        }
        self.push_part(Part::Reasoning(piece));
    }

    /// Adds one delta.
    pub fn push(&mut self, delta: ModelDelta) {
        match delta {
            ModelDelta::Text(text) => self.push_text(&text),
            ModelDelta::Reasoning(piece) => self.push_reasoning(piece),
            ModelDelta::Part(Part::Text { text }) => self.push_text(&text),
            ModelDelta::Part(part) => self.push_part(part),
            ModelDelta::Usage { .. } => {}
            ModelDelta::ToolCall {
                index,
                id,
                name,
                arguments,
            } => {
                if self.calls.len() <= index {
                    self.calls.resize_with(index + 1, PartialCall::default);
                }
                let call = &mut self.calls[index];
                if let Some(id) = id {
                    call.id = id;
                }
                // Names arrive in pieces, or whole in every piece (some servers repeat
                // them): a piece equal to the whole name so far is such a repeat.
                match name {
                    Some(name) if name != call.name => call.name.push_str(&name),
                    _ => {}
                }
                call.arguments.push_str(&arguments);
            }
        }
    }

    /// The message so far. Calls that never received an id get `call_<index>`; calls with
    /// no name at all (gaps in the indices) are dropped.
    pub fn finish(self) -> Message {
        let calls = self
            .calls
            .into_iter()
            .enumerate()
            .filter(|(_, c)| !c.name.is_empty())
            .map(|(i, c)| {
                let id = if c.id.is_empty() {
                    format!("call_{i}")
                } else {
                    c.id
                };
                ToolCall::raw(id, c.name, c.arguments)
            })
            .collect();
        let content = if self.parts.is_empty() {
            Content::Text(self.text)
        } else {
            Content::from(self.parts)
        };
        Message::assistant_with_calls(content, calls)
    }
}

#[cfg(test)]
mod tests {
    use super::{MessageAccumulator, ModelDelta};

    fn piece(index: usize, id: Option<&str>, name: Option<&str>, arguments: &str) -> ModelDelta {
        ModelDelta::ToolCall {
            index,
            id: id.map(Into::into),
            name: name.map(Into::into),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn a_name_repeated_in_every_piece_is_kept_once() {
        let mut acc = MessageAccumulator::default();
        acc.push(piece(0, Some("c1"), Some("search"), "{\"q\":"));
        acc.push(piece(0, Some("c1"), Some("search"), "\"rust\"}"));
        let message = acc.finish();
        assert_eq!(message.tool_calls()[0].name, "search");
        assert_eq!(message.tool_calls()[0].id, "c1");
        assert_eq!(message.tool_calls()[0].arguments, r#"{"q":"rust"}"#);
    }

    #[test]
    fn reasoning_pieces_make_one_part_until_one_carries_its_signature() {
        use crate::content::{Part, Reasoning};
        let mut acc = MessageAccumulator::default();
        acc.push(ModelDelta::Reasoning(Reasoning::new(
            "anthropic",
            "Let me ",
        )));
        acc.push(ModelDelta::Reasoning(Reasoning::new("anthropic", "think.")));
        let signed = Reasoning::new("anthropic", "").with_data("signature", "c2ln");
        acc.push(ModelDelta::Reasoning(signed));
        acc.push(ModelDelta::Reasoning(Reasoning::new("anthropic", "More.")));
        acc.push(ModelDelta::Text("Done.".into()));
        let message = acc.finish();
        assert_eq!(message.content(), "Done.");
        let parts = message.parts();
        let reasoning: Vec<_> = (parts.iter())
            .filter_map(|p| match p {
                Part::Reasoning(r) => Some((r.text.as_str(), r.data.as_deref())),
                _ => None,
            })
            .collect();
        assert_eq!(
            reasoning,
            [("Let me think.", Some("c2ln")), ("More.", None)]
        );
        assert_eq!(parts.len(), 3);
    }

    #[test]
    fn a_name_sent_in_pieces_is_joined() {
        let mut acc = MessageAccumulator::default();
        acc.push(piece(0, Some("c1"), Some("get_"), ""));
        acc.push(piece(0, None, Some("weather"), "{}"));
        assert_eq!(acc.finish().tool_calls()[0].name, "get_weather");
    }
}
