//! The hook points of a run ([`Hook`]), and sets of them ([`Hooks`]): how errors name a
//! hook, and how a [`BoxHandler`](crate::handler::BoxHandler) records the hooks a handler passes
//! through.

use std::fmt;

/// The hook points of a run, as named in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Hook {
    /// [`Handler::before_agent`](crate::handler::Handler::before_agent).
    BeforeAgent,
    /// [`Handler::before_model`](crate::handler::Handler::before_model).
    BeforeModel,
    /// [`Handler::wrap_model`](crate::handler::Handler::wrap_model).
    WrapModel,
    /// [`Handler::after_model`](crate::handler::Handler::after_model).
    AfterModel,
    /// [`Handler::wrap_tool_invoke`](crate::handler::Handler::wrap_tool_invoke).
    WrapToolInvoke,
    /// [`Handler::wrap_tool_stream`](crate::handler::Handler::wrap_tool_stream).
    WrapToolStream,
    /// [`Handler::after_agent`](crate::handler::Handler::after_agent).
    AfterAgent,
}

impl Hook {
    /// Every hook, in the order a run meets them first.
    pub(crate) const EVERY: [Hook; 7] = [
        Hook::BeforeAgent,
        Hook::BeforeModel,
        Hook::WrapModel,
        Hook::AfterModel,
        Hook::WrapToolInvoke,
        Hook::WrapToolStream,
        Hook::AfterAgent,
    ];

    /// The hook's method name.
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::BeforeAgent => "before_agent",
            Hook::BeforeModel => "before_model",
            Hook::WrapModel => "wrap_model",
            Hook::AfterModel => "after_model",
            Hook::WrapToolInvoke => "wrap_tool_invoke",
            Hook::WrapToolStream => "wrap_tool_stream",
            Hook::AfterAgent => "after_agent",
        }
    }
}

impl fmt::Display for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of [`Hook`]s.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hooks(pub(crate) u8);

impl Hooks {
    /// Every hook.
    pub const ALL: Hooks = {
        let mut all = Hooks::NONE;
        let mut at = 0;
        while at < Hook::EVERY.len() {
            all = all.with(Hook::EVERY[at]);
            at += 1;
        }
        all
    };
    /// No hook.
    pub const NONE: Hooks = Hooks(0);

    /// Just this hook.
    pub const fn only(hook: Hook) -> Hooks {
        Hooks::NONE.with(hook)
    }

    /// This set and `hook`.
    #[must_use]
    pub const fn with(self, hook: Hook) -> Hooks {
        Hooks(self.0 | Self::bit(hook))
    }

    /// Whether `hook` is in the set.
    pub const fn contains(self, hook: Hook) -> bool {
        self.0 & Self::bit(hook) != 0
    }

    /// The hooks in the set, in the order a run meets them first.
    ///
    /// ```
    /// use tower_adk::{Hook, Hooks};
    ///
    /// let hooks = Hooks::only(Hook::AfterAgent).with(Hook::BeforeModel);
    /// assert_eq!(hooks.iter().collect::<Vec<_>>(), [Hook::BeforeModel, Hook::AfterAgent]);
    /// assert_eq!(Hooks::ALL.iter().count(), 7);
    /// ```
    pub fn iter(self) -> impl Iterator<Item = Hook> {
        Hook::EVERY.into_iter().filter(move |h| self.contains(*h))
    }

    const fn bit(hook: Hook) -> u8 {
        1 << hook as u8
    }
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_sets_hold_what_they_are_given() {
        for hook in Hook::EVERY {
            assert!(Hooks::ALL.contains(hook), "{hook}");
            assert!(!Hooks::NONE.contains(hook), "{hook}");
            assert!(Hooks::only(hook).contains(hook), "{hook}");
        }
        let two = Hooks::only(Hook::WrapModel).with(Hook::AfterAgent);
        assert!(!two.contains(Hook::BeforeModel));
        assert_eq!(format!("{two:?}"), "{WrapModel, AfterAgent}");
    }
}
