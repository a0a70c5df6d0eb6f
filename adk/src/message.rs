//! Chat messages, tool calls, and the shared message history.
//!
//! A conversation is a list of [`Message`]s: system instructions, user turns, assistant
//! turns (which may carry [`ToolCall`]s) and tool results tied to a call id. The loop keeps
//! the history as [`Messages`], a copy-on-write list: handing it to a model, a handler or a
//! result is a reference-count increment, and it is copied only when someone changes a
//! history that is still shared.
//!
//! # Example
//!
//! ```
//! use tower_adk::{Message, Messages, ToolCall};
//! use serde_json::json;
//!
//! let mut history = Messages::from(vec![Message::user("What is 2 + 2?")]);
//! history.push(Message::assistant_with_calls(
//!     "",
//!     vec![ToolCall::new("call_1", "add", json!({"a": 2, "b": 2}))],
//! ));
//! history.push(Message::tool("call_1", "add", "4"));
//!
//! let shared = history.clone(); // cheap: the list is shared, not copied
//! assert_eq!(shared.len(), 3);
//! assert_eq!(history.last().and_then(Message::tool_call_id), Some("call_1"));
//! ```

use std::borrow::Cow;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
pub use smol_str::SmolStr;

use crate::content::{Content, Part};

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message {
    /// Instructions for the model.
    System {
        /// The instruction text.
        content: String,
    },
    /// A turn of the user.
    User {
        /// What the user said: text, or parts (text, images, files).
        content: Content,
    },
    /// A turn of the model: text, tool calls, or both.
    Assistant {
        /// What the model produced (may be empty when it only calls tools): text, or
        /// parts (its reasoning, text, images).
        content: Content,
        /// The tools the model asked to call, in the model's order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, tied to the call by its id.
    Tool {
        /// The id of the [`ToolCall`] this answers.
        call_id: SmolStr,
        /// The name of the tool that was called.
        name: SmolStr,
        /// What the model sees: the tool's output (text, or parts such as an image), or
        /// a description of its failure.
        content: Content,
        /// Whether `content` describes a failure rather than an output.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::System {
            content: content.into(),
        }
    }

    /// A user message: text, or [parts](crate::content).
    pub fn user(content: impl Into<Content>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    /// An assistant message without tool calls.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Message::Assistant {
            content: content.into(),
            tool_calls: Vec::new(),
        }
    }

    /// An assistant message with text (or parts) and tool calls.
    pub fn assistant_with_calls(content: impl Into<Content>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            content: content.into(),
            tool_calls,
        }
    }

    /// A successful tool result: text, or parts (an image a tool returned).
    pub fn tool(
        call_id: impl Into<SmolStr>,
        name: impl Into<SmolStr>,
        content: impl Into<Content>,
    ) -> Self {
        Message::Tool {
            call_id: call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error: false,
        }
    }

    /// A tool result that reports a failure to the model.
    pub fn tool_error(
        call_id: impl Into<SmolStr>,
        name: impl Into<SmolStr>,
        content: impl Into<Content>,
    ) -> Self {
        Message::Tool {
            call_id: call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error: true,
        }
    }

    /// The text of the message, whatever its role: all of it for a text-only message,
    /// else its first text part (see [`Content::text`]).
    #[inline]
    pub fn content(&self) -> &str {
        match self {
            Message::System { content } => content,
            Message::User { content }
            | Message::Assistant { content, .. }
            | Message::Tool { content, .. } => content.text(),
        }
    }

    /// The whole content of the message: its text, or its parts in order. A system
    /// message is text only.
    pub fn full_content(&self) -> Cow<'_, Content> {
        match self {
            Message::System { content } => Cow::Owned(Content::from(content.as_str())),
            Message::User { content }
            | Message::Assistant { content, .. }
            | Message::Tool { content, .. } => Cow::Borrowed(content),
        }
    }

    /// The whole content of the message, mutably; `None` for a system message (text
    /// only: its `content` is a `String`).
    pub fn full_content_mut(&mut self) -> Option<&mut Content> {
        match self {
            Message::System { .. } => None,
            Message::User { content }
            | Message::Assistant { content, .. }
            | Message::Tool { content, .. } => Some(content),
        }
    }

    /// The parts of the message, in order (a text-only message is one text part).
    pub fn parts(&self) -> Cow<'_, [Part]> {
        match self {
            Message::System { content } if content.is_empty() => Cow::Borrowed(&[]),
            Message::System { content } => Cow::Owned(vec![Part::text(content.as_str())]),
            Message::User { content }
            | Message::Assistant { content, .. }
            | Message::Tool { content, .. } => content.parts(),
        }
    }

    /// The tool calls of an assistant message; empty for every other role.
    #[inline]
    pub fn tool_calls(&self) -> &[ToolCall] {
        match self {
            Message::Assistant { tool_calls, .. } => tool_calls,
            _ => &[],
        }
    }

    /// The tool calls of an assistant message, mutably; `None` for every other role.
    pub fn tool_calls_mut(&mut self) -> Option<&mut Vec<ToolCall>> {
        match self {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        }
    }

    /// The call id of a tool result; `None` for every other role.
    #[inline]
    pub fn tool_call_id(&self) -> Option<&str> {
        match self {
            Message::Tool { call_id, .. } => Some(call_id),
            _ => None,
        }
    }

    /// Whether this is an assistant message.
    #[inline]
    pub fn is_assistant(&self) -> bool {
        matches!(self, Message::Assistant { .. })
    }

    /// Whether this is a tool result that reports a failure (the model reads it as an
    /// error); `false` for every other message.
    ///
    /// ```
    /// use tower_adk::Message;
    ///
    /// assert!(Message::tool_error("c1", "search", "timed out").is_error());
    /// assert!(!Message::tool("c1", "search", "found").is_error());
    /// assert!(!Message::user("hi").is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        matches!(self, Message::Tool { is_error: true, .. })
    }
}

