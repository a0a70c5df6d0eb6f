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
//! of it. Its other parts are estimated on the safe side: an image costs
//! [`IMAGE_TOKENS`], a file inline its data as text (a URL, [`IMAGE_TOKENS`]), the
//! model's reasoning its readable text.
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
use adk::content::{Content, Part, Source};

#[cfg(feature = "tiktoken")]
pub use self::tiktoken::{Tiktoken, UnknownModel};

/// The tokens of framing around each message (OpenAI's chat format: role and separators).
pub const MESSAGE_OVERHEAD: usize = 3;

/// The tokens that prime the model's reply, once per request.
pub const REPLY_PRIMING: usize = 3;

/// The tokens an image is counted as, whatever its size: the most the providers charge
/// for one image at their default detail (Anthropic's ~1,600 for 1.15 megapixels,
/// OpenAI's 1,105 for high detail at 768 pixels), so that a budget stays safe.
pub const IMAGE_TOKENS: usize = 1_600;

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
        let content = message.full_content();
        let content = match &*content {
            Content::Text(text) => self.count(text),
            Content::Parts(parts) => parts.iter().map(|part| self.count_part(part)).sum(),
        };
        MESSAGE_OVERHEAD + content + calls
    }

    /// The tokens of one part of a message: its text; an image, [`IMAGE_TOKENS`]; a file
    /// inline, its data counted as text (a URL, [`IMAGE_TOKENS`]); reasoning, its text.
    fn count_part(&self, part: &Part) -> usize {
        match part {
            Part::Text { text } => self.count(text),
            Part::Reasoning(reasoning) => self.count(&reasoning.text),
            Part::File {
                source: Source::Base64 { data, .. },
                ..
            } => self.count(data),
            _ => IMAGE_TOKENS,
        }
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

    #[test]
    fn images_count_as_a_fixed_allowance_files_as_their_data_and_reasoning_as_its_text() {
        use adk::content::Reasoning;

        let mut content = Content::from("abcd");
        content.push(Part::image(Source::base64(
            "image/png",
            "A".repeat(4_000_000),
        )));
        content.push(Part::file(
            Source::base64("application/pdf", "B".repeat(400)),
            None,
        ));
        let thinking =
            Reasoning::new("anthropic", "abcdefgh").with_data("signature", "x".repeat(999));
        content.push(Part::Reasoning(thinking));
        let message = Message::user(content);
        // framing 3 + text 1 + image 1,600 + file 100 + reasoning 2 (not its signature)
        assert_eq!(
            CharEstimate.count_message(&message),
            3 + 1 + IMAGE_TOKENS + 100 + 2
        );
    }

    fn _object_safe(_: &dyn TokenCounter) {}
}
