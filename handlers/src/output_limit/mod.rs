//! Cap the size of a tool's output, and mark the cut so the model knows.

mod stream;

use adk::{ToolOutput, ToolStream};

use self::stream::Capped;

/// A handler that caps the size of each tool call's output, and marks the cut so the
/// model knows.
///
/// It counts in UTF-8 bytes ([`max_output_bytes`]) or in characters, i.e. Unicode scalar
/// values ([`max_output_chars`]), and never cuts a character in half: a byte cap keeps
/// the longest whole-character prefix that fits.
///
/// - An **invoked** call's output is cut at the cap and ends with a marker that says how
///   much was left out: `…[truncated: 1234 more bytes]`.
/// - A **streamed** call's chunks pass until the cap; the chunk that crosses it is cut,
///   the tool's stream is dropped (which cancels the tool: it produces no further
///   chunks), and a last chunk carries the marker: `…[truncated: the output is longer
///   than 4096 bytes]`. A stream that ends exactly at the cap gets no marker; to know
///   that, the limit reads one chunk past the cap.
///
/// The cap bounds the tool's text; the marker comes on top of it.
///
/// # Order
///
/// Register it before (outside) the wrappers whose output it bounds. In a
/// [`ToolGuard`](crate::ToolGuard), the limit applies after the post-transforms and before
/// the [envelope](crate::UntrustedEnvelope), so the envelope is never cut.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest};
/// use tower_adk::testing::{text_tool, ScriptedModel, Turn};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([Turn::call("c1", "page", json!({})), Turn::text("ok")]);
/// let agent = Agent::builder(model).tool(text_tool("page", "ééééé")).build()?;
///
/// // 5 bytes hold two 2-byte characters; the third would be cut in half, so it goes.
/// let limit = tower_adk::handlers::max_output_bytes(5);
/// let result = agent.run(AgentRequest::user("read").with_handler(limit)).await?;
///
/// assert_eq!(result.tool_records[0].content, "éé…[truncated: 6 more bytes]");
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimit {
    max: usize,
    unit: Unit,
}

/// A handler that caps each tool call's output at `max` UTF-8 bytes, never cutting a
/// character in half. See [`OutputLimit`].
///
/// # Example
///
/// ```
/// let limit = tower_adk::handlers::max_output_bytes(16 * 1024);
/// # let _ = limit;
/// ```
pub fn max_output_bytes(max: usize) -> OutputLimit {
    OutputLimit::bytes(max)
}

/// A handler that caps each tool call's output at `max` characters (Unicode scalar
/// values). See [`OutputLimit`].
///
/// # Example
///
/// ```
/// let limit = tower_adk::handlers::max_output_chars(4000);
/// # let _ = limit;
/// ```
pub fn max_output_chars(max: usize) -> OutputLimit {
    OutputLimit::chars(max)
}

impl OutputLimit {
    /// A cap of `max` UTF-8 bytes, the same as [`max_output_bytes`].
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::OutputLimit;
    ///
    /// assert_eq!(OutputLimit::bytes(64), tower_adk::handlers::max_output_bytes(64));
    /// assert_ne!(OutputLimit::bytes(64), OutputLimit::chars(64));
    /// ```
    pub fn bytes(max: usize) -> Self {
        OutputLimit {
            max,
            unit: Unit::Bytes,
        }
    }

    /// A cap of `max` characters (Unicode scalar values), the same as
    /// [`max_output_chars`].
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::handlers::OutputLimit;
    ///
    /// assert_eq!(OutputLimit::chars(64), tower_adk::handlers::max_output_chars(64));
    /// ```
    pub fn chars(max: usize) -> Self {
        OutputLimit {
            max,
            unit: Unit::Chars,
        }
    }

    /// Cuts a whole output at the cap, marking how much was left out.
    pub(crate) fn output(&self, mut output: ToolOutput) -> ToolOutput {
        if let Fit::Cut(at) = self.unit.fit(&output.content, self.max) {
            let more = output
                .content
                .get(at..)
                .map_or(0, |rest| self.unit.count(rest));
            output.content.truncate(at);
            output
                .content
                .push_str(&format!("…[truncated: {more} more {}]", self.unit));
        }
        output
    }

    /// Passes a stream's chunks until the cap, then drops the stream and marks the cut.
    pub(crate) fn stream(&self, chunks: ToolStream) -> ToolStream {
        chunks.wrap(|inner| Capped::new(inner, *self))
    }

    fn stream_marker(&self) -> String {
        format!(
            "…[truncated: the output is longer than {} {}]",
            self.max, self.unit
        )
    }
}

crate::output_stage::output_stage_handler!(OutputLimit, |_this| "output_limit");

/// What an [`OutputLimit`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Bytes,
    Chars,
}

/// How a text fits in a budget.
enum Fit {
    /// All of it fits, using this many units.
    Whole(usize),
    /// Only the part before this byte index (a character boundary) fits.
    Cut(usize),
}

impl Unit {
    fn count(self, text: &str) -> usize {
        match self {
            Unit::Bytes => text.len(),
            Unit::Chars => text.chars().count(),
        }
    }

    fn fit(self, text: &str, budget: usize) -> Fit {
        match self {
            Unit::Bytes if text.len() <= budget => Fit::Whole(text.len()),
            Unit::Bytes => {
                // The last character boundary at or before the budget (0 always is one).
                let at = (0..=budget).rev().find(|&i| text.is_char_boundary(i));
                Fit::Cut(at.unwrap_or(0))
            }
            Unit::Chars => match text.char_indices().nth(budget) {
                Some((at, _)) => Fit::Cut(at),
                None => Fit::Whole(text.chars().count()),
            },
        }
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unit::Bytes => "bytes",
            Unit::Chars => "chars",
        })
    }
}
