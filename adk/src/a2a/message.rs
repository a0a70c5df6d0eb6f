//! A2A messages and their parts: what a user and an agent say to each other.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who sent a [`Message`] (`ROLE_USER`, `ROLE_AGENT`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Role {
    /// The client's side: a person or a calling agent.
    #[serde(rename = "ROLE_USER")]
    User,
    /// The remote agent's side.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
    /// Not set (proto3's zero value; an unknown role reads as this too).
    #[default]
    #[serde(rename = "ROLE_UNSPECIFIED", other)]
    Unspecified,
}

impl Role {
    fn is_unspecified(&self) -> bool {
        *self == Role::Unspecified
    }
}

/// One message of a conversation: a role and a list of [`Part`]s.
///
/// ```
/// use tower_adk::a2a::{Message, Part, Role};
///
/// let message = Message::new("m1", Role::User, vec![Part::text("hello")]);
/// let json = serde_json::to_value(&message).unwrap();
/// assert_eq!(json["role"], "ROLE_USER");
/// assert_eq!(json["parts"][0]["text"], "hello");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Message {
    /// The message's id, chosen by its sender.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message_id: String,
    /// The conversation (context) it belongs to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task it belongs to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Who sent it.
    #[serde(skip_serializing_if = "Role::is_unspecified")]
    pub role: Role,
    /// What it says.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// Extra data for extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// URIs of the extensions it uses.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Tasks it refers to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message with an id, a role and parts; nothing else set.
    pub fn new(message_id: impl Into<String>, role: Role, parts: Vec<Part>) -> Self {
        Self {
            message_id: message_id.into(),
            role,
            parts,
            ..Self::default()
        }
    }

    /// The text of its text parts, joined with no separator.
    pub fn text(&self) -> String {
        self.parts.iter().filter_map(Part::as_text).collect()
    }
}

/// One piece of content: text, JSON data, a file by URL or raw bytes, with an optional
/// media type, file name and metadata.
///
/// On the wire the content is one of `text`, `data`, `url` or `raw` (base64), beside
/// `mediaType`, `filename` and `metadata` (A2A v1.0 has no `kind`).
///
/// ```
/// use tower_adk::a2a::{Part, PartContent};
///
/// let part: Part = serde_json::from_str(r#"{"data": {"decisions": {}}, "mediaType": "application/json"}"#).unwrap();
/// assert!(matches!(part.content, PartContent::Data(_)));
/// assert_eq!(part.media_type.as_deref(), Some("application/json"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Part {
    /// What the part holds.
    #[serde(flatten)]
    pub content: PartContent,
    /// Extra data for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// A file name, for file parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The content's media type (`text/plain`, `image/png`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

/// The content of a [`Part`]: exactly one of these on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum PartContent {
    /// Text.
    Text(String),
    /// Bytes, base64 on the wire.
    Raw(#[serde(with = "base64_bytes")] Vec<u8>),
    /// A file by URL.
    Url(String),
    /// Any JSON value.
    Data(Value),
}

impl Part {
    /// A part with this content and nothing else.
    pub fn new(content: PartContent) -> Self {
        Self {
            content,
            metadata: None,
            filename: None,
            media_type: None,
        }
    }

    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(PartContent::Text(text.into()))
    }

    /// A data part (any JSON value).
    pub fn data(data: Value) -> Self {
        Self::new(PartContent::Data(data))
    }

    /// A file part by URL.
    pub fn url(url: impl Into<String>) -> Self {
        Self::new(PartContent::Url(url.into()))
    }

    /// A part of raw bytes.
    pub fn raw(bytes: impl Into<Vec<u8>>) -> Self {
        Self::new(PartContent::Raw(bytes.into()))
    }

    /// The same part with a media type.
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = Some(media_type.into());
        self
    }

    /// The same part with a file name.
    pub fn with_filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self
    }

    /// Its text, if it is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(text) => Some(text),
            _ => None,
        }
    }

    /// Its data, if it is a data part.
    pub fn as_data(&self) -> Option<&Value> {
        match &self.content {
            PartContent::Data(data) => Some(data),
            _ => None,
        }
    }
}

/// ProtoJSON's `bytes`: standard base64 with padding out; standard or URL-safe, padded or
/// not, in.
mod base64_bytes {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
            .iter()
            .find_map(|engine| engine.decode(text.as_bytes()).ok())
            .ok_or_else(|| D::Error::custom("raw: not base64"))
    }
}
