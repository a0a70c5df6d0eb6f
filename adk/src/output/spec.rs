//! What a typed agent expects of its final answer: the schema, how it is asked for, and
//! the check that an answer passes or fails with [`Problem`]s.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Problem;
use crate::message::Message;
use crate::tool::Finish;
use crate::tool::Tool;
use crate::tool::ToolInfo;
use crate::tool::ToolOutput;
use crate::tool::ToolRequest;

/// How the schema of the final answer reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OutputMode {
    /// As a final-answer tool whose arguments are the answer: calling it ends the run
    /// with them. Works with every model that calls tools.
    #[default]
    Tool,
    /// As the model call's [`ResponseFormat`](crate::model::ResponseFormat): the model
    /// answers in text, JSON that matches the schema. Providers that support it hold the
    /// model to the schema (the OpenAI provider sends `response_format`); with the
    /// others, the check and the retries are all there is.
    Native,
}

/// The final answer's schema and check, shared by the agent's runs.
pub(crate) struct Spec {
    pub(crate) mode: OutputMode,
    pub(crate) name: String,
    pub(crate) schema: Value,
    pub(crate) retries: usize,
    #[cfg(feature = "validation")]
    validator: jsonschema::Validator,
    /// Whether a value deserializes into the output type (its message if not).
    fits: fn(&Value) -> Result<(), String>,
}

/// Whether `value` deserializes into `T`.
pub(crate) fn fits<T: DeserializeOwned>(value: &Value) -> Result<(), String> {
    T::deserialize(value).map(drop).map_err(|e| e.to_string())
}

/// What a reply is, to the check.
pub(crate) enum Verdict {
    /// A final answer that passed, or a turn that is not a final answer (it calls tools).
    Pass,
    /// A final answer that failed: its problems, and what to tell the model after it.
    Invalid(Vec<Problem>, Vec<Message>),
}

impl Spec {
    pub(crate) fn new(
        mode: OutputMode,
        name: String,
        schema: Value,
        retries: usize,
        fits: fn(&Value) -> Result<(), String>,
    ) -> Result<Self, String> {
        Ok(Spec {
            #[cfg(feature = "validation")]
            validator: jsonschema::validator_for(&schema).map_err(|e| e.to_string())?,
            mode,
            name,
            schema,
            retries,
            fits,
        })
    }

    /// The final-answer tool: its arguments are the answer, and calling it ends the run
    /// with them as the final message.
    pub(crate) fn tool(&self, description: &str, strict: bool) -> Tool {
        let info = ToolInfo::new(&self.name, description);
        let info = if strict { info.strict() } else { info };
        Tool::from_fn(
            info.parameters(self.schema.clone()),
            |request: ToolRequest| {
                let answer = request.arguments.to_string();
                let finish = Finish::With(Message::assistant(answer.clone()));
                std::future::ready(Ok::<_, std::convert::Infallible>(
                    ToolOutput::new(answer).finishing(finish),
                ))
            },
        )
    }

    /// Checks one model reply.
    pub(crate) fn check(&self, reply: &Message) -> Verdict {
        match self.mode {
            OutputMode::Native if !reply.tool_calls().is_empty() => Verdict::Pass,
            OutputMode::Native => match self.problems(reply.content()) {
                None => Verdict::Pass,
                Some(problems) => {
                    let feedback = Message::user(format!(
                        "Your answer does not match the required JSON schema:\n{}\n\
                         Answer again with only the corrected JSON.",
                        list(&problems)
                    ));
                    Verdict::Invalid(problems, vec![feedback])
                }
            },
            OutputMode::Tool => self.check_call(reply),
        }
    }

    /// The tool mode's check: the final-answer call's arguments, or its absence.
    fn check_call(&self, reply: &Message) -> Verdict {
        let calls = reply.tool_calls();
        let Some(answer) = calls.iter().find(|c| c.name == self.name) else {
            if !calls.is_empty() {
                return Verdict::Pass;
            }
            let problem = Problem::new("/", format!("no final answer: call `{}`", self.name));
            let feedback = Message::user(format!(
                "Give your final answer by calling the `{}` tool.",
                self.name
            ));
            return Verdict::Invalid(vec![problem], vec![feedback]);
        };
        let Some(problems) = self.problems(&answer.arguments) else {
            return Verdict::Pass;
        };
        // Every call of the reply is answered, so the history the model sees is whole.
        let feedback = calls
            .iter()
            .map(|call| {
                let text = if call.id == answer.id {
                    format!(
                        "error (invalid arguments):\n{}\nCall `{}` again with the corrected answer.",
                        list(&problems),
                        self.name
                    )
                } else {
                    "error (not run): the final answer was invalid; nothing was run".to_owned()
                };
                Message::tool_error(call.id.clone(), call.name.clone(), text)
            })
            .collect();
        Verdict::Invalid(problems, feedback)
    }

    /// What is wrong with an answer's JSON text; `None` if nothing is.
    fn problems(&self, text: &str) -> Option<Vec<Problem>> {
        let value: Value = match serde_json::from_str(strip_fence(text)) {
            Ok(value) => value,
            Err(e) => return Some(vec![Problem::new("/", format!("not JSON: {e}"))]),
        };
        #[cfg(feature = "validation")]
        if !self.validator.is_valid(&value) {
            let problems = self.validator.iter_errors(&value).map(|error| {
                let path = error.instance_path().as_str();
                let path = if path.is_empty() { "/" } else { path };
                Problem::new(path, crate::tool::validation::reason(&error))
            });
            return Some(problems.collect());
        }
        (self.fits)(&value)
            .err()
            .map(|reason| vec![Problem::new("/", reason)])
    }
}

/// The answer's JSON text without a Markdown code fence around it (models that are not
/// held to the schema often add one).
pub(crate) fn strip_fence(text: &str) -> &str {
    let text = text.trim();
    let Some(inner) = text.strip_prefix("```").and_then(|t| t.strip_suffix("```")) else {
        return text;
    };
    // Skip the info string (`json`) on the fence's first line.
    inner
        .split_once('\n')
        .map_or(inner, |(_, body)| body)
        .trim()
}

/// The problems as a list, one per line.
fn list(problems: &[Problem]) -> String {
    let lines: Vec<String> = problems.iter().map(|p| format!("- {p}")).collect();
    lines.join("\n")
}

/// Shared between the agent and the check handler of each run.
pub(crate) type SharedSpec = Arc<Spec>;
