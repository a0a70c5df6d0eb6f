//! [`Judge`]: an LLM that scores an answer against a rubric, with a typed verdict.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tower::{BoxError, Service, ServiceExt};

use super::matcher::Check;
use crate::agent::{Agent, AgentBuilder, AgentRequest};
use crate::error::BuildError;
use crate::model::{ModelRequest, ModelResponse};
use crate::output::TypedAgent;

/// What a judge says of an answer: its typed output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Verdict {
    /// How well the answer meets the rubric, from 0 (not at all) to 1 (fully).
    pub score: f64,
    /// Why, in a sentence or two.
    pub reason: String,
}

/// The instruction a judge is given.
pub const INSTRUCTION: &str = "You grade the answers of an AI assistant. You are given a \
rubric, the conversation so far, and the assistant's answer to its last user message. \
Score how well the answer meets the rubric, from 0 (not at all) to 1 (fully), and say \
why in one or two sentences. Judge only by the rubric.";

/// An LLM judge: a model asked, for each answer a
/// [`ResponseMatcher::Judge`](super::ResponseMatcher::Judge) names, for a [`Verdict`]
/// (a typed answer, checked against its schema and asked again when invalid; see
/// [`output`](crate::output)).
///
/// # Example
///
/// ```
/// use serde_json::json;
/// use tower_adk::eval::Judge;
/// use tower_adk::testing::{ScriptedModel, Turn};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new([Turn::call("v", "final_answer", json!({"score": 0.75, "reason": "Asks one question."}))]);
/// let judge = Judge::new(model.clone())?;
/// let check = judge.score("Asks for the number of nights", &[("user", "A room in Paris")], "How many nights?").await;
/// assert_eq!(check.score, 0.75);
/// assert_eq!(check.detail, "Asks one question.");
/// assert!(model.requests()[0].messages[1].content().contains("Asks for the number of nights"));
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct Judge {
    agent: TypedAgent<Verdict>,
}

impl Judge {
    /// A judge on this model, with the default [`INSTRUCTION`].
    ///
    /// # Errors
    ///
    /// A [`BuildError`] from building its agent.
    pub fn new<M>(model: M) -> Result<Self, BuildError>
    where
        M: Service<ModelRequest, Response = ModelResponse> + Clone + Send + Sync + 'static,
        M::Error: Into<BoxError>,
        M::Future: Send + 'static,
    {
        Judge::from_builder(Agent::builder(model).instruction(INSTRUCTION))
    }

    /// A judge on this agent builder's model and settings (its instruction among them:
    /// give it one, e.g. [`INSTRUCTION`]).
    ///
    /// # Errors
    ///
    /// A [`BuildError`] from building its agent.
    pub fn from_builder(builder: AgentBuilder) -> Result<Self, BuildError> {
        Ok(Judge {
            agent: builder.name("judge").output::<Verdict>().build()?,
        })
    }

    /// Scores `answer` against `rubric`, given the conversation before it (`(role,
    /// text)` pairs). A judge that fails, or gives a score outside 0 to 1, scores 0
    /// and the check says why.
    pub async fn score(&self, rubric: &str, conversation: &[(&str, &str)], answer: &str) -> Check {
        let mut prompt = format!("Rubric:\n{rubric}\n\nConversation:\n");
        for (role, text) in conversation {
            prompt.push_str(&format!("{role}: {text}\n"));
        }
        prompt.push_str(&format!("\nAnswer to grade:\n{answer}"));
        match self.agent.clone().oneshot(AgentRequest::user(prompt)).await {
            Ok(typed) if (0.0..=1.0).contains(&typed.output.score) => {
                Check::new("judge", typed.output.score, typed.output.reason)
            }
            Ok(typed) => Check::new(
                "judge",
                0.0,
                format!("the judge's score {} is outside 0 to 1", typed.output.score),
            ),
            Err(error) => Check::new("judge", 0.0, format!("the judge failed: {error}")),
        }
    }
}
