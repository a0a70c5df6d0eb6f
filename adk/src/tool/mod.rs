//! Tools: what the model can call, as tower services.
//!
//! A [`Tool`] is a [`ToolInfo`] (name, description, JSON Schema of the arguments) plus one
//! or two tower services at the tool seam:
//!
//! - an *invoke* service, `Service<ToolRequest, Response = ToolOutput>`, that returns the
//!   whole result at once;
//! - a *stream* service, `Service<ToolRequest, Response = ToolStream>`, that returns the
//!   result as chunks (progress, partial results).
//!
//! A tool may have both; the loop streams a tool that can stream, so its chunks reach the
//! caller as events, and the model sees their concatenation.
//!
//! Because both are plain tower services, stock tower middleware wraps them unchanged:
//! [`Tool::layer`] applies a layer to one tool, and
//! [`ToolLayer`](crate::handler::ToolLayer) to every call of a run. Either way the layer
//! sees each call whole, a streamed one up to its last chunk.
//!
//! [`Tool::typed`] makes a tool from an async function of an arguments struct, with its
//! schema generated from the struct; [`Tool::strict`] holds the model to the schema
//! exactly; [`openai`] exports tools in OpenAI's function-calling format.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use tower_adk::{Tool, ToolInfo, ToolOutput, ToolRequest};
//! use serde_json::json;
//! use tower::timeout::TimeoutLayer;
//!
//! let add = Tool::from_fn(
//!     ToolInfo::new("add", "Adds two integers").parameters(json!({
//!         "type": "object",
//!         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
//!         "required": ["a", "b"]
//!     })),
//!     |req: ToolRequest| async move {
//!         let a = req.arguments["a"].as_i64().unwrap_or(0);
//!         let b = req.arguments["b"].as_i64().unwrap_or(0);
//!         Ok::<_, std::convert::Infallible>(ToolOutput::new((a + b).to_string()))
//!     },
//! )
//! .layer(TimeoutLayer::new(Duration::from_secs(5)));
//!
//! assert_eq!(add.name(), "add");
//! assert!(add.is_invokable() && !add.is_streamable());
//! ```

mod error;
pub mod openai;
mod output;
mod record;
mod report;
mod request;
mod set;
pub(crate) mod typed;
#[cfg(feature = "validation")]
pub(crate) mod validation;
pub(crate) mod whole;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
#[cfg(feature = "validation")]
use std::sync::OnceLock;

use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service, ServiceExt};

pub use self::error::{ToolError, ToolErrorKind};
pub use self::output::{Finish, ToolOutput, ToolResponse, ToolStream};
pub use self::record::ToolRecord;
pub use self::report::{ToolEvent, ToolReport};
pub use self::request::ToolRequest;
pub use self::set::ToolSet;
pub use self::typed::ToolContext;
use crate::error::BuildError;

/// What the model is told about a tool: its name, what it does, and its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// The name the model calls the tool by; unique within a run.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of the arguments object.
    pub parameters: Value,
    /// Whether `parameters` is in strict form and providers should ask the model to
    /// follow it exactly (OpenAI's `"strict": true`); set by [`ToolInfo::strict`].
    #[serde(default)]
    pub strict: bool,
}

