//! Evaluation through the public API (`tower_adk::eval`): each matcher kind, the three
//! ways a trajectory matches, the judge, cases run concurrently on threads of their own,
//! the scores held to their thresholds, and the report as JSON, a table and HTML.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod matchers;
mod runs;
mod trajectories;
