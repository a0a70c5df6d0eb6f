//! What the HTTP providers share about failed calls: the wait a server asks for in its
//! headers, and the start of a body kept in an error.

use std::time::Duration;

use http::HeaderMap;

/// The longest piece of a body or chunk kept in an error.
const EXCERPT: usize = 1000;

/// The wait a server asked for: `retry-after-ms` (OpenAI's, in milliseconds) or
/// `retry-after` in seconds. The HTTP-date form of `retry-after` is not read.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let value = headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()?;
        (value.is_finite() && value >= 0.0).then_some(value)
    };
    let seconds = number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"))?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// The start of a text, cut on a character boundary.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}
