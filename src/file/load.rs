//! Loading: the model, the tools (connecting to the MCP servers), the handlers and the
//! checkpoint store, put together into a [`LoadedAgent`].

use adk::testing::ScriptedModel;
use adk::{Agent, AgentBuilder, BoxError, Tool};

use super::agent::{LoadedAgent, Parts};
use super::agent_file::AgentFile;
use super::error::{FileErrors, LoadError, Problem};
use super::registry::Registry;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
use super::spec::Provider;
use super::spec::{ModelSpec, Spec, StoreSpec};
use super::{check, handlers};

impl AgentFile {
    /// Puts the agent together: makes the model, takes the registered tools, connects
    /// to the MCP servers (concurrently) and checks their tool lists, connects to the
    /// remote A2A agents (concurrently, each a tool), makes the handlers, and opens the
    /// checkpoint store.
    ///
    /// # Errors
    ///
    /// [`LoadError::File`] with every problem of the names the file uses (unknown tools,
    /// handlers, models; a registered handler refusing its settings; a tool list naming
    /// a tool its MCP server does not have); [`LoadError::Mcp`] when a server cannot be
    /// reached; [`LoadError::RemoteAgent`] when a remote agent cannot be reached or has
    /// no usable card; [`LoadError::Store`] when the store cannot be opened;
    /// [`LoadError::Model`] when the model cannot be configured.
    pub async fn load(&self, registry: &Registry) -> Result<LoadedAgent, LoadError> {
        let spec = &self.spec;
        let mut problems = Vec::new();
        check::registry_names(spec, registry, &mut problems);
        self.fail_on(&mut problems)?;

        let mut tools: Vec<Tool> = spec
            .tools
            .iter()
            .filter_map(|t| registry.tools.get(&t.value).cloned())
            .collect();
        tools.extend(mcp_tools(spec, &mut problems).await?);
        tools.extend(remote_tools(spec).await?);
        let mut names: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
        names.extend(check::handler_tools(spec));
        check::tool_references(spec, &names, &mut problems);
        let handlers = handlers::all(spec, registry, &mut problems);
        self.fail_on(&mut problems)?;

        let (builder, scripted) = model(spec, registry)?;
        let builder = settings(spec, builder.tools(tools.clone())).await?;
        Ok(LoadedAgent::new(
            builder,
            Parts {
                name: spec.name.clone(),
                description: spec.description.clone(),
                tools,
                handlers,
                return_directly: spec
                    .return_directly
                    .iter()
                    .map(|t| t.value.clone())
                    .collect(),
                roles: roles(spec),
                scripted,
            },
        ))
    }

    fn fail_on(&self, problems: &mut Vec<Problem>) -> Result<(), FileErrors> {
        if problems.is_empty() {
            return Ok(());
        }
        let problems = std::mem::take(problems);
        Err(FileErrors::new(
            self.file.clone(),
            self.text.clone(),
            problems,
        ))
    }
}

/// The roles the role filters name, in the file's order.
fn roles(spec: &Spec) -> Vec<String> {
    let mut roles: Vec<String> = Vec::new();
    for handler in &spec.handlers {
        if let super::spec::HandlerKind::RoleFilter { roles: listed, .. } = &handler.kind {
            for (role, _) in listed {
                if !roles.contains(role) {
                    roles.push(role.clone());
                }
            }
        }
    }
    roles
}

/// The agent builder around the file's model; the scripted model is kept for tests.
pub(crate) fn model(
    spec: &Spec,
    registry: &Registry,
) -> Result<(AgentBuilder, Option<ScriptedModel>), LoadError> {
    let builder = match &spec.model {
        Some(ModelSpec::Scripted { turns, per_run, .. }) => {
            let model = if *per_run {
                ScriptedModel::per_run(turns.clone())
            } else {
                ScriptedModel::new(turns.clone())
            };
            return Ok((Agent::builder(model.clone()), Some(model)));
        }
        Some(ModelSpec::Registered(name)) => match registry.models.get(&name.value) {
            Some(model) => Agent::builder(model.clone()),
            None => {
                return Err(LoadError::Model(
                    format!("no model `{}` is registered", name.value).into(),
                ));
            }
        },
        Some(ModelSpec::Hosted { .. }) => Agent::builder(hosted(spec)?),
        _ => {
            return Err(LoadError::Model(
                "this program cannot make the file's model".into(),
            ));
        }
    };
    Ok((builder, None))
}

