#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Handlers through the public API: the rules of DESIGN.md §3.
//!
//! - `instruction`, `tools`: `before_agent` rewrites the run's config (rules 1 and 5);
//! - `variants`: handlers that change the loop's topology compile it once (§4);
//! - `history`: `before_model` / `after_model` / `wrap_model` rewrites and their scope;
//! - `context`: run extensions and run-local values (rule 3);
//! - `errors`: a failing hook stops the run, named (rule 2);
//! - `order`: `HandlerLayer`s stack with request handlers (rules 1 and 4);
//! - `wrap_tool`: one hook wraps invoked and streamed calls alike;
//! - `approval`: `HumanApproval` and the policy gate's "ask", through interrupts and resumes.

mod approval;
mod context;
mod errors;
mod history;
mod instruction;
mod order;
mod panics;
mod support;
mod tools;
mod variants;
mod wrap_tool;
