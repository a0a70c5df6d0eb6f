//! One agent's JSON-RPC endpoint: a method called and its result read whole, or a
//! streaming method's server-sent events read as they come; every failure an
//! [`A2aError`].

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use futures::{Stream, StreamExt};
use http::header::{ACCEPT, CONTENT_TYPE};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::A2aError;
use crate::a2a::{JsonRpcRequest, JsonRpcResponse, PROTOCOL_VERSION, StreamResponse};
use crate::providers::sse::{SseError, SseParser};

/// The header that names the protocol version a request speaks; without it an A2A 1.0
/// server takes the request for 0.3.
pub(crate) const VERSION_HEADER: &str = "A2A-Version";

/// The most bytes of a whole answer read (a stream's events are bounded one by one).
const MAX_BODY: usize = 16 * 1024 * 1024;

/// How many characters of a body an error keeps.
const EXCERPT: usize = 200;

/// Where an agent's JSON-RPC requests go.
#[derive(Debug)]
pub(crate) struct Endpoint {
    /// The agent's name, for errors.
    pub(crate) agent: String,
    pub(crate) url: reqwest::Url,
    /// Carries the headers and the connect and idle timeouts.
    pub(crate) client: reqwest::Client,
    /// How long a whole answer, or the next event of a stream, may take.
    pub(crate) timeout: Duration,
    ids: AtomicI64,
}

impl Endpoint {
    pub(crate) fn new(
        agent: String,
        url: reqwest::Url,
        client: reqwest::Client,
        timeout: Duration,
    ) -> Self {
        Endpoint {
            agent,
            url,
            client,
            timeout,
            ids: AtomicI64::new(1),
        }
    }

    /// Calls `method` and reads its result whole, within the timeout.
    pub(crate) async fn call<P, R>(&self, method: &'static str, params: P) -> Result<R, A2aError>
    where
        P: Serialize,
        R: DeserializeOwned,
    {
        self.call_within(method, params, self.timeout).await
    }

    /// Calls `method` and reads its result whole, within `limit`.
    pub(crate) async fn call_within<P, R>(
        &self,
        method: &'static str,
        params: P,
        limit: Duration,
    ) -> Result<R, A2aError>
    where
        P: Serialize,
        R: DeserializeOwned,
    {
        let answer = async {
            let response = self.post(method, params, "application/json").await?;
            let body = self.body(method, response).await?;
            self.result(method, &body)
        };
        tokio::time::timeout(limit, answer)
            .await
            .unwrap_or_else(|_| Err(self.timed_out("an answer", limit)))
    }

    /// Calls a streaming `method`: its events, each read within the timeout. A server
    /// that answers with JSON instead of events (an error, or one result) gives that.
    pub(crate) fn stream<P>(
        self: &Arc<Self>,
        method: &'static str,
        params: P,
    ) -> impl Stream<Item = Result<StreamResponse, A2aError>> + Send + 'static
    where
        P: Serialize + Send + 'static,
    {
        let endpoint = Arc::clone(self);
        async_stream::try_stream! {
            let limit = endpoint.timeout;
            let response = tokio::time::timeout(limit, endpoint.post(method, params, "text/event-stream"))
                .await
                .unwrap_or_else(|_| Err(endpoint.timed_out("the stream to start", limit)))?;
            let is_events = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            if !is_events {
                let body = endpoint.body(method, response).await?;
                yield endpoint.result::<StreamResponse>(method, &body)?;
                return;
            }
            let mut bytes = response.bytes_stream();
            let mut parser = SseParser::new();
            loop {
                while let Some(event) = parser.next_event().map_err(|e| endpoint.sse(method, e))? {
                    if event.data().trim().is_empty() {
                        continue;
                    }
                    let data = event.data().to_owned();
                    yield endpoint.result::<StreamResponse>(method, data.as_bytes())?;
                }
                let next = tokio::time::timeout(limit, bytes.next())
                    .await
                    .map_err(|_| endpoint.timed_out("the next event", limit))?;
                match next {
                    Some(chunk) => parser.feed(&chunk.map_err(|e| endpoint.dropped(method, e))?),
                    None => break,
                }
            }
            if let Some(event) = parser.finish() {
                let data = event.data().to_owned();
                if !data.trim().is_empty() {
                    yield endpoint.result::<StreamResponse>(method, data.as_bytes())?;
                }
            }
        }
    }

    /// Sends the request; an error status is an error.
    async fn post<P: Serialize>(
        &self,
        method: &'static str,
        params: P,
        accept: &'static str,
    ) -> Result<reqwest::Response, A2aError> {
        let id = self.ids.fetch_add(1, Ordering::Relaxed);
        let request = JsonRpcRequest::new(id, method, params);
        let response = self
            .client
            .post(self.url.clone())
            .header(ACCEPT, accept)
            .header(VERSION_HEADER, PROTOCOL_VERSION)
            .json(&request)
            .send()
            .await
            .map_err(|e| self.send_failed(e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = self.body(method, response).await.unwrap_or_default();
        Err(A2aError::Http {
            agent: self.agent.clone(),
            method,
            status: status.as_u16(),
            body: excerpt(&String::from_utf8_lossy(&body)),
        })
    }

    /// The whole body, up to [`MAX_BODY`].
    async fn body(
        &self,
        method: &'static str,
        response: reqwest::Response,
    ) -> Result<Vec<u8>, A2aError> {
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| self.dropped(method, e))?;
            if body.len() + chunk.len() > MAX_BODY {
                return Err(
                    self.protocol(method, format!("an answer longer than {MAX_BODY} bytes"))
                );
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// The result of a JSON-RPC response, or its error.
    fn result<R: DeserializeOwned>(
        &self,
        method: &'static str,
        body: &[u8],
    ) -> Result<R, A2aError> {
        let response: JsonRpcResponse<serde_json::Value> =
            serde_json::from_slice(body).map_err(|e| {
                let text = excerpt(&String::from_utf8_lossy(body));
                self.protocol(method, format!("not a JSON-RPC response ({e}): {text}"))
            })?;
        let result = response.into_result().map_err(|error| A2aError::Remote {
            agent: self.agent.clone(),
            method,
            code: error.code,
            message: error.message,
            data: error.data,
        })?;
        let text = excerpt(&result.to_string());
        serde_json::from_value(result)
            .map_err(|e| self.protocol(method, format!("not the result of {method} ({e}): {text}")))
    }

    fn protocol(&self, method: &'static str, reason: String) -> A2aError {
        A2aError::Protocol {
            agent: self.agent.clone(),
            method,
            reason,
        }
    }

    fn sse(&self, method: &'static str, error: SseError) -> A2aError {
        self.protocol(method, error.to_string())
    }

    fn timed_out(&self, what: &'static str, after: Duration) -> A2aError {
        A2aError::Timeout {
            agent: self.agent.clone(),
            what,
            after,
        }
    }

    fn send_failed(&self, error: reqwest::Error) -> A2aError {
        if error.is_timeout() {
            return self.timed_out("an answer", self.timeout);
        }
        A2aError::Connect {
            url: self.url.to_string(),
            source: error.into(),
        }
    }

    fn dropped(&self, method: &'static str, error: reqwest::Error) -> A2aError {
        if error.is_timeout() {
            return self.timed_out("the rest of an answer", self.timeout);
        }
        A2aError::Disconnected {
            agent: self.agent.clone(),
            method,
            source: error.into(),
        }
    }
}

/// The start of a text, for errors.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}
