//! The check of each model reply of a typed run, and the retries: a `wrap_model` hook.

use std::borrow::Cow;
use std::sync::Arc;

use tower::BoxError;

use super::spec::{SharedSpec, Verdict};
use super::{InvalidOutput, OutputMode};
use crate::handler::Handler;
use crate::handler::ModelNext;
use crate::model::ModelError;
use crate::model::ModelRequest;
use crate::model::ModelResponse;
use crate::model::{ResponseFormat, ToolChoice};

/// Checks each reply of the model; a final answer that fails is given back to the model
/// with its problems, within this one model call, up to the retries. The history keeps
/// only the answer that passed: the failed attempts live in the call's own request.
#[derive(Clone)]
pub(crate) struct OutputCheck {
    spec: SharedSpec,
    /// The native mode's format, made once.
    format: Option<Arc<ResponseFormat>>,
}

impl OutputCheck {
    pub(crate) fn new(spec: SharedSpec, strict: bool) -> Self {
        let format = (spec.mode == OutputMode::Native).then(|| {
            let format = ResponseFormat::json_schema(&spec.name, spec.schema.clone());
            Arc::new(format.strict(strict))
        });
        OutputCheck { spec, format }
    }
}

impl Handler for OutputCheck {
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed("output")
    }

    async fn wrap_model(
        &self,
        mut request: ModelRequest,
        next: ModelNext,
    ) -> Result<ModelResponse, BoxError> {
        match self.spec.mode {
            OutputMode::Native => request.options.response_format = self.format.clone(),
            // The run ends only through the tool: the model must call one.
            OutputMode::Tool if request.options.tool_choice == ToolChoice::Auto => {
                request.options.tool_choice = ToolChoice::Required;
            }
            OutputMode::Tool => {}
        }
        let mut attempts = 0;
        loop {
            let reply = next.clone().run(request.clone()).await?;
            // A stream's failure is the model's, as it would be without the check.
            let reply = reply.into_message().await.map_err(as_model_error)?;
            attempts += 1;
            let (problems, feedback) = match self.spec.check(&reply) {
                Verdict::Pass => return Ok(ModelResponse::message(reply)),
                Verdict::Invalid(problems, feedback) => (problems, feedback),
            };
            if attempts > self.spec.retries {
                return Err(InvalidOutput { attempts, problems }.into());
            }
            let messages = request.messages.to_mut();
            messages.push(reply);
            messages.extend(feedback);
        }
    }
}

fn as_model_error(error: BoxError) -> BoxError {
    if error.is::<ModelError>() {
        error
    } else {
        ModelError::new(error).into()
    }
}