impl ToolInfo {
    /// A tool that takes no arguments (an empty object schema).
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolInfo {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
            strict: false,
        }
    }

    /// Sets the JSON Schema of the arguments; in strict form if the info is
    /// [strict](ToolInfo::strict).
    pub fn parameters(mut self, schema: Value) -> Self {
        self.parameters = if self.strict {
            openai::strict_schema(schema)
        } else {
            schema
        };
        self
    }

    /// Makes the tool strict: rewrites `parameters` into strict form (see
    /// [`strict_schema`](openai::strict_schema): no property beyond those listed, every
    /// property required, the optional ones nullable) and sets the `strict` flag.
    ///
    /// The rewritten schema is the one the model is shown and the one arguments are
    /// validated against, so under strict a call with an extra field or a missing one is
    /// answered with an invalid-arguments error. It cannot be undone.
    ///
    /// # Example
    ///
    /// ```
    /// use tower_adk::ToolInfo;
    /// use serde_json::json;
    ///
    /// let info = ToolInfo::new("weather", "Current weather")
    ///     .parameters(json!({
    ///         "type": "object",
    ///         "properties": {"city": {"type": "string"}, "units": {"type": "string"}},
    ///         "required": ["city"]
    ///     }))
    ///     .strict();
    /// assert!(info.strict);
    /// assert_eq!(info.parameters, json!({
    ///     "type": "object",
    ///     "properties": {"city": {"type": "string"}, "units": {"type": ["string", "null"]}},
    ///     "required": ["city", "units"],
    ///     "additionalProperties": false
    /// }));
    /// ```
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self.parameters = openai::strict_schema(self.parameters);
        self
    }
}

/// The longest tool name providers accept.
pub const MAX_NAME_LEN: usize = 64;

/// Checks a tool name against what chat-completion providers accept,
/// `^[a-zA-Z0-9_-]{1,64}$`. The agent checks every tool's name when it is built, and again
/// when a run's `before_agent` hooks add tools.
///
/// # Errors
///
/// [`BuildError::InvalidToolName`] saying what is wrong: empty, too long, or which
/// character is not allowed.
///
/// # Example
///
/// ```
/// use tower_adk::tool::check_name;
///
/// assert!(check_name("get_weather-v2").is_ok());
/// assert!(check_name("").is_err());
/// assert!(check_name("has space").is_err());
/// assert!(check_name("météo").is_err());
/// assert!(check_name(&"x".repeat(65)).is_err());
/// ```
pub fn check_name(name: &str) -> Result<(), BuildError> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name.len() > MAX_NAME_LEN {
        "it is longer than 64 characters"
    } else if name
        .bytes()
        .any(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
    {
        "only ASCII letters, digits, `_` and `-` are allowed"
    } else {
        return Ok(());
    };
    Err(BuildError::InvalidToolName {
        name: name.to_owned(),
        reason,
    })
}

/// The boxed invoke service of a tool.
pub type InvokeService = BoxCloneSyncService<ToolRequest, ToolOutput, BoxError>;

/// The boxed stream service of a tool.
pub type StreamService = BoxCloneSyncService<ToolRequest, ToolStream, BoxError>;

/// A tool the model can call: its [`ToolInfo`] and its tower services.
///
/// Cloning is cheap (a reference count).
#[derive(Clone)]
pub struct Tool(Arc<ToolInner>);

struct ToolInner {
    parts: Parts,
    /// The argument validator, compiled from the schema on first use.
    #[cfg(feature = "validation")]
    validator: OnceLock<Result<validation::Checker, String>>,
}

/// What a tool is made of; changing a part makes a new tool.
#[derive(Clone)]
struct Parts {
    info: Arc<ToolInfo>,
    invoke: Option<InvokeService>,
    stream: Option<StreamService>,
    idempotent: bool,
}

