//! What the HTTP providers share: their client (default headers, timeouts), the endpoint
//! checked, one call to it read into a [`ModelResponse`] ([`Endpoint::call`]: a stream of
//! server-sent events by the model's decoder, or a whole reply by its parser, the usage
//! recorded), one POST whose error status becomes the provider's error ([`ProviderError`]),
//! and, about failed calls, the server's message and code from an error body, the wait a
//! `retry-after` header asks for, and excerpts of bodies kept in errors.

use std::error::Error as StdError;
use std::time::Duration;

use futures::TryStreamExt;
use http::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use http::{HeaderMap, StatusCode};

use crate::message::Message;
use crate::model::ModelResponse;
use crate::model::{Usage, UsageMeter};
use crate::providers::sse::{Decode, DeltaStream, SseError};

/// How a provider's error is made from what can fail in an HTTP call.
pub(crate) trait ProviderError: Sized {
    /// The connect or read timeout passed.
    fn timeout(error: reqwest::Error) -> Self;
    /// The request failed before a response arrived.
    fn request(error: reqwest::Error) -> Self;
    /// The connection dropped while the body came in.
    fn dropped(error: reqwest::Error) -> Self;
    /// The server answered with an error status.
    fn response(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self;
    /// The stream ended cleanly before the reply said it was complete.
    fn incomplete() -> Self;
    /// The response (or the stream's framing) is not what the API sends: why, and the
    /// body's excerpt.
    fn malformed(reason: String, body: String) -> Self;

    /// The error of a response that is not what the API sends: why, and the body (of
    /// which an excerpt is kept).
    fn malformed_response(reason: impl Into<String>, body: &[u8]) -> Self {
        Self::malformed(reason.into(), excerpt(&String::from_utf8_lossy(body)))
    }

    /// The error of a stream of server-sent events that could not be read.
    fn from_sse(error: SseError) -> Self {
        match error {
            SseError::Incomplete => Self::incomplete(),
            SseError::EventTooLong { start } => {
                Self::malformed("an event longer than 8 MiB".to_owned(), excerpt(&start))
            }
        }
    }

    /// The error of a request that failed before its response arrived.
    fn from_send(error: reqwest::Error) -> Self {
        if error.is_timeout() {
            Self::timeout(error)
        } else {
            Self::request(error)
        }
    }

    /// The error of a response body that could not be read to its end.
    fn from_body(error: reqwest::Error) -> Self {
        if error.is_timeout() {
            Self::timeout(error)
        } else {
            Self::dropped(error)
        }
    }
}

/// Where a model's requests go: the HTTP client (and its connection pool), the URL, and
/// the model name sent with every request.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) client: reqwest::Client,
    pub(crate) url: reqwest::Url,
    pub(crate) model: String,
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
    pub(crate) async fn call<E, D>(
        &self,
        body: Vec<u8>,
        meter: Option<UsageMeter>,
        decoder: D,
        whole: impl FnOnce(&[u8]) -> Result<(Message, Option<Usage>), E>,
    ) -> Result<ModelResponse, E>
    where
        E: ProviderError + StdError + Send + Sync + 'static,
        D: Decode<Error = E> + Send + 'static,
    {
        match self.send::<E>(body).await? {
            Reply::Events(response) => Ok(streamed(response, decoder, meter, &self.model)),
            Reply::Whole(body) => {
                let (message, usage) = whole(&body)?;
                Ok(self::whole(message, usage, meter, &self.model))
            }
        }
    }

    /// Posts `body`, JSON; an error status becomes the provider's error (with the
    /// server's message and the wait it asked for).
    async fn send<E: ProviderError>(&self, body: Vec<u8>) -> Result<Reply, E> {
        let response = post::<E>(&self.client, &self.url, body).await?;
        if is_event_stream(&response) {
            return Ok(Reply::Events(response));
        }
        let body = response.bytes().await.map_err(E::from_body)?;
        // Without a copy when the body came in one piece.
        Ok(Reply::Whole(Vec::from(body)))
    }
}

