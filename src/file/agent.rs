//! [`LoadedAgent`]: what a file loads into (an [`AgentBuilder`] and the file's handlers),
//! and [`FileAgent`], the built agent with its handlers, as a service.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use adk::model::{ModelRequest, ModelResponse};
use adk::testing::{ScriptedModel, Turn};
use adk::{
    Agent, AgentBuilder, AgentRequest, AgentRun, BoxError, BoxHandler, BoxModel, BuildError, Tool,
    ToolInfo,
};
use tower::{Layer, Service};

use super::handlers::Named;
use super::role::Role;

/// What a loaded file knows besides the builder.
pub(crate) struct Parts {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) tools: Vec<Tool>,
    pub(crate) handlers: Vec<Named>,
    pub(crate) return_directly: Vec<String>,
    pub(crate) roles: Vec<String>,
    pub(crate) scripted: Option<ScriptedModel>,
}

/// An agent file, loaded: the [`AgentBuilder`] with the model, tools and settings, and
/// the handlers in the file's order. [`build`](LoadedAgent::build) it into a
/// [`FileAgent`], or take the parts with [`into_parts`](LoadedAgent::into_parts) to add
/// your own settings first.
///
/// The handlers are, in order: the prompt template (when the file has a `prompt`,
/// `prompt_file`, `description` or `include_date_time`), the file's `handlers:` in
/// their order, and the tool timeout (when it has `tool_timeout`, innermost, so that it
/// bounds each tool call alone). They run as layers around the agent: before the
/// request's own handlers.
pub struct LoadedAgent {
    builder: AgentBuilder,
    parts: Parts,
}

impl LoadedAgent {
    pub(crate) fn new(builder: AgentBuilder, parts: Parts) -> Self {
        LoadedAgent { builder, parts }
    }

    /// The agent's name (`name:`, default `agent`).
    pub fn name(&self) -> &str {
        &self.parts.name
    }

    /// What the agent does (`description:`), for listings.
    pub fn description(&self) -> &str {
        &self.parts.description
    }

    /// The names of the handlers, in the order they run.
    pub fn handler_names(&self) -> Vec<&str> {
        self.parts
            .handlers
            .iter()
            .map(|(name, _)| name.as_str())
            .collect()
    }

    /// The agent's own tools: the registered ones the file lists, then the MCP servers'
    /// (handlers may add more per run, and filter them; see [`FileAgent::preview`]).
    pub fn tools(&self) -> &[Tool] {
        &self.parts.tools
    }

    /// The roles the file's role filters name.
    pub fn roles(&self) -> &[String] {
        &self.parts.roles
    }

    /// The scripted model, when the file's provider is `scripted`: keep a clone to read
    /// the requests it was sent ([`ScriptedModel::requests`]).
    pub fn scripted_model(&self) -> Option<&ScriptedModel> {
        self.parts.scripted.as_ref()
    }

    /// The builder and the handlers, for a program that adds its own settings to the
    /// builder. Put the handlers around the built agent with [`HandlersLayer`], in this
    /// order.
    pub fn into_parts(self) -> (AgentBuilder, Vec<BoxHandler>) {
        let handlers = self.parts.handlers.into_iter().map(|(_, h)| h).collect();
        (self.builder, handlers)
    }

    /// Puts a tower layer around the file's model ([`AgentBuilder::model_layer`]): a
    /// timeout, a retry, or recorded traffic (`testing::cassette`, feature `cassette`),
    /// as `adk eval --cassettes` does.
    #[must_use]
    pub fn model_layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<BoxModel>,
        L::Service: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
        <L::Service as Service<ModelRequest>>::Error: Into<BoxError>,
        <L::Service as Service<ModelRequest>>::Future: Send + 'static,
    {
        self.builder = self.builder.model_layer(layer);
        self
    }

    /// Builds the agent.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] from [`AgentBuilder::build`] (e.g. two tools with one name).
    pub fn build(self) -> Result<FileAgent, BuildError> {
        let agent = self.builder.build()?;
        let handlers: Arc<[BoxHandler]> =
            self.parts.handlers.iter().map(|(_, h)| h.clone()).collect();
        Ok(FileAgent {
            service: HandlersLayer { handlers }.layer(agent),
            parts: Arc::new(self.parts),
        })
    }
}

impl fmt::Debug for LoadedAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedAgent")
            .field("name", &self.parts.name)
            .field("handlers", &self.handler_names())
            .field("builder", &self.builder)
            .finish_non_exhaustive()
    }
}

/// An agent built from a file, with the file's handlers: a `Service<AgentRequest>` that
/// answers with the run, like [`Agent`]. Cloning is cheap.
///
/// # Example
///
/// ```
/// use tower::ServiceExt;
/// use tower_adk::AgentRequest;
/// use tower_adk::file::{AgentFile, Registry, Role};
/// use tower_adk::testing::text_tool;
///
/// let text = r#"
/// name: support
/// description: You answer questions about orders.
/// model:
///   provider: scripted
///   turns: [{call: {tool: lookup_order, arguments: {id: 7}}}, {text: Order 7 has shipped.}]
/// tools: [lookup_order]
/// handlers:
///   - role_filter: {roles: {agent: ["*"]}}
/// "#;
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::new().tool(text_tool("lookup_order", "shipped"));
/// let agent = AgentFile::from_str(text, "support.yaml")?.load(&registry).await?.build()?;
///
/// let preview = agent.preview(Some("agent")).await?;
/// assert_eq!(preview.instruction, "You answer questions about orders.");
/// assert_eq!(preview.tool_names(), ["lookup_order"]);
/// assert!(agent.preview(None).await?.tools.is_empty()); // no role, no tools
///
/// let request = AgentRequest::user("Where is order 7?").with_extension(Role::new("agent"));
/// let result = agent.oneshot(request).await?.await?;
/// assert_eq!(result.final_message.content(), "Order 7 has shipped.");
/// # Ok::<_, tower_adk::BoxError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct FileAgent {
    service: HandlersService<Agent>,
    parts: Arc<Parts>,
}

