//! The `adk` command run as a person runs it: `check`, `serve` and `mcp` as child processes,
//! `run` in a real terminal (a tmux pane: keys typed with send-keys, the screen read with
//! capture-pane; scripts/setup-terminal installs tmux).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod check;
mod eval;
mod mcp;
mod run;
mod serve;
mod support;
