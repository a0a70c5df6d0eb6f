//! `exit_if`: the conditions, written as Jinja expressions over `slots` (as in Rasa's
//! sub-agents), that end a slot-filling run.

use std::collections::BTreeMap;
use std::sync::Arc;

use adk_handlers::{Slot, SlotValue, SlotValues};
use minijinja::{Environment, Value};

use super::error::{Problem, ProblemKind};
use super::yaml::Spanned;

/// Conditions compiled and checked once; the run ends when any of them holds.
#[derive(Clone)]
pub(crate) struct ExitIf {
    environment: Arc<Environment<'static>>,
    conditions: Arc<[String]>,
    slots: Arc<[String]>,
}

impl ExitIf {
    /// Checks each condition: it must compile, and name only slots that exist
    /// (`slots.NAME`). Problems go to `problems`.
    pub(crate) fn new(
        conditions: &[Spanned<String>],
        slots: &[Slot],
        problems: &mut Vec<Problem>,
    ) -> Self {
        let mut environment = Environment::new();
        // Python's methods, as Jinja users write them: `slots.city.lower()`.
        environment
            .set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        let names: Vec<String> = slots.iter().map(|s| s.name().to_owned()).collect();
        for condition in conditions {
            let problem = |message: String| {
                Problem::new(ProblemKind::InvalidValue, condition.at, message)
                    .width(condition.width)
            };
            let expression = match environment.compile_expression(&condition.value) {
                Ok(expression) => expression,
                Err(error) => {
                    problems.push(problem(format!(
                        "`exit_if` condition does not compile: {error}"
                    )));
                    continue;
                }
            };
            // Nested names come as paths (`slots.city.lower` for `slots.city.lower()`):
            // the slot is the segment after `slots.`.
            let referenced: std::collections::BTreeSet<String> = expression
                .undeclared_variables(true)
                .into_iter()
                .map(|variable| match variable.strip_prefix("slots.") {
                    Some(path) => format!("slots.{}", path.split('.').next().unwrap_or(path)),
                    None => variable,
                })
                .collect();
            for variable in referenced {
                let Some(slot) = variable.strip_prefix("slots.") else {
                    if variable != "slots" {
                        let message = format!(
                            "`exit_if` conditions read `slots.NAME`; `{variable}` is not defined"
                        );
                        problems.push(problem(message));
                    }
                    continue;
                };
                if !names.iter().any(|n| n == slot) {
                    let message =
                        format!("`exit_if` names the slot `{slot}`, which is not defined");
                    problems.push(problem(message).with_choices(slot, names.clone()));
                }
            }
        }
        ExitIf {
            environment: Arc::new(environment),
            conditions: conditions.iter().map(|c| c.value.clone()).collect(),
            slots: names.into(),
        }
    }

    /// Whether any condition holds for these values; an unset slot is `none`. A
    /// condition that fails to evaluate does not hold.
    pub(crate) fn holds(&self, values: &SlotValues) -> bool {
        let slots: BTreeMap<&str, Value> = self
            .slots
            .iter()
            .map(|name| {
                (
                    name.as_str(),
                    values.get(name).map_or(Value::from(()), to_value),
                )
            })
            .collect();
        let context = minijinja::context! { slots => slots };
        self.conditions.iter().any(|condition| {
            self.environment
                .compile_expression(condition)
                .and_then(|expression| expression.eval(context.clone()))
                .is_ok_and(|value| value.is_true())
        })
    }
}

impl std::fmt::Debug for ExitIf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExitIf")
            .field("conditions", &self.conditions)
            .finish_non_exhaustive()
    }
}

fn to_value(value: &SlotValue) -> Value {
    if let Some(text) = value.as_str() {
        Value::from(text)
    } else if let Some(b) = value.as_bool() {
        Value::from(b)
    } else {
        value.as_f64().map_or(Value::from(()), Value::from)
    }
}
