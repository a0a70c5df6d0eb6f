//! The agent card: what an agent is, its skills (its tools as an anonymous caller's runs
//! would see them), where its JSON-RPC endpoint is, and how to authenticate.

use axum::http::HeaderMap;
use axum::http::header::HOST;

use super::A2a;
use crate::a2a::{
    AgentCapabilities, AgentCard, AgentInterface, AgentSkill, SecurityRequirement, SecurityScheme,
};
use crate::auth::Identity;
use crate::server::ServedAgent;
use crate::server::state::AppState;

/// The name of the security scheme of a server whose `Identify` takes bearer tokens.
const BEARER: &str = "bearer";

/// The card of the agent `name`, whose JSON-RPC endpoint is at `path` below the base URL.
pub(super) async fn card(
    state: &AppState,
    config: &A2a,
    name: &str,
    served: &ServedAgent,
    path: &str,
    headers: &HeaderMap,
) -> AgentCard {
    let description = if served.description.is_empty() {
        format!("The agent `{name}`")
    } else {
        served.description.clone()
    };
    let mut card = AgentCard::new(name, description, config.version.clone());
    let url = format!("{}{path}", base_url(config, headers));
    card.supported_interfaces.push(AgentInterface::jsonrpc(url));
    card.capabilities = capabilities();
    card.skills = skills(served).await;
    let bearer = state.identify.scheme();
    if bearer.is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer")) {
        let described = "A bearer token in `Authorization: Bearer TOKEN`";
        let scheme = SecurityScheme::bearer(described);
        card.security_schemes.insert(BEARER.into(), scheme);
        card.security_requirements
            .push(SecurityRequirement::scheme(BEARER));
    }
    card
}

fn capabilities() -> AgentCapabilities {
    AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(false),
        ..AgentCapabilities::default()
    }
}

/// The tools an anonymous caller's runs would give the model, as skills (none when the
/// agent's `before_agent` hooks fail or interrupt for such a caller).
async fn skills(served: &ServedAgent) -> Vec<AgentSkill> {
    let tools = served
        .tools_for(&Identity::anonymous())
        .await
        .unwrap_or_default();
    let skill = |tool: &std::sync::Arc<crate::tool::ToolInfo>| {
        let mut skill = AgentSkill::new(&tool.name, &tool.name, &tool.description);
        skill.tags = vec!["tool".into()];
        skill
    };
    tools.iter().map(skill).collect()
}

/// The configured base URL, else `http://` (or `https://` when `X-Forwarded-Proto` says
/// so) and the request's `Host`.
fn base_url(config: &A2a, headers: &HeaderMap) -> String {
    if let Some(base) = &config.base_url {
        return base.trim_end_matches('/').to_owned();
    }
    let header = |name| {
        headers
            .get(name)
            .and_then(|v: &axum::http::HeaderValue| v.to_str().ok())
    };
    let host = header(HOST).unwrap_or("localhost");
    let forwarded = header(axum::http::HeaderName::from_static("x-forwarded-proto"));
    let scheme = match forwarded {
        Some(proto) if proto.trim().eq_ignore_ascii_case("https") => "https",
        _ => "http",
    };
    format!("{scheme}://{host}")
}
