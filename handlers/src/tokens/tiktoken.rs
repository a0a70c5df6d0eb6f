//! [`Tiktoken`]: OpenAI's own tokenizers (feature `tiktoken`).

use tiktoken_rs::CoreBPE;

use super::TokenCounter;

/// Counts tokens with the tokenizer of an OpenAI model (cl100k for GPT-4 and
/// GPT-3.5, o200k for GPT-4o, o1 and later), from tiktoken-rs.
///
/// The tokenizer's tables are built once per process, on first use (they are embedded
/// in the binary), and shared by every counter; counting is then a BPE pass over the
/// text, so a counter is cheap to make and to clone.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::{TokenCounter, Tiktoken};
///
/// let gpt4o = Tiktoken::for_model("gpt-4o")?;
/// assert_eq!(gpt4o.count("hello world"), 2);
/// assert!(Tiktoken::for_model("llama-3").is_err());
/// # Ok::<_, tower_adk::handlers::UnknownModel>(())
/// ```
#[derive(Clone)]
pub struct Tiktoken {
    bpe: &'static CoreBPE,
}

/// No OpenAI tokenizer is known for this model name.
#[derive(Debug, Clone, thiserror::Error)]
#[error("no OpenAI tokenizer is known for model `{0}`")]
pub struct UnknownModel(pub String);

impl Tiktoken {
    /// The tokenizer of an OpenAI model, by its name (`gpt-4o`, `gpt-4o-mini`,
    /// `gpt-4-turbo`, `o3`, ...; dated snapshots too).
    ///
    /// # Errors
    ///
    /// [`UnknownModel`] for a name tiktoken-rs does not know.
    pub fn for_model(model: &str) -> Result<Self, UnknownModel> {
        match tiktoken_rs::bpe_for_model(model) {
            Ok(bpe) => Ok(Tiktoken { bpe }),
            Err(_) => Err(UnknownModel(model.to_owned())),
        }
    }
}

impl TokenCounter for Tiktoken {
    fn count(&self, text: &str) -> usize {
        self.bpe.encode_ordinary(text).len()
    }
}

impl std::fmt::Debug for Tiktoken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tiktoken").finish_non_exhaustive()
    }
}
