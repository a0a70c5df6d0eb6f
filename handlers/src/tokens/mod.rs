//! Counting a history's tokens: the [`TokenCounter`] trait, an estimate for any model
//! ([`CharEstimate`]), and OpenAI's own tokenizers ([`Tiktoken`], feature `tiktoken`).
//!
//! The context handlers ([`Summarizer`](crate::Summarizer),
//! [`ToolResultOffload`](crate::ToolResultOffload)) measure the history with a counter.
//! [`counter_for_model`] picks the real tokenizer where the model's is known (OpenAI's
//! model names, with the `tiktoken` feature) and the estimate otherwise.
//!
//! A message costs its text, its tool calls' names and arguments, and a few tokens of
//! framing ([`MESSAGE_OVERHEAD`], as OpenAI's chat format counts them); a history costs
//! its messages and the [`REPLY_PRIMING`] of the reply. The tools' schemas are not part
//! of it.
//!
//! # Example
//!
//! ```
//! use tower_adk::handlers::{CharEstimate, TokenCounter};
//! use tower_adk::Message;
//!
//! let counter = CharEstimate;
//! assert_eq!(counter.count("twelve bytes"), 3);
//! let history = [Message::user("twelve bytes")];
//! assert_eq!(counter.count_messages(&history), 3 + 3 + 3);
//! ```

#[cfg(feature = "tiktoken")]
mod tiktoken;

use std::sync::Arc;

use adk::Message;

#[cfg(feature = "tiktoken")]
pub use self::tiktoken::{Tiktoken, UnknownModel};

/// The tokens of framing around each message (OpenAI's chat format: role and separators).
pub const MESSAGE_OVERHEAD: usize = 3;

/// The tokens that prime the model's reply, once per request.
pub const REPLY_PRIMING: usize = 3;

/// Counts tokens of text, and from it of messages and histories.
///
/// Implement [`count`](TokenCounter::count); the other methods follow from it.
pub trait TokenCounter: Send + Sync + 'static {
    /// The tokens of a text.
    fn count(&self, text: &str) -> usize;

    /// The tokens of one message: its text, its tool calls, and its framing.
    fn count_message(&self, message: &Message) -> usize {
        let calls: usize = (message.tool_calls().iter())
            .map(|call| self.count(&call.name) + self.count(&call.arguments) + 1)
            .sum();
        MESSAGE_OVERHEAD + self.count(message.content()) + calls
    }

    /// The tokens of a history sent to the model.
    fn count_messages(&self, messages: &[Message]) -> usize {
        let sum: usize = messages.iter().map(|m| self.count_message(m)).sum();
        sum + REPLY_PRIMING
    }
}

impl<C: TokenCounter + ?Sized> TokenCounter for Arc<C> {
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
}

impl<C: TokenCounter + ?Sized> TokenCounter for Box<C> {
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
}

/// An estimate for any model: one token per four bytes of UTF-8, rounded up.
///
/// English prose runs at about four characters per token with OpenAI's tokenizers, so
/// this is close for it; other scripts take more bytes per character than tokens, so the
/// estimate runs high for them, which keeps a budget safe. It costs nothing to compute
/// (the length of the text).
#[derive(Debug, Clone, Copy, Default)]
pub struct CharEstimate;

impl TokenCounter for CharEstimate {
    fn count(&self, text: &str) -> usize {
        text.len().div_ceil(4)
    }
}

/// The counter for a model: its own tokenizer where it is known (OpenAI's model names,
/// with the `tiktoken` feature), else [`CharEstimate`].
///
/// ```
/// use tower_adk::handlers::counter_for_model;
///
/// let counter = counter_for_model("some-local-model");
/// assert_eq!(counter.count("twelve bytes"), 3); // estimated
/// ```
pub fn counter_for_model(model: &str) -> Arc<dyn TokenCounter> {
    #[cfg(feature = "tiktoken")]
    if let Ok(tokenizer) = Tiktoken::for_model(model) {
        return Arc::new(tokenizer);
    }
    let _ = model;
    Arc::new(CharEstimate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_rounds_up_and_counts_calls_and_framing() {
        assert_eq!(CharEstimate.count(""), 0);
        assert_eq!(CharEstimate.count("a"), 1);
        assert_eq!(CharEstimate.count("abcd"), 1);
        assert_eq!(CharEstimate.count("abcde"), 2);
        let call = adk::ToolCall::raw("c1", "find", "{\"q\":1}");
        let message = Message::assistant_with_calls("abcd", vec![call]);
        // framing 3 + text 1 + (name 1 + arguments 2 + 1)
        assert_eq!(CharEstimate.count_message(&message), 8);
    }

    fn _object_safe(_: &dyn TokenCounter) {}
}
