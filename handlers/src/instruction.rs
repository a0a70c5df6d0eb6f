//! Set the run's instruction.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use adk::{AgentConfig, BoxError, Handler, RunContext};

/// Sets the instruction of every run to a fixed text. See [`instruction`].
#[derive(Debug, Clone)]
pub struct Instruction {
    text: Arc<str>,
}

/// A handler that sets the instruction of every run to `text`.
///
/// # Example
///
/// ```
/// let handler = tower_adk::handlers::instruction("You answer in French.");
/// # let _ = handler;
/// ```
pub fn instruction(text: impl Into<Arc<str>>) -> Instruction {
    Instruction { text: text.into() }
}

impl Handler for Instruction {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("instruction")
    }

    async fn before_agent(
        &self,
        _: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        config.set_instruction(Arc::clone(&self.text));
        Ok(config)
    }
}

/// Sets the instruction of each run from a closure. See [`instruction_fn`].
#[derive(Clone)]
pub struct InstructionFn<F> {
    f: F,
}

/// A handler that sets the instruction of each run from the run's extensions and the
/// instruction so far.
///
/// # Example
///
/// ```
/// #[derive(Clone)]
/// struct Tenant(&'static str);
///
/// let handler = tower_adk::handlers::instruction_fn(|ext, current| {
///     let tenant = ext.get::<Tenant>().map_or("unknown", |t| t.0);
///     format!("{current}\nYou work for {tenant}.")
/// });
/// # let _ = handler;
/// ```
pub fn instruction_fn<F>(f: F) -> InstructionFn<F>
where
    F: Fn(&http::Extensions, &str) -> String + Send + Sync + 'static,
{
    InstructionFn { f }
}

impl<F> Handler for InstructionFn<F>
where
    F: Fn(&http::Extensions, &str) -> String + Send + Sync + 'static,
{
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("instruction_fn")
    }

    async fn before_agent(
        &self,
        cx: &mut RunContext,
        mut config: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        let instruction = (self.f)(cx.extensions(), config.instruction());
        config.set_instruction(instruction);
        Ok(config)
    }
}

impl<F> fmt::Debug for InstructionFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InstructionFn").finish_non_exhaustive()
    }
}
