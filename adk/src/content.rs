//! What a message says: [`Content`], text or [`Part`]s in order (text, images, files,
//! and in the model's turns its [`Reasoning`]).
//!
//! Text-only content is the common case and stays a string: `Message::user("hi")`,
//! `message.content()`, and a string in the JSON form. A message of several parts keeps
//! them in order; [`Content::text`] is its text (the first text part), [`Content::all_text`]
//! every text part. A provider sends each part in its own format, and what it cannot
//! send it refuses with an error that names the part: nothing is dropped silently.
//!
//! A model's reasoning is a [`Reasoning`] part of its turn, with the provider's opaque
//! data (a signature, encrypted content, a redacted block) kept byte for byte: it goes
//! back to the same provider, which needs it to go on (Claude's `thinking` blocks with
//! their signatures, Gemini's thought signatures, the Responses API's encrypted
//! reasoning), and never to another one.
//!
//! # Example
//!
//! ```
//! use tower_adk::Message;
//! use tower_adk::content::{Content, Part, Source};
//!
//! let photo = Part::image(Source::base64("image/png", "iVBORw0KGgo="));
//! let question = Message::user(Content::from(vec![Part::text("What is in it?"), photo]));
//! assert_eq!(question.content(), "What is in it?");
//! assert_eq!(question.parts().len(), 2);
//!
//! let json = serde_json::to_value(&question)?;
//! assert_eq!(json["content"][1]["type"], "image");
//! assert_eq!(json["content"][1]["media_type"], "image/png");
//! // Text only stays a string.
//! assert_eq!(serde_json::to_value(Message::user("hi"))?["content"], "hi");
//! # Ok::<_, serde_json::Error>(())
//! ```

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Serialize};

/// What a message says: text only (the common case, written as a JSON string), or parts
/// in order (written as a JSON array).
///
/// It reads as its [text](Content::text) where a `&str` is wanted (`content.len()`,
/// `content.contains(..)`, `format!("{content}")`).
///
/// The parts are boxed so that `Content` takes no more room than a `String`: every
/// message of every history holds one, and most are text only.
#[derive(PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// Text only.
    Text(String),
    /// Parts, in order (build it with `Content::from(vec![...])`).
    Parts(Box<Vec<Part>>),
}

impl Content {
    /// The text: all of it for text-only content, else the first text part (empty when
    /// there is none). See [`Content::all_text`] for every text part.
    #[inline]
    pub fn text(&self) -> &str {
        match self {
            Content::Text(text) => text,
            Content::Parts(parts) => parts.iter().find_map(Part::as_text).unwrap_or(""),
        }
    }

    /// Every text part, joined by blank lines (the text itself, for text-only content).
    pub fn all_text(&self) -> Cow<'_, str> {
        match self {
            Content::Text(text) => Cow::Borrowed(text),
            Content::Parts(parts) => {
                let mut texts = parts.iter().filter_map(Part::as_text);
                match (texts.next(), texts.next()) {
                    (None, _) => Cow::Borrowed(""),
                    (Some(only), None) => Cow::Borrowed(only),
                    (Some(first), Some(second)) => {
                        let rest = [first, second].into_iter().chain(texts);
                        Cow::Owned(rest.collect::<Vec<_>>().join("\n\n"))
                    }
                }
            }
        }
    }

    /// What a reader that sees only text is shown: the text parts, and a placeholder for
    /// each image and file (see [`Part::placeholder`]), joined by blank lines; the
    /// model's reasoning is left out. Text-only content is itself.
    ///
    /// ```
    /// use tower_adk::content::{Content, Part, Source};
    ///
    /// let mut content = Content::from("Look:");
    /// content.push(Part::image(Source::url("https://example.com/cat.png")));
    /// assert_eq!(content.readable(), "Look:\n\n[an image: https://example.com/cat.png]");
    /// ```
    pub fn readable(&self) -> Cow<'_, str> {
        let Content::Parts(parts) = self else {
            return Cow::Borrowed(self.text());
        };
        if parts
            .iter()
            .all(|p| matches!(p, Part::Text { .. } | Part::Reasoning(_)))
        {
            return self.all_text();
        }
        let shown = parts.iter().filter_map(|part| match part {
            Part::Text { text } => Some(Cow::Borrowed(text.as_str())),
            Part::Reasoning(_) => None,
            other => other.placeholder().map(Cow::Owned),
        });
        Cow::Owned(shown.collect::<Vec<_>>().join("\n\n"))
    }

    /// Whether the content is text only (whatever its form): no image, file or
    /// reasoning.
    #[inline]
    pub fn is_text(&self) -> bool {
        match self {
            Content::Text(_) => true,
            Content::Parts(parts) => parts.iter().all(|p| p.as_text().is_some()),
        }
    }

    /// The parts, in order; text-only content is one text part (none when empty).
    pub fn parts(&self) -> Cow<'_, [Part]> {
        match self {
            Content::Text(text) if text.is_empty() => Cow::Borrowed(&[]),
            Content::Text(text) => Cow::Owned(vec![Part::text(text.as_str())]),
            Content::Parts(parts) => Cow::Borrowed(parts.as_slice()),
        }
    }

    /// The reasoning parts, in order.
    pub fn reasoning(&self) -> impl Iterator<Item = &Reasoning> {
        let parts = match self {
            Content::Text(_) => &[][..],
            Content::Parts(parts) => parts.as_slice(),
        };
        parts.iter().filter_map(|p| match p {
            Part::Reasoning(reasoning) => Some(reasoning),
            _ => None,
        })
    }

    /// Adds a part at the end (text-only content becomes parts).
    pub fn push(&mut self, part: Part) {
        match self {
            Content::Parts(parts) => parts.push(part),
            Content::Text(text) => {
                let mut parts = Vec::with_capacity(2);
                if !text.is_empty() {
                    parts.push(Part::Text {
                        text: std::mem::take(text),
                    });
                }
                parts.push(part);
                *self = Content::Parts(Box::new(parts));
            }
        }
    }

    /// Keeps only the parts for which `keep` returns `true` (text-only content is one
    /// text part).
    pub fn retain(&mut self, mut keep: impl FnMut(&Part) -> bool) {
        match self {
            Content::Parts(parts) => parts.retain(|p| keep(p)),
            Content::Text(text) => {
                if !text.is_empty() && !keep(&Part::text(text.as_str())) {
                    text.clear();
                }
            }
        }
    }
}