/// The model of a hosted provider: its builder from the environment, then the file's
/// settings over it.
#[cfg_attr(
    not(any(feature = "openai", feature = "anthropic", feature = "gemini")),
    allow(unused_variables)
)]
fn hosted(spec: &Spec) -> Result<adk::BoxModel, LoadError> {
    let Some(ModelSpec::Hosted {
        provider,
        name,
        base_url,
        api_key,
        stream,
        reasoning,
    }) = &spec.model
    else {
        return Err(LoadError::Model(
            "the file's model is not a provider's".into(),
        ));
    };
    // Each builder takes the same connection settings.
    #[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
    macro_rules! connect {
        ($builder:expr) => {{
            let mut builder = $builder;
            if let Some(url) = base_url {
                builder = builder.base_url(url);
            }
            if let Some(key) = api_key {
                builder = builder.api_key(key);
            }
            if let Some(name) = name {
                builder = builder.model(name);
            }
            if let Some(stream) = stream {
                builder = builder.stream(*stream);
            }
            builder
        }};
    }
    let failed = |e: BoxError| LoadError::Model(e);
    match provider {
        #[cfg(feature = "openai")]
        Provider::OpenAi => {
            let builder = connect!(adk::providers::openai::OpenAiModelBuilder::from_env());
            Ok(boxed(builder.build().map_err(|e| failed(e.into()))?))
        }
        #[cfg(feature = "openai-responses")]
        Provider::OpenAiResponses => {
            use adk::providers::openai::responses::{ReasoningEffort, ResponsesModelBuilder};
            let mut builder = connect!(ResponsesModelBuilder::from_env());
            if let Some(effort) = &reasoning.reasoning_effort {
                let effort = match effort.as_str() {
                    "none" => ReasoningEffort::None,
                    "minimal" => ReasoningEffort::Minimal,
                    "low" => ReasoningEffort::Low,
                    "medium" => ReasoningEffort::Medium,
                    "high" => ReasoningEffort::High,
                    _ => ReasoningEffort::XHigh,
                };
                builder = builder.reasoning_effort(effort);
            }
            if let Some(store) = reasoning.store {
                builder = builder.store(store);
            }
            Ok(boxed(builder.build().map_err(|e| failed(e.into()))?))
        }
        #[cfg(feature = "anthropic")]
        Provider::Anthropic => {
            let mut builder =
                connect!(adk::providers::anthropic::AnthropicModelBuilder::from_env());
            if let Some(budget) = reasoning.thinking_budget {
                builder = builder.thinking_budget(Some(budget));
            }
            if let Some(on) = reasoning.interleaved_thinking {
                builder = builder.interleaved_thinking(on);
            }
            Ok(boxed(builder.build().map_err(|e| failed(e.into()))?))
        }
        #[cfg(feature = "gemini")]
        Provider::Gemini => {
            use adk::providers::gemini::{GeminiModelBuilder, Thinking};
            let mut builder = connect!(GeminiModelBuilder::from_env());
            let thinking = match (reasoning.thinking_budget, &reasoning.thinking_level) {
                (_, Some(level)) => Some(Thinking::level(level)),
                // A budget past i32::MAX is no budget a model takes; the API refuses it.
                (Some(budget), None) => {
                    Some(Thinking::budget(i32::try_from(budget).unwrap_or(i32::MAX)))
                }
                (None, None) => None,
            };
            if let Some(thinking) = thinking {
                builder = builder.thinking(thinking);
            }
            Ok(boxed(builder.build().map_err(|e| failed(e.into()))?))
        }
        #[allow(unreachable_patterns)]
        _ => Err(LoadError::Model(
            "this program cannot make the file's model (its provider's feature is off)".into(),
        )),
    }
}

/// A provider's model, its errors boxed.
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
fn boxed<M>(model: M) -> adk::BoxModel
where
    M: tower::Service<adk::ModelRequest, Response = adk::ModelResponse>,
    M: Clone + Send + Sync + 'static,
    M::Error: Into<BoxError>,
    M::Future: Send + 'static,
{
    use tower::ServiceExt;
    adk::BoxModel::new(model.map_err(Into::into))
}

