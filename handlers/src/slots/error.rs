//! What can be wrong with a set of slot definitions.

/// Slot definitions that [`SlotFilling::new`](crate::SlotFilling::new) rejects.
///
/// # Example
///
/// ```
/// use tower_adk::handlers::{Slot, SlotError, SlotFilling};
///
/// let error = SlotFilling::new([
///     Slot::text("city", "The destination"),
///     Slot::text("city", "The city again"),
/// ])
/// .unwrap_err();
/// assert_eq!(error, SlotError::DuplicateName { name: "city".into() });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SlotError {
    /// No slot was defined.
    #[error("slot filling needs at least one slot")]
    NoSlots,
    /// Two slots have the same name (their tools would too).
    #[error("two slots are named `{name}`")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// A name that cannot be part of a tool name: it must be 1 to 55 ASCII letters,
    /// digits, `_` or `-` (the tool, `set_slot_<name>`, then has at most 64).
    #[error("the slot name `{name}` is not 1 to 55 ASCII letters, digits, `_` or `-`")]
    InvalidName {
        /// The name.
        name: String,
    },
    /// A categorical slot without allowed values.
    #[error("the categorical slot `{name}` has no allowed values")]
    NoAllowedValues {
        /// The slot's name.
        name: String,
    },
}