// By hand, to be inlined across crates: every history's copy clones one per message.
impl Clone for Content {
    #[inline]
    fn clone(&self) -> Self {
        match self {
            Content::Text(text) => Content::Text(text.clone()),
            Content::Parts(parts) => Content::Parts(parts.clone()),
        }
    }
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

impl Deref for Content {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.text()
    }
}

impl AsRef<str> for Content {
    #[inline]
    fn as_ref(&self) -> &str {
        self.text()
    }
}

impl fmt::Debug for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Content::Text(text) => fmt::Debug::fmt(text, f),
            Content::Parts(parts) => f.debug_list().entries(parts.iter()).finish(),
        }
    }
}

impl fmt::Display for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl From<String> for Content {
    #[inline]
    fn from(text: String) -> Self {
        Content::Text(text)
    }
}

impl From<&str> for Content {
    #[inline]
    fn from(text: &str) -> Self {
        Content::Text(text.to_owned())
    }
}

impl From<&String> for Content {
    #[inline]
    fn from(text: &String) -> Self {
        Content::Text(text.clone())
    }
}

impl From<Cow<'_, str>> for Content {
    #[inline]
    fn from(text: Cow<'_, str>) -> Self {
        Content::Text(text.into_owned())
    }
}

impl From<Vec<Part>> for Content {
    fn from(parts: Vec<Part>) -> Self {
        Content::Parts(Box::new(parts))
    }
}

impl PartialEq<str> for Content {
    fn eq(&self, other: &str) -> bool {
        matches!(self, Content::Text(text) if text == other)
    }
}

impl PartialEq<&str> for Content {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Part {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image (a user's, a tool's output, or a model's).
    Image(Source),
    /// A file, e.g. a PDF document.
    File {
        /// Where the file is.
        #[serde(flatten)]
        source: Source,
        /// Its name, when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// The model's reasoning, in its own turn.
    Reasoning(Reasoning),
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text { text: text.into() }
    }

    /// An image part.
    pub fn image(source: Source) -> Self {
        Part::Image(source)
    }

    /// A file part.
    pub fn file(source: Source, name: Option<String>) -> Self {
        Part::File { source, name }
    }

    /// The text of a text part; `None` for the others.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Part::Text { text } => Some(text),
            _ => None,
        }
    }

    /// What a reader that cannot show this part is told instead, e.g. `[an image:
    /// image/png]`; `None` for text.
    pub fn placeholder(&self) -> Option<String> {
        match self {
            Part::Text { .. } => None,
            Part::Image(source) => Some(format!("[an image: {}]", source.describe())),
            Part::File { source, name } => Some(match name {
                Some(name) => format!("[a file: {name}, {}]", source.describe()),
                None => format!("[a file: {}]", source.describe()),
            }),
            Part::Reasoning(_) => Some("[the model's reasoning]".to_owned()),
        }
    }
}

/// Where an image or a file is: at a URL, or inline, as base64 with its media type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Source {
    /// Inline data.
    Base64 {
        /// Its media type, e.g. `image/png`, `application/pdf`.
        media_type: String,
        /// The bytes, base64-encoded (standard alphabet, with padding).
        data: String,
    },
    /// At a URL (`https:`, or a `data:` URL).
    Url {
        /// The URL.
        url: String,
        /// Its media type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
    },
}

