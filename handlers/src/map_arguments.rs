//! Transform a tool call's arguments before the tool sees them (a pre-transform).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use adk::{BoxError, Handler, ToolError, ToolRequest};
use adk::{ToolCallNext, ToolResponse};

use crate::revalidate::revalidate;

/// Transforms the arguments of each tool call. See [`map_arguments`].
///
/// # Example
///
/// ```
/// let handler: tower_adk::handlers::MapArguments = tower_adk::handlers::map_arguments(|_call| {});
/// # let _ = handler;
/// ```
#[derive(Clone)]
pub struct MapArguments {
    f: Arc<dyn Fn(&mut ToolRequest) + Send + Sync>,
}

/// A handler that changes each call's arguments (in `request.arguments`) before the
/// inner wrappers and the tool see them, for invoked and streamed calls alike, e.g. to
/// fill in defaults, normalise values, or put the caller's tenant from the run's
/// extensions into the arguments.
///
/// After the closure, the arguments are checked against the tool's schema again (even if
/// the agent does not validate the model's arguments); if they fail, the model sees an [`InvalidArguments`](adk::ToolErrorKind::InvalidArguments) error and
/// the tool is not called. To refuse a call, use a [policy](crate::policy).
///
/// # Order
///
/// Register it after a [`PolicyGate`](crate::PolicyGate) and before the tool wrappers,
/// or add it to a [`ToolGuard`](crate::ToolGuard), which runs pre-transforms after the
/// policy and before the inner wrappers by construction.
///
/// # Example
///
/// ```
/// use tower_adk::{Agent, AgentRequest};
/// use tower_adk::testing::{echo_tool, ScriptedModel, Turn};
/// use serde_json::json;
///
/// #[derive(Clone)]
/// struct Tenant(&'static str);
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([Turn::call("c1", "search", json!({"q": "tea"})), Turn::text("ok")]);
/// let agent = Agent::builder(model).tool(echo_tool("search")).build()?;
///
/// let scope = tower_adk::handlers::map_arguments(|call| {
///     let tenant = call.extensions().get::<Tenant>().map_or("none", |t| t.0);
///     if let Some(arguments) = call.arguments.as_object_mut() {
///         arguments.insert("tenant".into(), json!(tenant));
///     }
/// });
/// let request = AgentRequest::user("find tea").with_extension(Tenant("acme")).with_handler(scope);
/// let result = agent.run(request).await?;
///
/// // The echo tool answers with the arguments it received.
/// assert_eq!(result.tool_records[0].content, r#"{"q":"tea","tenant":"acme"}"#);
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub fn map_arguments<F>(f: F) -> MapArguments
where
    F: Fn(&mut ToolRequest) + Send + Sync + 'static,
{
    MapArguments { f: Arc::new(f) }
}

impl MapArguments {
    /// Changes the arguments, then checks them against the tool's schema.
    pub(crate) fn apply(&self, request: &mut ToolRequest) -> Result<(), ToolError> {
        (self.f)(request);
        revalidate(request, &request.arguments, "an argument transform")
    }
}

impl Handler for MapArguments {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("map_arguments")
    }

    async fn wrap_tool(
        &self,
        mut request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        self.apply(&mut request)?;
        next.run(request).await
    }
}

impl fmt::Debug for MapArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MapArguments").finish_non_exhaustive()
    }
}