/// A streamed reply read by `decoder`; its usage goes to the meter and is reported under
/// the model's name.
fn streamed<E, D>(
    response: reqwest::Response,
    decoder: D,
    meter: Option<UsageMeter>,
    model: &str,
) -> ModelResponse
where
    E: ProviderError + StdError + Send + Sync + 'static,
    D: Decode<Error = E> + Send + 'static,
{
    let body = response.bytes_stream().map_err(E::from_body);
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

/// POSTs `body`, JSON already written; an error status becomes the provider's error, with
/// the server's message (read from the body) and the wait it asked for.
pub(crate) async fn post<E: ProviderError>(
    client: &reqwest::Client,
    url: &reqwest::Url,
    body: Vec<u8>,
) -> Result<reqwest::Response, E> {
    let request = client
        .post(url.clone())
        .header(CONTENT_TYPE, "application/json");
    let response = (request.body(body).send().await).map_err(E::from_send)?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let headers = response.headers().clone();
    // A body that cannot be read still leaves the status to report.
    let body = response.bytes().await.unwrap_or_default();
    Err(E::response(status, &headers, &body))
}

/// Whether a response is a stream of server-sent events (else a whole JSON reply).
pub(crate) fn is_event_stream(response: &reqwest::Response) -> bool {
    (response.headers().get(CONTENT_TYPE))
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"))
}

/// The first `E` in an error's chain of sources (the error itself included).
pub(crate) fn find<'a, E: StdError + 'static>(
    error: &'a (dyn StdError + 'static),
) -> Option<&'a E> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(found) = error.downcast_ref::<E>() {
            return Some(found);
        }
        next = error.source();
    }
    None
}

/// A header, checked: `Err((name, reason))` when the name or value is not valid in HTTP.
/// A sensitive value (a key) is left out of debug output.
pub(crate) fn header(
    name: &str,
    value: &str,
    sensitive: bool,
) -> Result<(HeaderName, HeaderValue), (String, String)> {
    let invalid = |reason: String| (name.to_owned(), reason);
    let header = HeaderName::from_bytes(name.as_bytes()).map_err(|e| invalid(e.to_string()))?;
    let mut value = HeaderValue::from_str(value).map_err(|e| invalid(e.to_string()))?;
    value.set_sensitive(sensitive);
    Ok((header, value))
}

/// A client that sends these headers with every request, with these timeouts.
pub(crate) fn client(
    headers: HeaderMap,
    connect_timeout: Option<Duration>,
    read_timeout: Option<Duration>,
) -> Result<reqwest::Client, reqwest::Error> {
    let mut client = reqwest::Client::builder().default_headers(headers);
    if let Some(timeout) = connect_timeout {
        client = client.connect_timeout(timeout);
    }
    if let Some(timeout) = read_timeout {
        client = client.read_timeout(timeout);
    }
    client.build()
}

/// `url` parsed, if it is an `http` or `https` URL; else why not.
pub(crate) fn endpoint(url: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("the scheme must be http or https".to_owned());
    }
    Ok(url)
}

/// The longest piece of a body or chunk kept in an error.
const EXCERPT: usize = 1000;

/// The server's message and code from an error body: OpenAI's
/// `{"error": {"message", "code", "type"}}`, `{"error": "..."}`, `{"message": ...}`,
/// FastAPI's `{"detail": ...}`, or the body as text. `None` for an empty body.
#[cfg(any(feature = "openai", feature = "anthropic"))]
pub(crate) fn server_message(body: &str) -> (Option<String>, Option<String>) {
    use serde_json::Value;
    let body = body.trim();
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return ((!body.is_empty()).then(|| excerpt(body)), None);
    };
    let error = value.get("error").unwrap_or(&value);
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    };
    let message = match error {
        Value::String(s) => Some(s.clone()),
        Value::Object(map) => ["message", "detail", "msg"]
            .iter()
            .find_map(|key| map.get(*key).and_then(text)),
        _ => None,
    };
    let code = ["code", "type"]
        .iter()
        .find_map(|key| error.get(*key).and_then(text));
    (
        Some(excerpt(&message.unwrap_or_else(|| error.to_string()))),
        code,
    )
}

/// The wait a server asked for: `retry-after-ms` (OpenAI's, in milliseconds) or
/// `retry-after` in seconds. The HTTP-date form of `retry-after` is not read.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let value = headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()?;
        (value.is_finite() && value >= 0.0).then_some(value)
    };
    let seconds = number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"))?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// The start of a text, cut on a character boundary.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::excerpt;

    #[test]
    #[cfg(any(feature = "openai", feature = "anthropic"))]
    fn the_message_and_code_come_from_the_error_object() {
        use super::server_message;

        let body =
            r#"{"error": {"message": "Invalid key", "type": "auth", "code": "invalid_api_key"}}"#;
        assert_eq!(
            server_message(body),
            (Some("Invalid key".into()), Some("invalid_api_key".into()))
        );
        assert_eq!(
            server_message(r#"{"error": "model not loaded"}"#),
            (Some("model not loaded".into()), None)
        );
        assert_eq!(
            server_message(r#"{"detail": "Not Found"}"#),
            (Some("Not Found".into()), None)
        );
        assert_eq!(
            server_message("upstream connect error"),
            (Some("upstream connect error".into()), None)
        );
        assert_eq!(server_message("  "), (None, None));
    }

    #[test]
    fn a_long_body_is_cut_on_a_character_boundary() {
        let long = "é".repeat(3000);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), 1001);
        assert!(cut.ends_with('…'));
    }
}
