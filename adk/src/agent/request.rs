//! [`AgentRequest`]: one request to an agent, with its input messages, its typed
//! extensions and the handlers for that request only.

use crate::auth::{Identity, Principal};
use crate::checkpoint::CheckpointId;
use crate::content::Content;
use crate::handler::BoxHandler;
use crate::interrupt::{Decision, Decisions};
use crate::message::Message;
use crate::message::Messages;

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
    origin: Option<Box<Origin>>,
}

/// Where a run comes from, when not from nothing: a thread, a checkpoint.
#[derive(Debug, Clone, Default)]
pub(crate) struct Origin {
    pub(crate) thread: Option<String>,
    pub(crate) resume: Option<(CheckpointId, Decisions)>,
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
    pub fn user(text: impl Into<Content>) -> Self {
        AgentRequest::new(vec![Message::user(text)])
    }

    /// A request that resumes the interrupted run of `checkpoint`, with one decision per
    /// pending interrupt, by interrupt id (see [`interrupt`](crate::interrupt)).
    ///
    /// The run goes on where it stopped: `before_agent` runs again (the extensions hold
    /// [`Resumed`](crate::interrupt::Resumed)), only the interrupted calls run, and every
    /// layer around the agent sees the request as it sees any other. An unknown or used
    /// checkpoint, or decisions that do not answer every interrupt exactly, fail the run
    /// with [`AgentError::Checkpoint`](crate::AgentError::Checkpoint) before anything
    /// runs, and the checkpoint stays usable.
    ///
    /// Resuming a checkpoint of a run that was *running* (a durable run whose process
    /// died) takes that run over, with no decisions.
    pub fn resume<I, K>(checkpoint: CheckpointId, decisions: I) -> Self
    where
        I: IntoIterator<Item = (K, Decision)>,
        K: Into<String>,
    {
        let decisions = decisions.into_iter().map(|(k, d)| (k.into(), d)).collect();
        AgentRequest {
            origin: Some(Box::new(Origin {
                thread: None,
                resume: Some((checkpoint, decisions)),
            })),
            ..AgentRequest::default()
        }
    }

    /// Runs on this thread: the run starts from the thread's history (its input comes
    /// after it) and saves the new history when it ends, completed or interrupted. See
    /// [`checkpoint`](crate::checkpoint#threads).
    ///
    /// A thread's name is 1 to 256 bytes without control characters
    /// ([`check_thread`](crate::agent::check_thread)): the run of any other (or the
    /// resume of a checkpoint id naming one) fails with
    /// [`AgentError::InvalidThread`](crate::AgentError::InvalidThread) before it starts.
    pub fn on_thread(mut self, thread: impl Into<String>) -> Self {
        self.origin.get_or_insert_default().thread = Some(thread.into());
        self
    }

    /// The thread the request runs on, if it names one.
    pub fn thread(&self) -> Option<&str> {
        self.origin.as_ref()?.thread.as_deref()
    }

    /// The checkpoint the request resumes, if it does.
    pub fn resumes(&self) -> Option<&CheckpointId> {
        Some(&self.origin.as_ref()?.resume.as_ref()?.0)
    }

    /// Makes the request `principal`'s: the owner of the thread its run starts, and the
    /// one who asks when it runs on a thread or resumes a checkpoint (see
    /// [`auth`](crate::auth)). A request without one is the anonymous principal's.
    ///
    /// The principal is an extension of the request, so the run's hooks, wrappers,
    /// tools and the agents it runs see it.
    pub fn with_principal(mut self, principal: Principal) -> Self {
        self.extensions.insert(principal);
        self
    }

    /// Makes the request the caller's: its principal, and its identity values in the
    /// extensions.
    pub fn with_identity(mut self, identity: Identity) -> Self {
        let (principal, values) = identity.into_parts();
        self.extensions.extend(values);
        self.extensions.insert(principal);
        self
    }

    /// The principal the request is from: the anonymous principal if it names none.
    pub fn principal(&self) -> Principal {
        principal_of(&self.extensions)
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

    /// The decisions of a resume request, by interrupt id.
    pub(crate) fn resume_decisions(&self) -> Option<&Decisions> {
        Some(&self.origin.as_ref()?.resume.as_ref()?.1)
    }

    /// Copies another request's handlers, the layers' and its own apart, so a run of
    /// this request sees them in the same order as a run of that one.
    pub(crate) fn copy_handlers_from(&mut self, from: &AgentRequest) {
        self.layer_handlers
            .extend(from.layer_handlers.iter().cloned());
        self.handlers.extend(from.handlers.iter().cloned());
    }

    pub(crate) fn push_layer_handler(&mut self, handler: BoxHandler) {
        self.layer_handlers.push(handler);
    }

    /// Splits into messages, extensions, the run's handlers in order, and its origin.
    pub(crate) fn into_parts(self) -> Parts {
        // Without layers' handlers, the request's own list is the run's, not copied.
        let handlers = if self.layer_handlers.is_empty() {
            self.handlers
        } else {
            let mut handlers = self.layer_handlers;
            handlers.extend(self.handlers);
            handlers
        };
        (self.messages, self.extensions, handlers, self.origin)
    }
}

/// A request's parts: see [`AgentRequest::into_parts`].
pub(crate) type Parts = (
    Messages,
    http::Extensions,
    Vec<BoxHandler>,
    Option<Box<Origin>>,
);

/// The principal among a request's extensions: the anonymous principal if there is none.
pub(crate) fn principal_of(extensions: &http::Extensions) -> Principal {
    extensions
        .get::<Principal>()
        .cloned()
        .unwrap_or_else(Principal::anonymous)
}
