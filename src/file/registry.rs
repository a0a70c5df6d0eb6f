//! [`Registry`]: what a program provides to its agent files by name (tools, handlers,
//! models), and [`HandlerSettings`], what a registered handler is made from.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use adk::{BoxError, BoxHandler, ModelRequest, ModelResponse, Tool};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tower::Service;
use tower::util::BoxCloneSyncService;

use super::parse::BUILT_IN_HANDLERS;

/// A model as the registry keeps it.
pub(crate) type RegisteredModel = BoxCloneSyncService<ModelRequest, ModelResponse, BoxError>;

type HandlerFactory = Arc<dyn Fn(&HandlerSettings) -> Result<BoxHandler, BoxError> + Send + Sync>;

/// The tools, handlers and models a program offers to its agent files, by the names the
/// files use.
///
/// - A tool is registered under its own name, the name the model calls it by; a file
///   lists it in `tools:`.
/// - A handler is registered as a function from its settings (the YAML under its name,
///   as JSON) to the handler; a file lists it in `handlers:` among the built-in ones
///   ([`Registry::BUILT_IN_HANDLERS`]), which it cannot replace.
/// - A model is registered under a name that a file picks with
///   `model: {provider: registered, name: NAME}`.
///
/// Cloning a registry is cheap (tools and factories are shared).
///
/// # Example
///
/// ```
/// use tower_adk::file::{AgentFile, Registry};
/// use tower_adk::testing::text_tool;
///
/// #[derive(serde::Deserialize)]
/// struct AuditSettings { prefix: String }
///
/// let registry = Registry::new()
///     .tool(text_tool("lookup_order", "order 7: shipped"))
///     .handler("audit", |settings| {
///         let AuditSettings { prefix } = settings.deserialize()?;
///         Ok::<_, tower_adk::BoxError>(tower_adk::handlers::instruction(format!("{prefix}: be brief.")))
///     });
///
/// let file = AgentFile::reader().registry(&registry).read_str(
///     "model: {provider: scripted, turns: [{text: hi}]}\ntools: [lookup_ordr]\nhandlers: [audit]\n",
///     "agent.yaml",
/// );
/// let errors = file.unwrap_err();
/// assert_eq!(errors.problems()[0].suggestion(), Some("lookup_order"));
/// ```
#[derive(Clone, Default)]
pub struct Registry {
    pub(crate) tools: BTreeMap<String, Tool>,
    pub(crate) handlers: BTreeMap<String, HandlerFactory>,
    pub(crate) models: BTreeMap<String, RegisteredModel>,
    pub(crate) clock: Option<Clock>,
}

/// Where a file's prompt template reads the time (`include_date_time`).
pub(crate) type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

impl Registry {
    /// The names of the built-in handlers a file can use without registering anything.
    pub const BUILT_IN_HANDLERS: &'static [&'static str] = BUILT_IN_HANDLERS;

    /// An empty registry: files can use the built-in handlers, and MCP tools.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Offers `tool` under its name (replacing a tool of the same name).
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.insert(tool.name().to_owned(), tool);
        self
    }

    /// Offers tools under their names.
    pub fn tools(self, tools: impl IntoIterator<Item = Tool>) -> Self {
        tools.into_iter().fold(self, Registry::tool)
    }

    /// Offers a handler under `name`, made by `make` from the settings the file gives
    /// it. `make` runs once for each agent loaded from a file that uses it; its error
    /// is reported as a problem at the handler's place in the file.
    ///
    /// A name of a built-in handler ([`Registry::BUILT_IN_HANDLERS`]) is ignored: the
    /// built-in one is used.
    pub fn handler<F, H, E>(mut self, name: impl Into<String>, make: F) -> Self
    where
        F: Fn(&HandlerSettings) -> Result<H, E> + Send + Sync + 'static,
        H: Into<BoxHandler>,
        E: Into<BoxError>,
    {
        let make: HandlerFactory =
            Arc::new(move |settings| make(settings).map(Into::into).map_err(Into::into));
        self.handlers.insert(name.into(), make);
        self
    }

    /// Offers a model under `name`, for files that say
    /// `model: {provider: registered, name: NAME}`.
    pub fn model<M>(mut self, name: impl Into<String>, model: M) -> Self
    where
        M: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
        M::Error: Into<BoxError>,
        M::Future: Send + 'static,
    {
        use tower::ServiceExt;
        let model = RegisteredModel::new(model.map_err(Into::into));
        self.models.insert(name.into(), model);
        self
    }

    /// Reads the current time from `now` instead of the system clock, for the date and
    /// time a file's prompt gives the model (`include_date_time`): a fixed time makes
    /// the prompt the same on every run, as recorded traffic and evaluations need
    /// (`adk eval --clock`).
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use tower::ServiceExt;
    /// use tower_adk::AgentRequest;
    /// use tower_adk::file::{AgentFile, Registry};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// // 2026-03-29 01:30 UTC.
    /// let fixed = SystemTime::UNIX_EPOCH + Duration::from_secs(1_774_747_800);
    /// let registry = Registry::new().clock(move || fixed);
    /// let text = "model: {provider: scripted, turns: [{text: hi}]}\ninclude_date_time: true\n";
    /// let loaded = AgentFile::from_str(text, "agent.yaml")?.load(&registry).await?;
    /// let model = loaded.scripted_model().cloned().expect("scripted");
    /// loaded.build()?.oneshot(AgentRequest::user("hello")).await?.await?;
    /// let prompt = model.requests()[0].messages[0].content().to_owned();
    /// assert_eq!(prompt, "Current date and time: Sunday, 2026-03-29 01:30 (UTC).");
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn clock<F>(mut self, now: F) -> Self
    where
        F: Fn() -> SystemTime + Send + Sync + 'static,
    {
        self.clock = Some(Arc::new(now));
        self
    }

    /// The names of the registered tools.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// The names of the registered handlers.
    pub fn handler_names(&self) -> impl Iterator<Item = &str> {
        self.handlers.keys().map(String::as_str)
    }

    /// The names of the registered models.
    pub fn model_names(&self) -> impl Iterator<Item = &str> {
        self.models.keys().map(String::as_str)
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("handlers", &self.handlers.keys().collect::<Vec<_>>())
            .field("models", &self.models.keys().collect::<Vec<_>>())
            .field("clock", &self.clock.as_ref().map(|_| "fixed"))
            .finish()
    }
}

/// The settings a file gives a registered handler: the YAML under its name, as JSON
/// (`null` when the file names the handler alone), with `${VAR}`s replaced.
///
/// # Example
///
/// ```
/// use tower_adk::file::{AgentFile, Registry};
///
/// #[derive(serde::Deserialize)]
/// struct Greeting { text: String }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::new().handler("greeting", |settings| {
///     let Greeting { text } = settings.deserialize()?;
///     Ok::<_, tower_adk::BoxError>(tower_adk::handlers::instruction(text))
/// });
/// let text = "model: {provider: scripted, turns: [{text: hi}]}\nhandlers:\n  - greeting: {text: Hello there.}\n";
/// let loaded = AgentFile::from_str(text, "agent.yaml")?.load(&registry).await?;
/// assert_eq!(loaded.handler_names(), ["greeting"]);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerSettings {
    pub(crate) name: String,
    pub(crate) value: Value,
}

impl HandlerSettings {
    /// The handler's name in the file.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The settings as JSON.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The settings as a serde type.
    ///
    /// # Errors
    ///
    /// When they do not deserialize into `T`; the message says why.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.value)
    }
}