/// What the model is shown at the start of a run for one caller: the instruction and
/// the tools, after every handler's `before_agent`. See [`FileAgent::preview`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Preview {
    /// The instruction (the system message) of the first model call.
    pub instruction: String,
    /// The tools the model is shown, in order.
    pub tools: Vec<ToolInfo>,
}

impl Preview {
    /// The tools' names.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }
}

impl FileAgent {
    /// The agent, without the file's handlers (threads and checkpoints are read
    /// through it).
    pub fn agent(&self) -> &Agent {
        self.service.get_ref()
    }

    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.parts.name
    }

    /// What the agent does.
    pub fn description(&self) -> &str {
        &self.parts.description
    }

    /// The roles the file's role filters name (for listing the tools per role).
    pub fn roles(&self) -> &[String] {
        &self.parts.roles
    }

    /// The scripted model, when the file's provider is `scripted`.
    pub fn scripted_model(&self) -> Option<&ScriptedModel> {
        self.parts.scripted.as_ref()
    }

    /// A layer that adds the file's handlers to each request, e.g. for a
    /// [`ServedAgent`](adk::server::ServedAgent) around [`agent`](FileAgent::agent).
    pub fn handlers_layer(&self) -> HandlersLayer {
        HandlersLayer {
            handlers: Arc::clone(&self.service.handlers),
        }
    }

    /// What the model sees at the start of a run for a caller with `role` (`None`: a
    /// caller with no role): the instruction and the tools, after every handler's
    /// `before_agent`. It makes a run of the same tools and handlers against a scripted
    /// model that answers with nothing, so the real model is not called and no tool runs.
    ///
    /// # Errors
    ///
    /// The run's error when it failed before its first model call (a handler's
    /// `before_agent` failed).
    pub async fn preview(&self, role: Option<&str>) -> Result<Preview, BoxError> {
        let model = ScriptedModel::new([Turn::text("")]);
        let probe = Agent::builder(model.clone())
            .name(self.parts.name.clone())
            .tools(self.parts.tools.iter().cloned())
            .return_directly(self.parts.return_directly.iter().cloned())
            .build()?;
        let mut request = AgentRequest::user("");
        if let Some(role) = role {
            request = request.with_extension(Role::new(role));
        }
        let outcome = self
            .handlers_layer()
            .layer(probe)
            .call(request)
            .await?
            .await;
        let Some(seen) = model.requests().into_iter().next() else {
            return Err(outcome
                .err()
                .map_or_else(|| "the run made no model call".into(), Into::into));
        };
        let instruction = match seen.messages.first() {
            Some(message @ adk::Message::System { .. }) => message.content().to_owned(),
            _ => String::new(),
        };
        let tools = seen.tools.iter().map(|t| ToolInfo::clone(t)).collect();
        Ok(Preview { instruction, tools })
    }

    /// The agent to serve: with its description and the file's handlers.
    #[cfg(feature = "server")]
    pub fn served(&self) -> adk::server::ServedAgent {
        adk::server::ServedAgent::new(self.agent().clone())
            .description(self.parts.description.clone())
            .layer(self.handlers_layer())
    }
}

impl Service<AgentRequest> for FileAgent {
    type Response = AgentRun;
    type Error = std::convert::Infallible;
    type Future = std::future::Ready<Result<AgentRun, std::convert::Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.service.poll_ready(cx)
    }

    fn call(&mut self, request: AgentRequest) -> Self::Future {
        self.service.call(request)
    }
}

impl fmt::Debug for FileAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let handlers: Vec<&str> = self
            .parts
            .handlers
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        f.debug_struct("FileAgent")
            .field("name", &self.parts.name)
            .field("handlers", &handlers)
            .field("agent", self.agent())
            .finish_non_exhaustive()
    }
}

/// A layer that puts an agent file's handlers in front of each request's own handlers,
/// in the file's order: the same order as one [`HandlerLayer`](adk::HandlerLayer) per
/// handler, innermost of any other layers.
#[derive(Debug, Clone)]
pub struct HandlersLayer {
    handlers: Arc<[BoxHandler]>,
}

impl HandlersLayer {
    /// A layer for these handlers, first one first.
    pub fn new(handlers: impl IntoIterator<Item = BoxHandler>) -> Self {
        HandlersLayer {
            handlers: handlers.into_iter().collect(),
        }
    }
}

impl<S> Layer<S> for HandlersLayer {
    type Service = HandlersService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HandlersService {
            inner,
            handlers: Arc::clone(&self.handlers),
        }
    }
}

/// The service made by [`HandlersLayer`].
#[derive(Debug, Clone)]
pub struct HandlersService<S> {
    inner: S,
    handlers: Arc<[BoxHandler]>,
}

impl<S> HandlersService<S> {
    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Consumes this service, returning the inner one.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: Service<AgentRequest>> Service<AgentRequest> for HandlersService<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: AgentRequest) -> Self::Future {
        let own = request.handlers_mut();
        own.splice(0..0, self.handlers.iter().cloned());
        self.inner.call(request)
    }
}
