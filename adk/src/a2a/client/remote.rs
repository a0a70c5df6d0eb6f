//! [`RemoteAgent`]: an A2A agent elsewhere, connected by its card; and
//! [`RemoteAgentBuilder`], how to reach it.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use http::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

use super::card::{card_url, jsonrpc_interface, read_card, tool_name};
use super::endpoint::Endpoint;
use super::error::A2aError;
use crate::a2a::{
    AgentCard, CancelTaskRequest, GetTaskRequest, Message, SendMessageRequest, SendMessageResponse,
    StreamResponse, Task, method,
};

/// How long connecting (reaching the agent and reading its card) may take by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a call may wait by default for its answer, or a stream for its next event.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// How long the `CancelTask` sent for a dropped call may take by default.
pub const DEFAULT_CANCEL_TIMEOUT: Duration = Duration::from_secs(2);

/// A remote agent that speaks A2A 1.0 over JSON-RPC: its card, and the calls to it.
///
/// Make one with [`RemoteAgent::connect`] or [`RemoteAgent::builder`]; use it as a tool
/// ([`RemoteAgent::as_tool`], [`RemoteAgentTool`](super::RemoteAgentTool)), as an agent
/// service (a [`Handoffs`](crate::compose::Handoffs) target), or call it directly with
/// [`send`](RemoteAgent::send). Cloning is cheap (a reference count); clones share the
/// HTTP connection pool.
///
/// # Example
///
/// ```no_run
/// use futures::StreamExt;
/// use tower_adk::a2a::client::RemoteAgent;
/// use tower_adk::a2a::{Message, Part, Role, StreamResponse};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let billing = RemoteAgent::builder("http://127.0.0.1:9999").bearer_token("s3cret").connect().await?;
/// println!("{}: {}", billing.name(), billing.card().description);
/// let mut events = billing.send(Message::new("m1", Role::User, vec![Part::text("Is invoice 7 paid?")]));
/// while let Some(event) = events.next().await {
///     if let StreamResponse::ArtifactUpdate(update) = event? {
///         for part in &update.artifact.parts {
///             print!("{}", part.as_text().unwrap_or_default());
///         }
///     }
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RemoteAgent {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    description: String,
    card: AgentCard,
    endpoint: Arc<Endpoint>,
    streaming: bool,
    cancel_timeout: Duration,
}

/// How to reach a remote A2A agent; [`connect`](RemoteAgentBuilder::connect) reads its
/// card and gives the [`RemoteAgent`].
#[derive(Clone)]
pub struct RemoteAgentBuilder {
    url: String,
    name: Option<String>,
    description: Option<String>,
    headers: Vec<(String, String)>,
    bearer_token: Option<String>,
    connect_timeout: Duration,
    request_timeout: Duration,
    cancel_timeout: Duration,
    streaming: bool,
}

impl RemoteAgent {
    /// How to reach the agent at `url`: its base URL (the card is read from
    /// `/.well-known/agent-card.json` under it), or the card's own URL.
    pub fn builder(url: impl Into<String>) -> RemoteAgentBuilder {
        RemoteAgentBuilder {
            url: url.into(),
            name: None,
            description: None,
            headers: Vec::new(),
            bearer_token: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            cancel_timeout: DEFAULT_CANCEL_TIMEOUT,
            streaming: true,
        }
    }

    /// Connects to the agent at `url` with the defaults; see [`RemoteAgentBuilder::connect`].
    ///
    /// # Errors
    ///
    /// As [`RemoteAgentBuilder::connect`].
    pub async fn connect(url: impl Into<String>) -> Result<RemoteAgent, A2aError> {
        RemoteAgent::builder(url).connect().await
    }

    /// The name the agent goes by here: the one given to the builder, else its card's
    /// made into a tool name (ASCII letters, digits, `_` and `-`).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// What it does: the one given to the builder, else its card's description.
    pub fn description(&self) -> &str {
        &self.inner.description
    }

    /// Its agent card, as read when connecting.
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The URL its JSON-RPC requests go to (its card's JSON-RPC interface).
    pub fn endpoint_url(&self) -> &str {
        self.inner.endpoint.url.as_str()
    }

    /// Whether messages are sent with `SendStreamingMessage` (the card says the agent
    /// streams, and the builder did not turn it off) rather than `SendMessage`.
    pub fn is_streaming(&self) -> bool {
        self.inner.streaming
    }

    /// How long the `CancelTask` of a dropped call may take.
    pub fn cancel_timeout(&self) -> Duration {
        self.inner.cancel_timeout
    }

    /// Sends a message: a stream of what the agent answers, lazily (nothing is sent until
    /// it is polled). With `SendStreamingMessage`, each event as it comes; with
    /// `SendMessage`, the one task or message of the answer.
    ///
    /// The message goes as it is: set its `context_id` to go on with a conversation and
    /// its `task_id` to answer a task that waits for input.
    pub fn send(&self, message: Message) -> TaskEvents {
        let request = SendMessageRequest::new(message);
        let endpoint = Arc::clone(&self.inner.endpoint);
        let events = if self.inner.streaming {
            endpoint
                .stream(method::SEND_STREAMING_MESSAGE, request)
                .boxed()
        } else {
            futures::stream::once(async move {
                let answer: SendMessageResponse =
                    endpoint.call(method::SEND_MESSAGE, request).await?;
                Ok(match answer {
                    SendMessageResponse::Task(task) => StreamResponse::Task(task),
                    SendMessageResponse::Message(message) => StreamResponse::Message(message),
                })
            })
            .boxed()
        };
        TaskEvents { events }
    }

    /// The task as the agent has it now (`GetTask`).
    ///
    /// # Errors
    ///
    /// An [`A2aError`]; [`A2aError::Remote`] with code -32001 for a task the agent does
    /// not know.
    pub async fn get_task(&self, id: impl Into<String>) -> Result<Task, A2aError> {
        let endpoint = &self.inner.endpoint;
        endpoint
            .call(method::GET_TASK, GetTaskRequest::new(id))
            .await
    }

    /// Asks the agent to cancel a task (`CancelTask`), waiting at most the
    /// [cancel timeout](RemoteAgentBuilder::cancel_timeout).
    ///
    /// # Errors
    ///
    /// An [`A2aError`]; [`A2aError::Remote`] with code -32002 for a task that can no
    /// longer be canceled.
    pub async fn cancel_task(&self, id: impl Into<String>) -> Result<Task, A2aError> {
        let endpoint = &self.inner.endpoint;
        let request = CancelTaskRequest::new(id);
        endpoint
            .call_within(method::CANCEL_TASK, request, self.inner.cancel_timeout)
            .await
    }
}

impl fmt::Debug for RemoteAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteAgent")
            .field("name", &self.inner.name)
            .field("endpoint", &self.inner.endpoint.url.as_str())
            .field("streaming", &self.inner.streaming)
            .finish_non_exhaustive()
    }
}

