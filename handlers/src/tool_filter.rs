//! Keep only the tools a closure allows.

use std::borrow::Cow;
use std::fmt;

use adk::{AgentConfig, BoxError, Handler, RunContext, Tool};

/// Filters the tools of each run. See [`filter_tools`].
#[derive(Clone)]
pub struct ToolFilter<F> {
    keep: F,
}

/// A handler that keeps, in each run, only the tools for which `keep` returns `true`,
/// given the run's extensions.
///
/// A removed tool is neither shown to the model nor executable in that run: a model that
/// calls it anyway gets an "unknown tool" result. Other runs are not affected, however
/// many run at the same time.
///
/// # Example
///
/// ```
/// #[derive(Clone)]
/// struct Scopes(Vec<String>);
///
/// // Only tools named in the caller's scopes.
/// let handler = tower_adk::handlers::filter_tools(|ext, tool| {
///     ext.get::<Scopes>().is_some_and(|s| s.0.iter().any(|n| n == tool.name()))
/// });
/// # let _ = handler;
/// ```
pub fn filter_tools<F>(keep: F) -> ToolFilter<F>
where
    F: Fn(&http::Extensions, &Tool) -> bool + Send + Sync + 'static,
{
    ToolFilter { keep }
}

impl<F> Handler for ToolFilter<F>
where
    F: Fn(&http::Extensions, &Tool) -> bool + Send + Sync + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("filter_tools")
    }

    async fn before_agent(
        &self,
        cx: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        let extensions = cx.extensions();
        config.retain_tools(|tool| (self.keep)(extensions, tool));
        Ok(config)
    }
}

impl<F> fmt::Debug for ToolFilter<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolFilter").finish_non_exhaustive()
    }
}
