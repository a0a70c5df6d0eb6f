//! Typed final answers: an agent whose run ends with a value of a Rust type.
//!
//! [`AgentBuilder::output::<T>()`](crate::AgentBuilder::output), for a `T` that derives
//! `serde::Deserialize` and `schemars::JsonSchema`, builds a [`TypedAgent<T>`]: a tower
//! service whose response is a [`TypedResult<T>`] holding the answer as a `T`, and the
//! run's result.
//!
//! - **The schema** is made from `T` once, when the agent is built, and reaches the model
//!   as a final-answer tool ([`OutputMode::Tool`], the default: a tool named
//!   `final_answer` whose arguments are the answer; calling it ends the run with them),
//!   or natively ([`OutputMode::Native`]: the model call's
//!   [`ResponseFormat`](crate::model::ResponseFormat), which the OpenAI provider sends as
//!   `response_format` with a JSON Schema; providers without it ignore it).
//! - **Strict** (the default): the schema is shown in OpenAI's strict form (every object
//!   closed with `additionalProperties: false`, every property required, the optional
//!   ones nullable; see [`tool::openai::strict_schema`](crate::tool::openai::strict_schema)), so a field
//!   the model may leave out should be an `Option` (it comes as `null`). The answer is
//!   checked against the schema as shown.
//! - **The check**: each answer is checked against the schema (with the `validation`
//!   feature, on by default) and deserialized into `T`. An answer that fails is given
//!   back to the model with each problem's path and reason (in tool mode as the tool
//!   call's error result, in native mode as a user message), and the model answers
//!   again, up to [`retries`](OutputBuilder::retries) times (default
//!   [`DEFAULT_RETRIES`]). Then the run fails with [`OutputError::Invalid`], which holds
//!   the last answer's [`Problem`]s.
//!
//! The retries happen inside the turn's model call (a `wrap_model` hook, innermost): the
//! history keeps only the answer that passed, each attempt counts in
//! [`AgentResult::model_calls`](crate::AgentResult::model_calls), and none counts
//! against the iteration limit. A reply is checked whole, so each reply of a typed run
//! reaches the caller as one text delta.
//!
//! # Example
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//! use tower::ServiceExt;
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use tower_adk::{Agent, AgentRequest};
//!
//! #[derive(Debug, Deserialize, JsonSchema)]
//! struct Weather {
//!     city: String,
//!     celsius: f64,
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let model = ScriptedModel::new([
//!     // A string where a number belongs: the model is told, and answers again.
//!     Turn::call("c1", "final_answer", json!({"city": "Oslo", "celsius": "cold"})),
//!     Turn::call("c2", "final_answer", json!({"city": "Oslo", "celsius": -3.5})),
//! ]);
//! let agent = Agent::builder(model.clone()).output::<Weather>().build()?;
//!
//! let answer = agent.oneshot(AgentRequest::user("Weather in Oslo?")).await?;
//! assert_eq!(answer.output.celsius, -3.5);
//! let retry = &model.requests()[1].messages;
//! assert!(retry.last().unwrap().content().contains("at `/celsius`"));
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod agent;
mod check;
mod error;
mod spec;

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

pub use self::agent::{TypedAgent, TypedFuture, TypedResult};
use self::check::OutputCheck;
pub use self::error::{InvalidOutput, OutputError, Problem};
pub use self::spec::OutputMode;
use self::spec::Spec;
use crate::agent::AgentBuilder;
use crate::error::BuildError;
use crate::tool::openai::strict_schema;
use crate::tool::typed::arguments_schema;

impl AgentBuilder {
    /// Makes the agent's runs end with a typed answer, a `T`: the schema of `T` reaches
    /// the model (as a final-answer tool, or natively), each answer is checked and, if
    /// invalid, given back to the model with its problems. Finish with
    /// [`OutputBuilder::build`], which gives a
    /// [`TypedAgent<T>`](TypedAgent). See [`output`](self).
    pub fn output<T>(self) -> OutputBuilder<T>
    where
        T: JsonSchema + DeserializeOwned,
    {
        OutputBuilder::new(self)
    }
}

/// How many times, by default, an invalid answer is given back to the model.
pub const DEFAULT_RETRIES: usize = 2;

/// The default name of the final-answer tool (and of the schema, in native mode).
pub const DEFAULT_NAME: &str = "final_answer";

/// The default description of the final-answer tool.
pub const DEFAULT_DESCRIPTION: &str =
    "Gives your final answer. Call it once, with the whole answer, when you are done.";

/// Builds a [`TypedAgent`]; see [`AgentBuilder::output`](crate::AgentBuilder::output)
/// and the [module docs](self).
pub struct OutputBuilder<T> {
    agent: AgentBuilder,
    mode: OutputMode,
    retries: usize,
    name: String,
    description: String,
    strict: bool,
    _output: PhantomData<fn() -> T>,
}

impl<T: JsonSchema + DeserializeOwned> OutputBuilder<T> {
    pub(crate) fn new(agent: AgentBuilder) -> Self {
        OutputBuilder {
            agent,
            mode: OutputMode::default(),
            retries: DEFAULT_RETRIES,
            name: DEFAULT_NAME.to_owned(),
            description: DEFAULT_DESCRIPTION.to_owned(),
            strict: true,
            _output: PhantomData,
        }
    }

    /// How the schema reaches the model (default [`OutputMode::Tool`]).
    pub fn mode(mut self, mode: OutputMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sends the schema natively, as the model call's response format: for providers
    /// that support it (the OpenAI provider). The same as `mode(OutputMode::Native)`.
    pub fn native(self) -> Self {
        self.mode(OutputMode::Native)
    }

    /// How many times an invalid answer is given back to the model before the run fails
    /// with [`OutputError::Invalid`] (default [`DEFAULT_RETRIES`]; 0: never).
    pub fn retries(mut self, retries: usize) -> Self {
        self.retries = retries;
        self
    }

    /// The name of the final-answer tool, or of the schema in native mode (default
    /// [`DEFAULT_NAME`]).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The description of the final-answer tool (default [`DEFAULT_DESCRIPTION`]).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Whether the schema is shown, and answers are checked, in strict form (default:
    /// yes; see the [module docs](self)).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Builds the agent.
    ///
    /// # Errors
    ///
    /// Those of [`AgentBuilder::build`]; a name outside `^[a-zA-Z0-9_-]{1,64}$`; in tool
    /// mode a tool of the agent with the final-answer tool's name; a schema of `T` that
    /// is not a valid JSON Schema.
    pub fn build(self) -> Result<TypedAgent<T>, BuildError> {
        crate::tool::check_name(&self.name)?;
        let schema = arguments_schema::<T>();
        let schema = if self.strict {
            strict_schema(schema)
        } else {
            schema
        };
        let name = self.name.clone();
        let spec = Spec::new(self.mode, self.name, schema, self.retries, spec::fits::<T>);
        let spec =
            Arc::new(spec.map_err(|reason| BuildError::InvalidSchema { tool: name, reason })?);
        let mut agent = self.agent;
        if spec.mode == OutputMode::Tool {
            agent = agent.tool(spec.tool(&self.description, self.strict));
        }
        let check = OutputCheck::new(Arc::clone(&spec), self.strict);
        Ok(TypedAgent::new(agent.build()?, check))
    }
}

impl<T> fmt::Debug for OutputBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputBuilder")
            .field("agent", &self.agent)
            .field("output", &std::any::type_name::<T>())
            .field("mode", &self.mode)
            .field("retries", &self.retries)
            .field("name", &self.name)
            .field("strict", &self.strict)
            .finish_non_exhaustive()
    }
}
