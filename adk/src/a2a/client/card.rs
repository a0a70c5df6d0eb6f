//! The agent card of a remote agent: where it is read, how, and the JSON-RPC interface
//! of A2A 1.0 picked from it.

use serde_json::Value;

use super::endpoint::excerpt;
use super::error::A2aError;
use crate::a2a::{AGENT_CARD_PATH, AgentCard, JSONRPC_BINDING, PROTOCOL_VERSION};

/// The card's URL: `url` itself if it names a card, else the well-known path under it.
pub(crate) fn card_url(url: &str) -> Result<reqwest::Url, A2aError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| A2aError::Config {
        reason: format!("`{url}` is not a URL: {e}"),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(A2aError::Config {
            reason: format!("`{url}` is not an http or https URL"),
        });
    }
    if parsed.path().ends_with(".json") {
        return Ok(parsed);
    }
    let base = url.trim_end_matches('/');
    reqwest::Url::parse(&format!("{base}{AGENT_CARD_PATH}")).map_err(|e| A2aError::Config {
        reason: format!("`{url}` is not a URL: {e}"),
    })
}

/// Reads the card at `url`.
pub(crate) async fn read_card(
    client: &reqwest::Client,
    url: &reqwest::Url,
) -> Result<AgentCard, A2aError> {
    let card_error = |reason: String| A2aError::Card {
        url: url.to_string(),
        reason,
    };
    let response = client.get(url.clone()).send().await.map_err(|e| {
        if e.is_timeout() {
            card_error(format!("no answer: {e}"))
        } else {
            A2aError::Connect {
                url: url.to_string(),
                source: e.into(),
            }
        }
    })?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| card_error(format!("the body could not be read: {e}")))?;
    if !status.is_success() {
        let text = excerpt(&String::from_utf8_lossy(&body));
        return Err(card_error(format!(
            "HTTP {status} (is this an A2A agent?): {text}"
        )));
    }
    let value: Value = serde_json::from_slice(&body).map_err(|e| {
        let text = excerpt(&String::from_utf8_lossy(&body));
        card_error(format!("not JSON ({e}): {text}"))
    })?;
    if value.get("supportedInterfaces").is_none() && value.get("url").is_some() {
        let version = value
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("0.x");
        return Err(card_error(format!(
            "a card of A2A {version} (it has `url`, not `supportedInterfaces`); this client speaks A2A {PROTOCOL_VERSION}"
        )));
    }
    serde_json::from_value(value).map_err(|e| card_error(format!("not an agent card: {e}")))
}

/// The URL of the card's JSON-RPC interface of A2A 1.x, resolved against the card's URL.
pub(crate) fn jsonrpc_interface(
    card: &AgentCard,
    card_url: &reqwest::Url,
) -> Result<reqwest::Url, A2aError> {
    let card_error = |reason: String| A2aError::Card {
        url: card_url.to_string(),
        reason,
    };
    let jsonrpc = card
        .supported_interfaces
        .iter()
        .filter(|i| i.protocol_binding.eq_ignore_ascii_case(JSONRPC_BINDING));
    let speaks_1 =
        |version: &str| version.is_empty() || version == "1" || version.starts_with("1.");
    let interface = jsonrpc.clone().find(|i| speaks_1(&i.protocol_version));
    let Some(interface) = interface else {
        let offered: Vec<String> = card
            .supported_interfaces
            .iter()
            .map(|i| format!("{} {}", i.protocol_binding, i.protocol_version))
            .collect();
        return Err(card_error(format!(
            "no JSON-RPC interface of A2A {PROTOCOL_VERSION} (offered: {})",
            if offered.is_empty() {
                "none".to_owned()
            } else {
                offered.join(", ")
            }
        )));
    };
    let url = card_url.join(&interface.url).map_err(|e| {
        card_error(format!(
            "its JSON-RPC URL `{}` is invalid: {e}",
            interface.url
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(card_error(format!(
            "its JSON-RPC URL `{url}` is not http or https"
        )));
    }
    Ok(url)
}

/// A card's name made into a tool name: ASCII letters, digits, `_` and `-`, at most 64.
pub(crate) fn tool_name(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(crate::tool::MAX_NAME_LEN)
        .collect();
    let name = name.trim_matches('_');
    if name.is_empty() {
        "remote_agent".to_owned()
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_names_become_tool_names() {
        assert_eq!(tool_name("ledger"), "ledger");
        assert_eq!(tool_name("Billing Agent (EU)"), "Billing_Agent__EU");
        assert_eq!(tool_name("日本"), "remote_agent");
        assert_eq!(tool_name(&"x".repeat(100)).len(), 64);
    }

    #[test]
    fn the_card_is_read_under_the_base_url_unless_the_url_names_it() {
        let url = |u: &str| card_url(u).map(|u| u.to_string());
        assert_eq!(
            url("http://127.0.0.1:9/").ok().as_deref(),
            Some("http://127.0.0.1:9/.well-known/agent-card.json")
        );
        assert_eq!(
            url("http://h/agents/billing").ok().as_deref(),
            Some("http://h/agents/billing/.well-known/agent-card.json")
        );
        assert_eq!(
            url("http://h/cards/billing.json").ok().as_deref(),
            Some("http://h/cards/billing.json")
        );
        assert!(matches!(card_url("ftp://h/"), Err(A2aError::Config { .. })));
        assert!(matches!(
            card_url("not a url"),
            Err(A2aError::Config { .. })
        ));
    }
}
