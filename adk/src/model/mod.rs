//! The model seam: any tower `Service<ModelRequest, Response = ModelResponse>`.
//!
//! A model receives the history, the tools visible in this run and the call's options,
//! and answers with a [`ModelResponse`] that can be read whole ([`ModelResponse::into_message`])
//! or as a stream of [`ModelDelta`]s ([`ModelResponse::into_stream`]). The loop always
//! reads the stream, so text reaches the caller as it is produced.
//!
//! Since a model is a tower service, stock tower middleware (timeout, retry, rate limit,
//! concurrency limit) wraps it before it is handed to the agent.
//!
//! # Example
//!
//! ```
//! use tower_adk::{Message, ModelRequest, ModelResponse};
//! use tower::{service_fn, ServiceExt};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A model that echoes the last user message.
//! let echo = service_fn(|req: ModelRequest| async move {
//!     let last = req.messages.last().map(|m| m.content().to_owned()).unwrap_or_default();
//!     Ok::<_, tower::BoxError>(ModelResponse::message(Message::assistant(last)))
//! });
//!
//! let request = ModelRequest::new(vec![Message::user("hi")].into());
//! let reply = echo.oneshot(request).await?.into_message().await?;
//! assert_eq!(reply.content(), "hi");
//! # Ok::<_, tower::BoxError>(())
//! # }).unwrap();
//! ```

mod error;
mod format;
mod response;
mod shared;
mod usage;

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use tower::BoxError;
use tower::util::BoxCloneSyncService;

pub use self::error::ModelError;
pub use self::format::ResponseFormat;
pub use self::response::{MessageAccumulator, ModelDelta, ModelResponse};
pub(crate) use self::shared::{CallModel, ModelFuture, SharedModel};
pub use self::usage::{Cost, Price, Prices, Usage, UsageMeter, UsageTotals};
use crate::context::{LocalsGuard, Scope};
use crate::interrupt::{Decision, HookAnswer};
use crate::message::Messages;
use crate::tool::ToolInfo;

/// A model service, boxed: one type for any model, e.g. to pick one at run time or to
/// keep models in a struct. Box a model whose error is not already a `BoxError` with
/// `map_err(Into::into)`.
///
/// # Example
///
/// ```
/// use tower::ServiceExt;
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::{Agent, AgentRequest, BoxModel};
///
/// fn model(fast: bool) -> BoxModel {
///     let turn = if fast { "fast" } else { "careful" };
///     BoxModel::new(ScriptedModel::new([Turn::text(turn)]).map_err(Into::into))
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let agent = Agent::builder(model(true)).build()?;
/// let result = agent.run(AgentRequest::user("hi")).await?;
/// assert_eq!(result.final_message.content(), "fast");
/// # Ok::<_, tower_adk::BoxError>(())
/// # }).unwrap();
/// ```
pub type BoxModel = BoxCloneSyncService<ModelRequest, ModelResponse, BoxError>;

/// Whether and how the model may call tools in one call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call at least one tool.
    Required,
    /// The model must call the tool with this name.
    Tool(String),
}

/// Per-call options for the model.
///
/// A provider sends the options its API has and ignores the others; every field is
/// optional, and `None` (or empty) leaves the server's default.
///
/// # Example
///
/// ```
/// use tower_adk::model::{ModelOptions, ToolChoice};
///
/// let mut options = ModelOptions::default();
/// options.temperature = Some(0.2);
/// options.tool_choice = ToolChoice::Tool("search".into());
/// options.parallel_tool_calls = Some(false);
/// options.stop = vec!["\n\n".into()];
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ModelOptions {
    /// Sampling temperature, if set.
    pub temperature: Option<f32>,
    /// The most tokens the model may produce, if set.
    pub max_tokens: Option<u32>,
    /// Whether the model may call tools.
    pub tool_choice: ToolChoice,
    /// Whether the model may ask for several tool calls in one turn, if set.
    pub parallel_tool_calls: Option<bool>,
    /// Nucleus sampling: the probability mass of the tokens considered, if set.
    pub top_p: Option<f32>,
    /// Texts at which the model stops producing; empty for none.
    pub stop: Vec<String>,
    /// A seed for sampling, for servers that can repeat a generation, if set.
    pub seed: Option<u64>,
    /// The shape the model's text answer must take, for providers that can constrain it
    /// (see [`ResponseFormat`]); shared, as options are copied for every call.
    pub response_format: Option<Arc<ResponseFormat>>,
}

/// One call to a model: the request of the model seam.
#[derive(Clone)]
pub struct ModelRequest {
    /// The history, shared copy-on-write with the loop.
    pub messages: Messages,
    /// The tools the model may call in this run.
    pub tools: Arc<[Arc<ToolInfo>]>,
    /// Options for this call.
    pub options: ModelOptions,
    scope: Scope,
    /// The rest of the `wrap_model` chain, while a tower layer that a handler applied is
    /// in between (see [`ModelLayer`](crate::handler::ModelLayer)); erased, as the
    /// request of a seam knows nothing of the chain around it.
    pub(crate) continuation: Option<Arc<dyn Any + Send + Sync>>,
}

impl ModelRequest {
    /// A request with no tools, default options and empty extensions.
    pub fn new(messages: Messages) -> Self {
        ModelRequest::for_run(messages, Arc::from([]), Scope::default())
    }

    pub(crate) fn for_run(messages: Messages, tools: Arc<[Arc<ToolInfo>]>, scope: Scope) -> Self {
        ModelRequest {
            messages,
            tools,
            options: ModelOptions::default(),
            scope,
            continuation: None,
        }
    }

    /// The run's extensions.
    pub fn extensions(&self) -> &http::Extensions {
        &self.scope.extensions
    }

    /// The run's run-local values, locked for this call (see [`LocalsGuard`]): what a
    /// wrapper or the model changes there is the run's.
    pub fn locals(&self) -> LocalsGuard<'_> {
        self.scope.locals()
    }

    /// The extensions, mutably; changes are seen by the inner wrappers and the model of
    /// this call only.
    pub fn extensions_mut(&mut self) -> &mut http::Extensions {
        self.scope.extensions_mut()
    }

    /// The person's decision about a `wrap_model` hook's interrupt, in the model call
    /// that runs again when the run resumes from it (see
    /// [`interrupt`](crate::interrupt)); `None` in every other call.
    ///
    /// ```
    /// use tower_adk::{BoxError, Handler, ModelNext, ModelRequest, ModelResponse};
    /// use tower_adk::interrupt::{Decision, Interrupt};
    ///
    /// /// Asks before every model call of a run that is over budget.
    /// struct Budget;
    ///
    /// impl Handler for Budget {
    ///     async fn wrap_model(&self, request: ModelRequest, next: ModelNext) -> Result<ModelResponse, BoxError> {
    ///         let over = request.messages.len() > 50;
    ///         if over && !request.decision().is_some_and(Decision::allows_call) {
    ///             return Err(Interrupt::new("The run is over budget: go on?").into());
    ///         }
    ///         next.run(request).await
    ///     }
    /// }
    /// ```
    pub fn decision(&self) -> Option<&Decision> {
        let answer = self.extensions().get::<HookAnswer>()?;
        Some(&answer.decision)
    }

    /// The names of the tools offered, in order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }
}

impl fmt::Debug for ModelRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelRequest")
            .field("messages", &self.messages)
            .field("tools", &self.tools)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}
