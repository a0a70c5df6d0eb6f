//! Streaming end to end: model text deltas, streamed tool output through the stream
//! wrappers, laziness and backpressure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod filler;
mod model_text;
mod tool_chunks;

#[path = "../support/mod.rs"]
mod support;

use support::{Log, tool_result};
