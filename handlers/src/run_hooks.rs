//! Closures at the start and at the end of each run: `before_agent` and `after_agent`.

use std::borrow::Cow;
use std::fmt;

use adk::{AgentConfig, BoxError, Handler, History, RunContext};

/// Runs a closure at the start of each run. See [`before_agent`].
#[derive(Clone)]
pub struct BeforeAgentFn<F> {
    f: F,
}

/// Runs a closure when each run ends successfully. See [`after_agent`].
#[derive(Clone)]
pub struct AfterAgentFn<F> {
    f: F,
}

/// A handler that rewrites each run's configuration (instruction, tools, return-directly
/// set) with a closure, once, at the start of the run; the closure sees the run context:
/// the request's extensions and the run-local values.
///
/// ([`instruction_fn`](crate::instruction_fn), [`filter_tools`](crate::filter_tools) and
/// [`add_tools`](crate::add_tools) are the common cases in one line.)
///
/// # Example
///
/// ```
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::{handlers, Agent, AgentRequest};
///
/// #[derive(Clone)]
/// struct Tenant(&'static str);
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let per_tenant = handlers::before_agent(|cx, mut config| {
///     let tenant = cx.extensions().get::<Tenant>().ok_or("no tenant")?.0;
///     config.set_instruction(format!("You serve {tenant}."));
///     cx.locals_mut().insert("tenant", tenant)?;
///     Ok(config)
/// });
/// let model = ScriptedModel::new([Turn::text("hi")]);
/// let agent = Agent::builder(model.clone()).build()?;
///
/// let request = AgentRequest::user("hi").with_extension(Tenant("acme")).with_handler(per_tenant);
/// let result = agent.run(request).await?;
/// assert_eq!(model.requests()[0].messages[0].content(), "You serve acme.");
/// assert_eq!(result.locals.get::<String>("tenant")?.as_deref(), Some("acme"));
/// # Ok::<_, tower_adk::BoxError>(())
/// # }).unwrap();
/// ```
pub fn before_agent<F>(f: F) -> BeforeAgentFn<F>
where
    F: Fn(&mut RunContext, AgentConfig) -> Result<AgentConfig, BoxError> + Send + Sync + 'static,
{
    BeforeAgentFn { f }
}

/// A handler that runs a closure when each run ends successfully, with the run context
/// and the final history (which it may still rewrite), e.g. to record what the run did.
///
/// # Example
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use tower_adk::testing::{ScriptedModel, Turn};
/// use tower_adk::{handlers, Agent, AgentRequest};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let lengths = Arc::new(Mutex::new(Vec::new()));
/// let seen = Arc::clone(&lengths);
/// let audit = handlers::after_agent(move |_cx, history| {
///     seen.lock().map_err(|_| "poisoned")?.push(history.messages.len());
///     Ok(())
/// });
/// let agent = Agent::builder(ScriptedModel::new([Turn::text("hi")])).build()?;
///
/// agent.run(AgentRequest::user("hello").with_handler(audit)).await?;
/// assert_eq!(*lengths.lock().unwrap(), [2]); // the user's message and the reply
/// # Ok::<_, tower_adk::BoxError>(())
/// # }).unwrap();
/// ```
pub fn after_agent<F>(f: F) -> AfterAgentFn<F>
where
    F: Fn(&mut RunContext, &mut History) -> Result<(), BoxError> + Send + Sync + 'static,
{
    AfterAgentFn { f }
}

impl<F> Handler for BeforeAgentFn<F>
where
    F: Fn(&mut RunContext, AgentConfig) -> Result<AgentConfig, BoxError> + Send + Sync + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("before_agent")
    }

    async fn before_agent(
        &self,
        cx: &mut RunContext,
        config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        (self.f)(cx, config)
    }
}

impl<F> Handler for AfterAgentFn<F>
where
    F: Fn(&mut RunContext, &mut History) -> Result<(), BoxError> + Send + Sync + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("after_agent")
    }

    async fn after_agent(
        &self,
        cx: &mut RunContext,
        history: &mut History,
    ) -> Result<(), BoxError> {
        (self.f)(cx, history)
    }
}

impl<F> fmt::Debug for BeforeAgentFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BeforeAgentFn").finish_non_exhaustive()
    }
}

impl<F> fmt::Debug for AfterAgentFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AfterAgentFn").finish_non_exhaustive()
    }
}