impl Source {
    /// Inline data, already base64-encoded.
    pub fn base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Source::Base64 {
            media_type: media_type.into(),
            data: data.into(),
        }
    }

    /// Inline data from its bytes (encoded here, standard base64 with padding).
    ///
    /// ```
    /// use tower_adk::Message;
    /// use tower_adk::content::{Part, Source};
    ///
    /// let png: &[u8] = &[0x89, b'P', b'N', b'G'];
    /// let source = Source::from_bytes("image/png", png);
    /// assert_eq!(source, Source::base64("image/png", "iVBORw=="));
    /// let message = Message::user(vec![Part::text("What is in it?"), Part::image(source)]);
    /// assert_eq!(message.content(), "What is in it?");
    /// ```
    pub fn from_bytes(media_type: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        use base64::Engine as _;
        Source::Base64 {
            media_type: media_type.into(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// At a URL.
    pub fn url(url: impl Into<String>) -> Self {
        Source::Url {
            url: url.into(),
            media_type: None,
        }
    }

    /// Its media type, when known.
    pub fn media_type(&self) -> Option<&str> {
        match self {
            Source::Base64 { media_type, .. } => Some(media_type),
            Source::Url { media_type, .. } => media_type.as_deref(),
        }
    }

    /// A short description for a placeholder: the media type, or the URL.
    fn describe(&self) -> String {
        match self {
            Source::Base64 { media_type, data } => {
                format!("{media_type}, {} base64 bytes", data.len())
            }
            Source::Url { url, .. } => url.clone(),
        }
    }
}

/// A model's reasoning in its turn: readable text (possibly empty), and the provider's
/// opaque data, which goes back to that provider only, byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reasoning {
    /// The provider that produced it (`anthropic`, `gemini`, `openai-responses`, ...):
    /// only a model of that provider is sent it back.
    pub provider: String,
    /// What the model thought, readable; empty when it is redacted or encrypted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The provider's opaque data, kept as it came: a signature, encrypted content, a
    /// redacted block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// What `data` is, in the provider's words (`signature`, `redacted_thinking`,
    /// `encrypted_content`, `thought_signature`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The provider's id for it (the Responses API's reasoning item), or the id of the
    /// tool call it belongs to (a Gemini thought signature on a function call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Reasoning {
    /// Reasoning of `provider` with this readable text.
    pub fn new(provider: impl Into<String>, text: impl Into<String>) -> Self {
        Reasoning {
            provider: provider.into(),
            text: text.into(),
            data: None,
            kind: None,
            id: None,
        }
    }

    /// With the provider's opaque data, and what it is.
    #[must_use]
    pub fn with_data(mut self, kind: impl Into<String>, data: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self.data = Some(data.into());
        self
    }

    /// With the provider's id for it, or the tool call it belongs to.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Every message of every history holds a `Content`: parts must not make the
    /// common, text-only message bigger (W1 copies histories; a bigger message crossed
    /// the allocator's small-size cache and cost 7% of a run).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn content_takes_no_more_room_than_a_string_nor_a_message_more_than_before_parts() {
        assert_eq!(
            std::mem::size_of::<Content>(),
            std::mem::size_of::<String>()
        );
        assert_eq!(std::mem::size_of::<crate::message::Message>(), 80);
    }

    #[test]
    fn text_only_content_is_a_json_string_and_parts_an_array() {
        let text = Content::from("hi");
        assert_eq!(serde_json::to_string(&text).unwrap(), r#""hi""#);
        let parts = Content::from(vec![
            Part::Reasoning(Reasoning::new("anthropic", "hmm").with_data("signature", "c2ln")),
            Part::text("hi"),
            Part::file(Source::url("https://x/a.pdf"), Some("a.pdf".into())),
        ]);
        let json = serde_json::to_string(&parts).unwrap();
        assert_eq!(
            json,
            r#"[{"type":"reasoning","provider":"anthropic","text":"hmm","data":"c2ln","kind":"signature"},{"type":"text","text":"hi"},{"type":"file","url":"https://x/a.pdf","name":"a.pdf"}]"#
        );
        let back: Content = serde_json::from_str(&json).unwrap();
        assert_eq!(back, parts);
        assert_eq!(back.text(), "hi");
        assert!(!back.is_text());
        assert_eq!(back.reasoning().count(), 1);
    }

    #[test]
    fn pushing_a_part_keeps_the_text_first_and_all_text_joins_the_texts() {
        let mut content = Content::from("look:");
        content.push(Part::image(Source::base64("image/png", "AAAA")));
        content.push(Part::text("and this"));
        assert_eq!(content.text(), "look:");
        assert_eq!(content.all_text(), "look:\n\nand this");
        assert_eq!(content.parts().len(), 3);
        content.retain(|p| p.as_text().is_some());
        assert!(content.is_text());
    }
}
