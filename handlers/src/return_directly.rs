//! Make tools end the run with their result.

use std::borrow::Cow;

use adk::{AgentConfig, BoxError, Handler, RunContext};

/// Marks tools as return-directly in every run. See [`return_directly`].
#[derive(Debug, Clone)]
pub struct ReturnDirectly {
    names: Vec<String>,
}

/// A handler that makes calls of these tools end the run with their result.
///
/// The first return-directly tool of an agent makes its runs use the loop variant that
/// can end after the tools step; the agent compiles it once.
///
/// # Example
///
/// ```
/// let handler = tower_adk::handlers::return_directly(["final_answer"]);
/// # let _ = handler;
/// ```
pub fn return_directly<I, S>(names: I) -> ReturnDirectly
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    ReturnDirectly {
        names: names.into_iter().map(Into::into).collect(),
    }
}

impl Handler for ReturnDirectly {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("return_directly")
    }

    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        for name in &self.names {
            config.set_return_directly(name.as_str(), true);
        }
        Ok(config)
    }
}
