//! Slot filling and prompt templates through the public API.
//!
//! - `slots`: `set_slot_<name>` tools with schemas that fit each slot, a value outside a
//!   categorical slot's set refused (naming the allowed values), the run completing the
//!   moment the exit condition holds, and the values in the result;
//! - `templates`: the instruction rendered from a template with the time in a time zone,
//!   the description, the slots so far and the resume flag, refreshed before each model
//!   call; errors when the handler is made.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod slots;
#[path = "../support/mod.rs"]
mod support;
mod templates;

use support::tool_result;
