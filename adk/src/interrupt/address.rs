//! [`InterruptAddress`]: where an interrupt came from, as one value that is formatted and
//! read back in one place.

use std::fmt;
use std::str::FromStr;

use crate::hook::Hook;

/// Where an interrupt came from: an agent, then the tool call or the hook of a handler
/// that interrupted in it; for a call that ran an agent which interrupted, that agent's
/// own address after the call's.
///
/// Its text form is an interrupt's id ([`PendingInterrupt::id`](super::PendingInterrupt::id)),
/// the key of its [`Decision`](super::Decision) on resume:
///
/// | interrupted by | id |
/// |---|---|
/// | a tool call (or its wrapper) | `agent:support/tool:call_7` |
/// | a hook of a handler | `agent:support/before_model:my_crate::Confirm` |
/// | an agent a call ran | `agent:support/tool:c1/agent:billing/tool:c9` |
///
/// Reading an id back finds the agent's name up to the first `/` that starts a place
/// (`/tool:` or `/HOOK:` with a [`Hook`]'s name), and a call's id up to `/agent:`, where
/// the address of the interrupt of an agent it ran begins (that agent's to read); a
/// hook's handler is the rest of the id.
///
/// # Example
///
/// ```
/// use tower_adk::Hook;
/// use tower_adk::interrupt::InterruptAddress;
///
/// let inner = InterruptAddress::for_call("billing", "c9");
/// let id = InterruptAddress::for_call("support", "c1").through(&inner);
/// assert_eq!(id.to_string(), "agent:support/tool:c1/agent:billing/tool:c9");
///
/// let read: InterruptAddress = "agent:support/tool:c1/agent:billing/tool:c9".parse()?;
/// assert_eq!((read.agent(), read.call_id()), ("support", Some("c1")));
/// assert_eq!(read.nested(), Some("agent:billing/tool:c9"));
/// assert_eq!(read.nested().map(str::parse), Some(Ok(inner)));
///
/// let hook: InterruptAddress = "agent:support/before_model:my_crate::Confirm".parse()?;
/// assert_eq!(hook.hook(), Some((Hook::BeforeModel, "my_crate::Confirm")));
/// # Ok::<_, tower_adk::interrupt::InvalidAddress>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InterruptAddress {
    agent: String,
    place: Place,
}

/// What interrupted, in the agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Place {
    /// A tool call, or its wrapper; or an agent the call ran, at the address (its id)
    /// of that agent's interrupt.
    Call { id: String, nested: Option<String> },
    /// A hook of a handler.
    Hook { hook: Hook, handler: String },
}

impl InterruptAddress {
    /// The address of a tool call's interrupt (or its wrapper's) in `agent`.
    pub fn for_call(agent: impl Into<String>, call_id: impl Into<String>) -> Self {
        InterruptAddress {
            agent: agent.into(),
            place: Place::Call {
                id: call_id.into(),
                nested: None,
            },
        }
    }

    /// The address of the interrupt of `hook` of the handler named `handler` in `agent`.
    pub fn for_hook(agent: impl Into<String>, hook: Hook, handler: impl Into<String>) -> Self {
        InterruptAddress {
            agent: agent.into(),
            place: Place::Hook {
                hook,
                handler: handler.into(),
            },
        }
    }

    /// This call's address with `inner`, the id of an interrupt of an agent that the
    /// call ran, after it. (A hook's address has nothing after it: it is given back as
    /// it is.)
    #[must_use]
    pub fn through(mut self, inner: impl fmt::Display) -> Self {
        if let Place::Call { nested, .. } = &mut self.place {
            *nested = Some(inner.to_string());
        }
        self
    }

    /// The agent's name: the first part of the address.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// The id of the tool call that interrupted (or ran the agent that did); `None` for
    /// a hook.
    pub fn call_id(&self) -> Option<&str> {
        match &self.place {
            Place::Call { id, .. } => Some(id),
            Place::Hook { .. } => None,
        }
    }

    /// The hook and the handler's name, for a hook's interrupt; `None` for a call.
    pub fn hook(&self) -> Option<(Hook, &str)> {
        match &self.place {
            Place::Hook { hook, handler } => Some((*hook, handler)),
            Place::Call { .. } => None,
        }
    }

