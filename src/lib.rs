#![doc = include_str!("../README.md")]

pub use adk::*;
pub use adk_handlers as handlers;
