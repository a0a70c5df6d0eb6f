//! `GET /`: the chat page that [`Server::page`](super::Server::page) turns on, one
//! self-contained HTML file (`page.html`) built into the binary.
//!
//! It shows a run as it streams: the model's text; its reasoning in a block of its own,
//! collapsed (a click on "Reasoning" opens it); the images a model or a tool returned
//! (inline raster images and https URLs; others are named, not loaded) and the files
//! (named); each tool call with its output; approvals to answer; and, at the end, what
//! the run's model calls used (tokens, and the cost when the agent has prices).
//!
//! Under the conversation it draws each run as a waterfall: a row per model call and per
//! tool call on one time axis (from the events' `at_ms`: see
//! [the wire form's times](crate::wire#times)), with durations, tokens and failures in
//! red; an agent called as a tool nested under its call; approvals from the interrupt to
//! the decision, with who decided (the `decided` events of the resume). Each bar is a
//! button that shows its input and output.

use axum::http::HeaderValue;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
};
use axum::response::{Html, IntoResponse, Response};

/// The page: no build step, nothing loaded from elsewhere.
const PAGE: &str = include_str!("page.html");

/// Its inline script and style only; requests to its own origin only; images inline
/// (`data:`) or over https (what models and tools return: the page makes `<img>`s of
/// raster `data:` images and https URLs only, sent with no referrer); no frames, no form
/// posts, no `<base>`.
const POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; \
    style-src 'unsafe-inline'; connect-src 'self'; img-src data: https:; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// Serves the page.
pub(crate) async fn show() -> Response {
    let headers = [
        (CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY)),
        (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        (REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
        (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
    ];
    (headers, Html(PAGE)).into_response()
}
