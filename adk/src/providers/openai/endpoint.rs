//! One HTTP call to an OpenAI server, as every OpenAI model makes it ([`Endpoint::call`]):
//! the JSON body posted to its endpoint, an error status read into an [`OpenAiError`], and
//! the reply read into a [`ModelResponse`], as a stream of server-sent events (by the
//! model's decoder) or whole (by the model's parser), its usage recorded in the request's
//! meter and reported under the model's name.

use futures::TryStreamExt;

use super::error::OpenAiError;
use crate::message::Message;
use crate::model::ModelResponse;
use crate::model::{Usage, UsageMeter};
use crate::providers::http::{self, ProviderError};
use crate::providers::sse::{Decode, DeltaStream};

/// Where a model's requests go: the HTTP client (and its connection pool), the URL, and
/// the model name sent with every request.
#[derive(Debug)]
pub(super) struct Endpoint {
    pub(super) client: reqwest::Client,
    pub(super) url: reqwest::Url,
    pub(super) model: String,
}

/// A reply whose head has arrived.
enum Reply {
    /// Server-sent events (`text/event-stream`), still coming.
    Events(reqwest::Response),
    /// A whole body.
    Whole(Vec<u8>),
}

impl Endpoint {
    /// Posts `body` (JSON) and reads the reply: a stream with `decoder`, a whole body
    /// with `whole` (the message and the usage it reports).
    pub(super) async fn call<D>(
        &self,
        body: Vec<u8>,
        meter: Option<UsageMeter>,
        decoder: D,
        whole: impl FnOnce(&[u8]) -> Result<(Message, Option<Usage>), OpenAiError>,
    ) -> Result<ModelResponse, OpenAiError>
    where
        D: Decode<Error = OpenAiError> + Send + 'static,
    {
        match self.send(body).await? {
            Reply::Events(response) => Ok(streamed(response, decoder, meter, &self.model)),
            Reply::Whole(body) => {
                let (message, usage) = whole(&body)?;
                Ok(self::whole(message, usage, meter, &self.model))
            }
        }
    }

    /// Posts `body`, JSON; an error status becomes its [`OpenAiError`] (with the
    /// server's message and the wait it asked for).
    async fn send(&self, body: Vec<u8>) -> Result<Reply, OpenAiError> {
        let response = http::post::<OpenAiError>(&self.client, &self.url, body).await?;
        if http::is_event_stream(&response) {
            return Ok(Reply::Events(response));
        }
        let body = response.bytes().await.map_err(OpenAiError::from_body)?;
        // Without a copy when the body came in one piece.
        Ok(Reply::Whole(Vec::from(body)))
    }
}

/// A streamed reply read by `decoder`; its usage goes to the meter and is reported under
/// the model's name.
fn streamed<D>(
    response: reqwest::Response,
    decoder: D,
    meter: Option<UsageMeter>,
    model: &str,
) -> ModelResponse
where
    D: Decode<Error = OpenAiError> + Send + 'static,
{
    let body = response.bytes_stream().map_err(OpenAiError::from_body);
    let deltas = DeltaStream::new(body, decoder, meter, Some(model.to_owned()));
    ModelResponse::stream(deltas)
}

/// A whole reply; its usage, if the server gave it, goes to the meter and is reported
/// under the model's name.
fn whole(
    message: Message,
    usage: Option<Usage>,
    meter: Option<UsageMeter>,
    model: &str,
) -> ModelResponse {
    let Some(usage) = usage else {
        return ModelResponse::message(message);
    };
    if let Some(meter) = meter {
        meter.record(usage);
    }
    ModelResponse::message(message).with_usage(Some(model.to_owned()), usage)
}