/// The run settings and the checkpoint store.
async fn settings(spec: &Spec, mut builder: AgentBuilder) -> Result<AgentBuilder, LoadError> {
    builder = builder
        .name(spec.name.clone())
        .model_options(spec.options.clone())
        .return_directly(spec.return_directly.iter().map(|t| t.value.clone()))
        .durable(spec.durable);
    if let Some(max) = spec.max_iterations {
        builder = builder.max_iterations(max);
    }
    if let Some(cap) = spec.parallel_tool_calls {
        builder = builder.parallel_tool_calls(cap);
    }
    if let Some(limit) = spec.timeout {
        builder = builder.run_timeout(limit);
    }
    if let Some(on) = spec.filler_messages {
        builder = builder.filler_messages(on);
    }
    let Some(store) = &spec.checkpoints else {
        return Ok(builder);
    };
    let failed = |source: BoxError| LoadError::Store {
        store: hide_password(&store.value),
        source,
    };
    Ok(match &store.value {
        StoreSpec::Memory => builder.checkpoints(adk::checkpoint::MemoryStore::new()),
        #[cfg(feature = "sqlite")]
        StoreSpec::Sqlite(path) => builder.checkpoints(
            adk::checkpoint::SqliteStore::open(path)
                .await
                .map_err(|e| failed(e.into()))?,
        ),
        #[cfg(feature = "postgres")]
        StoreSpec::Postgres(url) => builder.checkpoints(
            adk::checkpoint::PostgresStore::connect(url)
                .await
                .map_err(|e| failed(e.into()))?,
        ),
        #[cfg(feature = "redis")]
        StoreSpec::Redis(url) => builder.checkpoints(
            adk::checkpoint::RedisStore::connect(url)
                .await
                .map_err(|e| failed(e.into()))?,
        ),
        // Read as a problem of the file already, without the store's feature.
        #[allow(unreachable_patterns)]
        _ => {
            return Err(failed(
                "this program was built without this store's feature".into(),
            ));
        }
    })
}

/// The store's URL with its password replaced by `***`, for messages.
fn hide_password(store: &StoreSpec) -> String {
    let url = match store {
        StoreSpec::Memory => return "memory".to_owned(),
        StoreSpec::Sqlite(path) => return format!("sqlite:{path}"),
        StoreSpec::Postgres(url) | StoreSpec::Redis(url) => url,
    };
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.find(':') {
                Some(colon) => format!(
                    "{}{}:***{}",
                    &url[..scheme + 3],
                    &credentials[..colon],
                    &url[at..]
                ),
                None => url.clone(),
            }
        }
        _ => url.clone(),
    }
}

/// The tools of every MCP server, connected concurrently, filtered by their lists.
#[cfg(feature = "mcp")]
async fn mcp_tools(spec: &Spec, problems: &mut Vec<Problem>) -> Result<Vec<Tool>, LoadError> {
    let connects = spec
        .mcp_servers
        .iter()
        .map(|server| super::mcp::connect(server, spec.mcp_connection_retries));
    let mut tools = Vec::new();
    for (server, connected) in spec
        .mcp_servers
        .iter()
        .zip(adk::futures::future::join_all(connects).await)
    {
        let offered = connected.map_err(|source| LoadError::Mcp {
            server: server.name.clone(),
            source: source.into(),
        })?;
        tools.extend(super::mcp::select(server, offered, problems));
    }
    Ok(tools)
}

#[cfg(not(feature = "mcp"))]
async fn mcp_tools(_: &Spec, _: &mut Vec<Problem>) -> Result<Vec<Tool>, LoadError> {
    // Servers in the file are a problem of the file without the feature.
    Ok(Vec::new())
}

/// A tool per remote A2A agent, connected concurrently.
#[cfg(feature = "a2a-client")]
async fn remote_tools(spec: &Spec) -> Result<Vec<Tool>, LoadError> {
    let connects = spec.remote_agents.iter().map(super::remote::connect);
    let connected = adk::futures::future::join_all(connects).await;
    spec.remote_agents
        .iter()
        .zip(connected)
        .map(|(agent, tool)| {
            tool.map_err(|source| LoadError::RemoteAgent {
                agent: agent.name.value.clone(),
                source: source.into(),
            })
        })
        .collect()
}

#[cfg(not(feature = "a2a-client"))]
async fn remote_tools(_: &Spec) -> Result<Vec<Tool>, LoadError> {
    // Remote agents in the file are a problem of the file without the feature.
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::{StoreSpec, hide_password};

    #[test]
    fn a_store_urls_password_is_hidden_in_messages() {
        let url = |u: &str| StoreSpec::Postgres(u.to_owned());
        assert_eq!(
            hide_password(&url("postgres://adk:s3cret@db:5432/adk")),
            "postgres://adk:***@db:5432/adk"
        );
        assert_eq!(
            hide_password(&url("postgres://adk@db/adk")),
            "postgres://adk@db/adk"
        );
        assert_eq!(
            hide_password(&StoreSpec::Redis("redis://127.0.0.1:6379".into())),
            "redis://127.0.0.1:6379"
        );
        assert_eq!(
            hide_password(&StoreSpec::Sqlite("a.db".into())),
            "sqlite:a.db"
        );
    }
}
