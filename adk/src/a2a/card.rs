//! The agent card: what an A2A agent is, what it can do, where and how to call it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where an agent serves its card: `/.well-known/agent-card.json`.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The A2A protocol version these types speak: `"1.0"`.
pub const PROTOCOL_VERSION: &str = "1.0";

/// The protocol binding of JSON-RPC over HTTP, in [`AgentInterface::protocol_binding`].
pub const JSONRPC_BINDING: &str = "JSONRPC";

/// An agent's self-description, served at [`AGENT_CARD_PATH`].
///
/// ```
/// use tower_adk::a2a::{AgentCard, AgentInterface};
///
/// let mut card = AgentCard::new("support", "Answers questions about orders", "1.0.0");
/// card.supported_interfaces.push(AgentInterface::jsonrpc("http://127.0.0.1:8080/a2a"));
/// let json = serde_json::to_value(&card).unwrap();
/// assert_eq!(json["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct AgentCard {
    /// The agent's name.
    pub name: String,
    /// What it does, for people and calling agents.
    pub description: String,
    /// Where and how to call it, the preferred first.
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who runs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version.
    pub version: String,
    /// Its documentation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// What the server supports.
    pub capabilities: AgentCapabilities,
    /// The authentication schemes it accepts, by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Which schemes a caller must satisfy (any one of the list).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types it reads.
    pub default_input_modes: Vec<String>,
    /// Media types it writes.
    pub default_output_modes: Vec<String>,
    /// What it can do.
    pub skills: Vec<AgentSkill>,
    /// JWS signatures of the card, kept as JSON.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<Value>,
    /// An icon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
}

impl AgentCard {
    /// A card with a name, a description and a version; text in and out, no interfaces,
    /// skills or schemes yet.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            version: version.into(),
            default_input_modes: vec!["text/plain".into()],
            default_output_modes: vec!["text/plain".into()],
            ..Self::default()
        }
    }

    /// The URL of its first JSON-RPC interface, if it has one.
    pub fn jsonrpc_url(&self) -> Option<&str> {
        self.supported_interfaces
            .iter()
            .find(|interface| {
                interface
                    .protocol_binding
                    .eq_ignore_ascii_case(JSONRPC_BINDING)
            })
            .map(|interface| interface.url.as_str())
    }
}

/// One way to call an agent: a URL, a protocol binding and version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct AgentInterface {
    /// The endpoint.
    pub url: String,
    /// `JSONRPC`, `GRPC` or `HTTP+JSON`.
    pub protocol_binding: String,
    /// The tenant to name in requests, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The A2A version spoken there.
    pub protocol_version: String,
}

impl AgentInterface {
    /// JSON-RPC over HTTP at this URL, A2A [`PROTOCOL_VERSION`].
    pub fn jsonrpc(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            protocol_binding: JSONRPC_BINDING.into(),
            tenant: None,
            protocol_version: PROTOCOL_VERSION.into(),
        }
    }
}

/// Who runs an agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct AgentProvider {
    /// Their website.
    pub url: String,
    /// Their name.
    pub organization: String,
}

/// What an A2A server supports beyond the basic methods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct AgentCapabilities {
    /// `SendStreamingMessage` and `SubscribeToTask`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notifications to a client's webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Protocol extensions, kept as JSON.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<Value>,
    /// A richer card for authenticated callers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extended_agent_card: Option<bool>,
}

/// One thing an agent can do.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct AgentSkill {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Keywords.
    pub tags: Vec<String>,
    /// Example requests.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Media types it reads, when not the card's defaults.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    /// Media types it writes, when not the card's defaults.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    /// Schemes a caller must satisfy for this skill.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub security_requirements: Vec<SecurityRequirement>,
}

impl AgentSkill {
    /// A skill with an id, a name and a description, no tags.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            ..Self::default()
        }
    }
}

/// The schemes a caller must satisfy together: scheme name → scopes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SecurityRequirement {
    /// Scheme name (a key of [`AgentCard::security_schemes`]) → the scopes it needs.
    pub schemes: BTreeMap<String, StringList>,
}

impl SecurityRequirement {
    /// A requirement of one scheme, with no scopes.
    pub fn scheme(name: impl Into<String>) -> Self {
        Self {
            schemes: BTreeMap::from([(name.into(), StringList::default())]),
        }
    }
}

/// A list of strings (proto's wrapper, `{"list": [...]}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct StringList {
    /// The strings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<String>,
}

/// An authentication scheme: exactly one of these on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SecurityScheme {
    /// An API key in a header, query parameter or cookie.
    ApiKeySecurityScheme(ApiKeySecurityScheme),
    /// HTTP authentication (`Bearer`, `Basic`).
    HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    /// OAuth 2.0, its flows kept as JSON.
    #[serde(rename = "oauth2SecurityScheme")]
    OAuth2SecurityScheme(Map<String, Value>),
    /// OpenID Connect.
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    /// Mutual TLS.
    MtlsSecurityScheme(MutualTlsSecurityScheme),
}

impl SecurityScheme {
    /// HTTP bearer tokens.
    pub fn bearer(description: impl Into<String>) -> Self {
        Self::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
            description: Some(description.into()),
            scheme: "Bearer".into(),
            bearer_format: None,
        })
    }
}

/// An API key in a header, query parameter or cookie.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct ApiKeySecurityScheme {
    /// For people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `header`, `query` or `cookie`.
    pub location: String,
    /// The header, parameter or cookie's name.
    pub name: String,
}

/// HTTP authentication.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct HttpAuthSecurityScheme {
    /// For people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `Bearer`, `Basic`, ...
    pub scheme: String,
    /// A hint of the token's format (`JWT`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_format: Option<String>,
}

/// OpenID Connect.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct OpenIdConnectSecurityScheme {
    /// For people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The provider's discovery URL.
    pub open_id_connect_url: String,
}

/// Mutual TLS.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct MutualTlsSecurityScheme {
    /// For people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}