/// A model's request to call one tool.
///
/// `arguments` holds the JSON text exactly as the model produced it: it may be malformed,
/// and the loop reports that to the model as an invalid-arguments tool result instead of
/// failing. It is parsed once, when the call executes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id, unique within the assistant message.
    pub id: SmolStr,
    /// The name of the tool to call.
    pub name: SmolStr,
    /// The arguments as JSON text.
    pub arguments: SmolStr,
}

impl ToolCall {
    /// A call with JSON arguments.
    pub fn new(
        id: impl Into<SmolStr>,
        name: impl Into<SmolStr>,
        arguments: serde_json::Value,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.to_string().into(),
        }
    }

    /// A call whose arguments are raw text, possibly not valid JSON (as a model may send).
    pub fn raw(
        id: impl Into<SmolStr>,
        name: impl Into<SmolStr>,
        arguments: impl Into<SmolStr>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// The message history of a run: a copy-on-write list of [`Message`]s.
///
/// Cloning shares the list. [`Messages::to_mut`] (and the mutating helpers built on it)
/// copies the list only if it is shared at that moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Messages(Arc<Vec<Message>>);

impl Messages {
    /// An empty history.
    pub fn new() -> Self {
        Messages::default()
    }

    /// The list, mutably; copies it first if it is shared.
    #[inline]
    pub fn to_mut(&mut self) -> &mut Vec<Message> {
        Arc::make_mut(&mut self.0)
    }

    /// The list itself; copied only if it is shared.
    #[inline]
    pub fn into_vec(self) -> Vec<Message> {
        Arc::unwrap_or_clone(self.0)
    }

    /// Appends a message.
    #[inline]
    pub fn push(&mut self, message: Message) {
        self.to_mut().push(message);
    }

    /// The last message, mutably.
    pub fn last_mut(&mut self) -> Option<&mut Message> {
        self.to_mut().last_mut()
    }

    /// Keeps only the messages for which `keep` returns `true`.
    pub fn retain(&mut self, keep: impl FnMut(&Message) -> bool) {
        self.to_mut().retain(keep);
    }

    /// The tool result that answers the call `call_id`, if the history has one.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::{Message, Messages};
    ///
    /// let history = Messages::from(vec![Message::tool_error("c1", "search", "timed out")]);
    /// let answer = history.tool_result("c1").unwrap();
    /// assert_eq!(answer.content(), "timed out");
    /// assert!(history.tool_result("c2").is_none());
    /// ```
    pub fn tool_result(&self, call_id: &str) -> Option<&Message> {
        self.iter().find(|m| m.tool_call_id() == Some(call_id))
    }

    /// The last assistant message, if any.
    pub fn last_assistant(&self) -> Option<&Message> {
        self.iter().rev().find(|m| m.is_assistant())
    }

    /// Answers every tool call that has no result (a *dangling* call: the process died
    /// before the call finished, or the history was cut) with a tool error, right after
    /// the results its message has; returns how many it answered. Providers refuse a
    /// history with unpaired calls. A history without dangling calls is not copied.
    ///
    /// A run repairs its input (and its thread's history) this way before its first
    /// model call.
    ///
    /// ```
    /// use tower_adk::{Message, Messages, ToolCall};
    /// use serde_json::json;
    ///
    /// let calls = vec![ToolCall::new("c1", "search", json!({})), ToolCall::new("c2", "book", json!({}))];
    /// let mut history = Messages::from(vec![
    ///     Message::user("book it"),
    ///     Message::assistant_with_calls("", calls),
    ///     Message::tool("c1", "search", "found"),
    ///     Message::user("well?"),
    /// ]);
    /// assert_eq!(history.repair_tool_calls(), 1);
    /// assert_eq!(history[3].tool_call_id(), Some("c2"));
    /// assert!(history[3].content().contains("did not complete"));
    /// assert_eq!(history.repair_tool_calls(), 0);
    /// ```
    pub fn repair_tool_calls(&mut self) -> usize {
        let mut missing: Vec<(usize, ToolCall)> = Vec::new();
        for (at, message) in self.iter().enumerate() {
            let calls = message.tool_calls();
            if calls.is_empty() {
                continue;
            }
            let results = self[at + 1..]
                .iter()
                .take_while(|m| m.tool_call_id().is_some());
            let answered: Vec<&str> = results.filter_map(Message::tool_call_id).collect();
            let end = at + 1 + answered.len();
            let unanswered = calls.iter().filter(|c| !answered.contains(&c.id.as_str()));
            missing.extend(unanswered.map(|call| (end, call.clone())));
        }
        let repaired = missing.len();
        // From the back, so that each insertion leaves the earlier places as they were.
        for (at, call) in missing.into_iter().rev() {
            let text = "error (interrupted): the call did not complete; it has no result";
            self.to_mut()
                .insert(at, Message::tool_error(call.id, call.name, text));
        }
        repaired
    }
}

impl Deref for Messages {
    type Target = [Message];

    fn deref(&self) -> &[Message] {
        &self.0
    }
}

impl From<Vec<Message>> for Messages {
    fn from(messages: Vec<Message>) -> Self {
        Messages(Arc::new(messages))
    }
}

impl FromIterator<Message> for Messages {
    fn from_iter<I: IntoIterator<Item = Message>>(iter: I) -> Self {
        Messages::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl<'a> IntoIterator for &'a Messages {
    type Item = &'a Message;
    type IntoIter = std::slice::Iter<'a, Message>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
