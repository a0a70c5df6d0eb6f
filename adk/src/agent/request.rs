//! [`AgentRequest`]: one request to an agent, with its input messages, its typed
//! extensions and the handlers for that request only.

use crate::handler::BoxHandler;
use crate::{Message, Messages};

/// One request to an agent: the input messages, typed extensions, and handlers for this
/// request only.
///
/// # Example
///
/// ```
/// use tower_adk::AgentRequest;
///
/// #[derive(Clone)]
/// struct UserId(u64);
///
/// let request = AgentRequest::user("What's on my calendar?").with_extension(UserId(42));
/// assert_eq!(request.extensions().get::<UserId>().map(|u| u.0), Some(42));
/// ```
#[derive(Debug, Default)]
pub struct AgentRequest {
    messages: Messages,
    extensions: http::Extensions,
    handlers: Vec<BoxHandler>,
    layer_handlers: Vec<BoxHandler>,
}

impl AgentRequest {
    /// A request with these input messages.
    pub fn new(messages: impl Into<Messages>) -> Self {
        AgentRequest {
            messages: messages.into(),
            ..AgentRequest::default()
        }
    }

    /// A request with one user message.
    pub fn user(text: impl Into<String>) -> Self {
        AgentRequest::new(vec![Message::user(text)])
    }

    /// Adds a typed value to the run's extensions.
    pub fn with_extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// Adds a handler for this request only. Request handlers run inside (after) the
    /// handlers of the agent's [`HandlerLayer`](crate::HandlerLayer)s, in the order added.
    pub fn with_handler(mut self, handler: impl Into<BoxHandler>) -> Self {
        self.handlers.push(handler.into());
        self
    }

    /// The input messages.
    pub fn messages(&self) -> &Messages {
        &self.messages
    }

    /// The input messages, mutably.
    pub fn messages_mut(&mut self) -> &mut Messages {
        &mut self.messages
    }

    /// The typed extensions.
    pub fn extensions(&self) -> &http::Extensions {
        &self.extensions
    }

    /// The typed extensions, mutably.
    pub fn extensions_mut(&mut self) -> &mut http::Extensions {
        &mut self.extensions
    }

    /// The request's own handlers.
    pub fn handlers_mut(&mut self) -> &mut Vec<BoxHandler> {
        &mut self.handlers
    }

    pub(crate) fn push_layer_handler(&mut self, handler: BoxHandler) {
        self.layer_handlers.push(handler);
    }

    /// Splits into messages, extensions and the run's handlers in order.
    pub(crate) fn into_parts(self) -> (Messages, http::Extensions, Vec<BoxHandler>) {
        let mut handlers = self.layer_handlers;
        handlers.extend(self.handlers);
        (self.messages, self.extensions, handlers)
    }
}