impl Tool {
    /// An invokable tool from any tower service at the tool seam.
    pub fn new<S>(info: ToolInfo, service: S) -> Self
    where
        S: Service<ToolRequest, Response = ToolOutput> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        Tool::from_parts(Parts {
            info: Arc::new(info),
            invoke: Some(box_invoke(service)),
            stream: None,
            idempotent: false,
        })
    }

    /// A streamable tool from any tower service that returns a [`ToolStream`].
    pub fn streaming<S>(info: ToolInfo, service: S) -> Self
    where
        S: Service<ToolRequest, Response = ToolStream> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        Tool::from_parts(Parts {
            info: Arc::new(info),
            invoke: None,
            stream: Some(box_stream(service)),
            idempotent: false,
        })
    }

    /// An invokable tool from an async function.
    pub fn from_fn<F, Fut, O, E>(info: ToolInfo, f: F) -> Self
    where
        F: Fn(ToolRequest) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<O, E>> + Send + 'static,
        O: Into<ToolOutput>,
        E: Into<BoxError>,
    {
        Tool::new(
            info,
            tower::service_fn(move |req| {
                let fut = f(req);
                async move { fut.await.map(Into::into).map_err(Into::into) }
            }),
        )
    }

    /// A streamable tool from a function that returns a stream of chunks.
    pub fn stream_fn<F, S, C, E>(info: ToolInfo, f: F) -> Self
    where
        F: Fn(ToolRequest) -> S + Clone + Send + Sync + 'static,
        S: Stream<Item = Result<C, E>> + Send + 'static,
        C: Into<String> + 'static,
        E: Into<BoxError> + 'static,
    {
        Tool::streaming(
            info,
            tower::service_fn(move |req| {
                std::future::ready(Ok::<_, BoxError>(ToolStream::new(f(req))))
            }),
        )
    }

    /// Adds (or replaces) the stream service, making the tool streamable as well.
    pub fn with_stream<S>(self, service: S) -> Self
    where
        S: Service<ToolRequest, Response = ToolStream> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        self.map_parts(|parts| parts.stream = Some(box_stream(service)))
    }

    /// Marks the tool as idempotent (or not): calling it twice with the same arguments
    /// has the same effect as calling it once, so a failed call may be retried.
    pub fn idempotent(self, idempotent: bool) -> Self {
        self.map_parts(|parts| parts.idempotent = idempotent)
    }

    /// Makes the tool strict (see [`ToolInfo::strict`]): the model is shown, and the
    /// arguments are validated against, the strict form of its parameter schema, which
    /// rejects unknown fields and requires every field (optional ones as `null`).
    ///
    /// For a [typed tool](Tool::typed), a field the model may leave out should be an
    /// `Option`: under strict the model sends `null` for it, which an `Option` reads as
    /// `None` but a `#[serde(default)]` field of another type rejects.
    pub fn strict(self) -> Self {
        self.map_parts(|parts| {
            parts.info = Arc::new(ToolInfo::clone(&parts.info).strict());
        })
    }

    /// Whether the tool is marked idempotent.
    pub fn is_idempotent(&self) -> bool {
        self.0.parts.idempotent
    }

    /// Wraps the tool in a tower layer, e.g. a timeout or a concurrency limit for this
    /// tool only. The layer is applied here, once per service of the tool (a tool that can
    /// both be invoked and stream has two, each with its own layer state), so its state (a
    /// semaphore, a rate budget) is shared by every call of every run.
    ///
    /// The layer sees each call whole: a streamed call from its start to its last chunk,
    /// so a `Timeout` bounds the whole stream and a `ConcurrencyLimit` holds its permit
    /// until the last chunk, while the chunks still reach the caller as they come.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures::StreamExt;
    /// use tower::timeout::TimeoutLayer;
    /// use tower_adk::{Tool, ToolErrorKind, ToolInfo, ToolRequest};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// // A tool that streams two chunks, a second apart.
    /// let slow = Tool::stream_fn(ToolInfo::new("slow", "Streams slowly"), |_| {
    ///     futures::stream::iter(["first", "second"]).then(|chunk| async move {
    ///         tokio::time::sleep(Duration::from_secs(1)).await;
    ///         Ok::<_, std::convert::Infallible>(chunk)
    ///     })
    /// })
    /// .layer(TimeoutLayer::new(Duration::from_millis(1500)));
    ///
    /// let mut chunks = slow.stream(ToolRequest::new("c1", "slow", serde_json::json!({}))).await?;
    /// assert_eq!(chunks.next().await.transpose()?.as_deref(), Some("first"));
    /// // The timeout bounds the whole call: it fires before the second chunk.
    /// let error = chunks.next().await.unwrap().unwrap_err();
    /// assert_eq!(tower_adk::ToolError::from_boxed(error).kind(), ToolErrorKind::Timeout);
    /// # Ok::<_, tower::BoxError>(())
    /// # }).unwrap();
    /// ```
    pub fn layer<L>(self, layer: L) -> Self
    where
        L: Layer<InvokeService>,
        L::Service: Service<ToolRequest, Response = ToolOutput> + Clone + Send + Sync + 'static,
        <L::Service as Service<ToolRequest>>::Error: Into<BoxError>,
        <L::Service as Service<ToolRequest>>::Future: Send + 'static,
    {
        self.map_parts(|parts| {
            parts.invoke = parts.invoke.take().map(|svc| box_invoke(layer.layer(svc)));
            parts.stream = parts.stream.take().map(|svc| {
                let whole = layer.layer(box_invoke(whole::Drained(svc)));
                box_stream(whole::Resurface(whole))
            });
        })
    }

    fn from_parts(parts: Parts) -> Self {
        Tool(Arc::new(ToolInner {
            parts,
            #[cfg(feature = "validation")]
            validator: OnceLock::new(),
        }))
    }

    fn map_parts(self, change: impl FnOnce(&mut Parts)) -> Self {
        let mut parts = self.0.parts.clone();
        change(&mut parts);
        Tool::from_parts(parts)
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.0.parts.info.name
    }

    /// What the model is told about the tool.
    pub fn info(&self) -> &ToolInfo {
        &self.0.parts.info
    }

    pub(crate) fn shared_info(&self) -> Arc<ToolInfo> {
        Arc::clone(&self.0.parts.info)
    }

    /// Whether the tool returns its result whole.
    pub fn is_invokable(&self) -> bool {
        self.0.parts.invoke.is_some()
    }

    /// Whether the tool can stream its result.
    pub fn is_streamable(&self) -> bool {
        self.0.parts.stream.is_some()
    }

    /// Calls the tool's invoke service directly, outside any agent (for tests and
    /// hand-written loops).
    ///
    /// # Errors
    ///
    /// The tool's error, or a [`ToolError`] if the tool cannot be invoked.
    pub async fn invoke(&self, request: ToolRequest) -> Result<ToolOutput, BoxError> {
        match &self.0.parts.invoke {
            Some(service) => service.clone().oneshot(request).await,
            None => Err(ToolError::new(
                ToolErrorKind::Failed,
                format!("tool `{}` cannot be invoked", self.name()),
            )
            .into()),
        }
    }

    /// Calls the tool's stream service directly, outside any agent.
    ///
    /// # Errors
    ///
    /// The tool's error, or a [`ToolError`] if the tool cannot stream.
    pub async fn stream(&self, request: ToolRequest) -> Result<ToolStream, BoxError> {
        match &self.0.parts.stream {
            Some(service) => service.clone().oneshot(request).await,
            None => Err(ToolError::new(
                ToolErrorKind::Failed,
                format!("tool `{}` cannot be streamed", self.name()),
            )
            .into()),
        }
    }

    pub(crate) fn invoke_service(&self) -> Option<&InvokeService> {
        self.0.parts.invoke.as_ref()
    }

    pub(crate) fn stream_service(&self) -> Option<&StreamService> {
        self.0.parts.stream.as_ref()
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name())
            .field("invokable", &self.is_invokable())
            .field("streamable", &self.is_streamable())
            .field("idempotent", &self.is_idempotent())
            .finish()
    }
}

fn box_invoke<S>(service: S) -> InvokeService
where
    S: Service<ToolRequest, Response = ToolOutput> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    BoxCloneSyncService::new(service.map_err(Into::into))
}

fn box_stream<S>(service: S) -> StreamService
where
    S: Service<ToolRequest, Response = ToolStream> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    BoxCloneSyncService::new(service.map_err(Into::into))
}
