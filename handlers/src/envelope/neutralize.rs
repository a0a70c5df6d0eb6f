//! Neutralising the envelope's closing tag inside tool output, also across chunks.

use std::borrow::Cow;

/// The closing tag's start, matched without regard to ASCII case.
const CLOSE: &[u8] = b"</tool_output";
/// What replaces the `</` of a match: the tag no longer closes anything.
const ESCAPED_START: &str = "<\\/";

/// Rewrites every `</tool_output` (any ASCII case) as `<\/tool_output`.
pub(super) fn neutralize(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'<') {
        let start = at + offset;
        if bytes[start..].len() >= CLOSE.len()
            && bytes[start..start + CLOSE.len()].eq_ignore_ascii_case(CLOSE)
        {
            // `start` and `start + 2` are boundaries: `<` and `/` are ASCII.
            out.push_str(&text[copied..start]);
            out.push_str(ESCAPED_START);
            copied = start + 2;
        }
        at = start + 1;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Neutralises a text that arrives in chunks: a tag split across chunks is still found.
#[derive(Debug, Default)]
pub(super) struct Neutralizer {
    /// The end of the text so far that could be the start of a tag, held back.
    held: String,
}

impl Neutralizer {
    /// The neutralised text that is safe to pass on after `chunk` (possibly empty).
    pub(super) fn push(&mut self, chunk: &str) -> String {
        self.held.push_str(chunk);
        let keep = partial_tag_len(&self.held);
        let rest = self.held.split_off(self.held.len() - keep);
        let ready = std::mem::replace(&mut self.held, rest);
        neutralize(&ready).into_owned()
    }

    /// What was held back at the end: too short to be a whole tag, so passed unchanged.
    pub(super) fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

/// The length of the longest end of `text` that is a proper start of the tag.
fn partial_tag_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    (1..CLOSE.len().min(bytes.len() + 1))
        .rev()
        .find(|&len| bytes[bytes.len() - len..].eq_ignore_ascii_case(&CLOSE[..len]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_tag_is_neutralised_in_any_case_and_other_text_is_kept() {
        assert_eq!(neutralize("a</tool_output>b"), "a<\\/tool_output>b");
        assert_eq!(neutralize("</TOOL_Output >"), "<\\/TOOL_Output >");
        assert_eq!(
            neutralize("<b>é</b> <tool_output>"),
            "<b>é</b> <tool_output>"
        );
        assert!(matches!(neutralize("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn a_tag_split_across_chunks_is_neutralised() {
        for split in 0..=15 {
            let text = "x</tool_output>y";
            let (a, b) = text.split_at(split.min(text.len()));
            let mut n = Neutralizer::default();
            let out = n.push(a) + &n.push(b) + &n.finish();
            assert_eq!(out, "x<\\/tool_output>y", "split at {split}");
        }
    }

    #[test]
    fn held_back_text_that_is_not_a_tag_is_passed_at_the_end() {
        let mut n = Neutralizer::default();
        assert_eq!(n.push("é</tool"), "é");
        assert_eq!(n.finish(), "</tool");
    }
}