impl RemoteAgentBuilder {
    /// The name the agent goes by here (the tool's name; the name in errors and
    /// interrupt ids): ASCII letters, digits, `_` and `-`. Default: its card's name,
    /// made into such a name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// What the agent does, for the model. Default: its card's description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sends `Authorization: Bearer <token>` with every request (the card's too).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Sends this header with every request (the card's too).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// How long reaching the agent and reading its card may take (default
    /// [`DEFAULT_CONNECT_TIMEOUT`]); also the TCP connect timeout of every call.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long a call may wait for its answer, and a streamed call for its next event
    /// (default [`DEFAULT_REQUEST_TIMEOUT`]).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long the `CancelTask` that a dropped call sends may take (default
    /// [`DEFAULT_CANCEL_TIMEOUT`]): the most a dropped run's cancel outlives it.
    pub fn cancel_timeout(mut self, timeout: Duration) -> Self {
        self.cancel_timeout = timeout;
        self
    }

    /// Whether to stream when the card says the agent can (default `true`); off, every
    /// message goes with `SendMessage` and its answer comes whole.
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// Reads the agent's card and picks its JSON-RPC interface of A2A 1.0.
    ///
    /// # Errors
    ///
    /// [`A2aError::Config`] for a URL or header that is not valid;
    /// [`A2aError::Connect`] when no server answers; [`A2aError::Timeout`] when it does
    /// not answer within the connect timeout; [`A2aError::Card`] when what answers has
    /// no card (not an A2A agent), a card that does not read, or a card without a
    /// JSON-RPC interface of A2A 1.0.
    pub async fn connect(self) -> Result<RemoteAgent, A2aError> {
        let card_url = card_url(&self.url)?;
        let client = self.client()?;
        let limit = self.connect_timeout;
        let card = tokio::time::timeout(limit, read_card(&client, &card_url))
            .await
            .unwrap_or_else(|_| {
                Err(A2aError::Timeout {
                    agent: card_url.to_string(),
                    what: "its agent card",
                    after: limit,
                })
            })?;
        let interface = jsonrpc_interface(&card, &card_url)?;
        let name = match self.name {
            Some(name) => name,
            None => tool_name(&card.name),
        };
        let description = self.description.unwrap_or_else(|| card.description.clone());
        let streaming = self.streaming && card.capabilities.streaming == Some(true);
        let endpoint = Endpoint::new(name.clone(), interface, client, self.request_timeout);
        Ok(RemoteAgent {
            inner: Arc::new(Inner {
                name,
                description,
                card,
                endpoint: Arc::new(endpoint),
                streaming,
                cancel_timeout: self.cancel_timeout,
            }),
        })
    }

    /// The HTTP client: the headers, the connect timeout and the idle read timeout.
    fn client(&self) -> Result<reqwest::Client, A2aError> {
        let invalid = |name: &str, e: &dyn fmt::Display| A2aError::Config {
            reason: format!("the header `{name}` is invalid: {e}"),
        };
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let key = HeaderName::try_from(name.as_str()).map_err(|e| invalid(name, &e))?;
            let value = HeaderValue::try_from(value.as_str()).map_err(|e| invalid(name, &e))?;
            headers.append(key, value);
        }
        if let Some(token) = &self.bearer_token {
            let mut value = HeaderValue::try_from(format!("Bearer {token}"))
                .map_err(|e| invalid("authorization", &e))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        reqwest::Client::builder()
            .default_headers(headers)
            .connect_timeout(self.connect_timeout)
            .read_timeout(self.request_timeout)
            .build()
            .map_err(|e| A2aError::Config {
                reason: format!("the HTTP client could not be built: {e}"),
            })
    }
}

impl fmt::Debug for RemoteAgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("RemoteAgentBuilder")
            .field("url", &self.url)
            .field("name", &self.name)
            .field("headers", &headers)
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "***"))
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("cancel_timeout", &self.cancel_timeout)
            .field("streaming", &self.streaming)
            .finish_non_exhaustive()
    }
}

/// What a remote agent answers a message with: its events, as they come (see
/// [`RemoteAgent::send`]).
pub struct TaskEvents {
    events: BoxStream<'static, Result<StreamResponse, A2aError>>,
}

impl Stream for TaskEvents {
    type Item = Result<StreamResponse, A2aError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.poll_next_unpin(cx)
    }
}

impl fmt::Debug for TaskEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskEvents").finish_non_exhaustive()
    }
}