    /// The id, in the agent a call ran, of the interrupt that came through the call:
    /// the key of its decision when the call passes the decisions on to that agent;
    /// `None` for the call's own interrupt and for a hook's.
    pub fn nested(&self) -> Option<&str> {
        match &self.place {
            Place::Call { nested, .. } => nested.as_deref(),
            Place::Hook { .. } => None,
        }
    }
}

impl fmt::Display for InterruptAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "agent:{}/", self.agent)?;
        match &self.place {
            Place::Call { id, nested: None } => write!(f, "tool:{id}"),
            Place::Call {
                id,
                nested: Some(inner),
            } => write!(f, "tool:{id}/{inner}"),
            Place::Hook { hook, handler } => write!(f, "{hook}:{handler}"),
        }
    }
}

/// Text that is not an interrupt's address (see [`InterruptAddress`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an interrupt id (agent:NAME/tool:CALL or agent:NAME/HOOK:HANDLER)")]
pub struct InvalidAddress(String);

impl FromStr for InterruptAddress {
    type Err = InvalidAddress;

    fn from_str(text: &str) -> Result<Self, InvalidAddress> {
        read(text).ok_or_else(|| InvalidAddress(text.to_owned()))
    }
}

/// Reads an address: the agent, up to the first `/` that starts a place; then the place.
fn read(text: &str) -> Option<InterruptAddress> {
    let rest = text.strip_prefix("agent:")?;
    let (agent, place) = rest
        .match_indices('/')
        .find_map(|(at, _)| Some((&rest[..at], read_place(&rest[at + 1..])?)))?;
    Some(InterruptAddress {
        agent: agent.to_owned(),
        place,
    })
}

/// Reads a place: `tool:ID`, `tool:ID/agent:...` or `HOOK:HANDLER`.
fn read_place(text: &str) -> Option<Place> {
    if let Some(call) = text.strip_prefix("tool:") {
        let (id, nested) = match call.find("/agent:") {
            Some(at) => (&call[..at], Some(call[at + 1..].to_owned())),
            None => (call, None),
        };
        return Some(Place::Call {
            id: id.to_owned(),
            nested,
        });
    }
    let (hook, handler) = text.split_once(':')?;
    let hook = Hook::EVERY.into_iter().find(|h| h.as_str() == hook)?;
    Some(Place::Hook {
        hook,
        handler: handler.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_back(address: &InterruptAddress) -> Option<InterruptAddress> {
        address.to_string().parse().ok()
    }

    #[test]
    fn every_kind_of_address_reads_back_as_itself() {
        let hook = InterruptAddress::for_hook("support", Hook::AfterModel, "my::Confirm<T>");
        let call = InterruptAddress::for_call("support", "call_7");
        let nested = InterruptAddress::for_call("desk", "c1").through(&call);
        let deeper = InterruptAddress::for_call("front", "c0").through(&nested);
        for address in [hook, call, nested, deeper] {
            assert_eq!(read_back(&address).as_ref(), Some(&address), "{address}");
        }
    }

    #[test]
    fn names_and_ids_with_slashes_and_colons_read_back() {
        let inner = InterruptAddress::for_hook("billing/eu", Hook::WrapModel, "a::B/c");
        let address = InterruptAddress::for_call("team/support", "call:7/x").through(&inner);
        assert_eq!(
            address.to_string(),
            "agent:team/support/tool:call:7/x/agent:billing/eu/wrap_model:a::B/c"
        );
        assert_eq!(read_back(&address).as_ref(), Some(&address));
        let nested = address.nested().map(str::parse::<InterruptAddress>);
        assert_eq!(nested, Some(Ok(inner)));
    }

    #[test]
    fn text_that_is_no_address_is_refused() {
        for text in [
            "",
            "agent:",
            "agent:a",
            "agent:a/",
            "tool:c1",
            "agent:a/nope:x",
            "agent:a/before_model",
        ] {
            assert!(text.parse::<InterruptAddress>().is_err(), "{text}");
        }
    }
}
