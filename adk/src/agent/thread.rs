//! What a thread may be called: [`check_thread`], and [`InvalidThread`] when it may not.
//!
//! A thread's name is a key in every store (a SQL column, a Redis key, a path segment of
//! the server's routes, part of each checkpoint id), so it is bounded: 1 to
//! [`MAX_THREAD_LEN`] bytes of text without control characters. Everything else is
//! allowed: `support/42`, `alice-1`, a UUID, `user@example.com#2`, words in any script.

/// The longest thread name, in bytes of UTF-8.
pub const MAX_THREAD_LEN: usize = 256;

/// Why a name is not a thread's: a run asked for it fails with
/// [`AgentError::InvalidThread`](crate::AgentError::InvalidThread) before anything runs
/// or is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidThread {
    /// The name is empty.
    #[error("a thread's name is empty")]
    Empty,
    /// The name is longer than [`MAX_THREAD_LEN`] bytes.
    #[error("a thread's name is {len} bytes long; at most {MAX_THREAD_LEN} are allowed")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The name holds a control character (a line end, a tab, NUL, ...).
    #[error("a thread's name holds the control character {found:?} at byte {at}")]
    Control {
        /// The character.
        found: char,
        /// Where it is, in bytes from the start.
        at: usize,
    },
}

/// Whether `name` may name a thread: 1 to [`MAX_THREAD_LEN`] bytes, no control
/// characters (Unicode's `Cc`: C0, DEL and C1).
///
/// An [`Agent`](crate::Agent) checks the thread of every run it starts, and of every
/// checkpoint it resumes; a server checks the threads named in requests with it before
/// it asks the agent.
///
/// ```
/// use tower_adk::agent::{InvalidThread, check_thread};
///
/// assert!(check_thread("support/42").is_ok());
/// assert!(check_thread("9b2f0c1e-5d4a-4c1b-8f1e-2a6b7c8d9e0f").is_ok());
/// assert_eq!(check_thread(""), Err(InvalidThread::Empty));
/// assert!(matches!(check_thread("a\nb"), Err(InvalidThread::Control { at: 1, .. })));
/// assert!(matches!(check_thread(&"x".repeat(257)), Err(InvalidThread::TooLong { len: 257 })));
/// ```
pub fn check_thread(name: &str) -> Result<(), InvalidThread> {
    if name.is_empty() {
        return Err(InvalidThread::Empty);
    }
    if name.len() > MAX_THREAD_LEN {
        return Err(InvalidThread::TooLong { len: name.len() });
    }
    match name.char_indices().find(|(_, c)| c.is_control()) {
        Some((at, found)) => Err(InvalidThread::Control { found, at }),
        None => Ok(()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::agent::{Agent, AgentRequest};
    use crate::testing::{ScriptedModel, Turn};

    #[test]
    fn the_names_tests_and_examples_use_are_threads() {
        for name in [
            "t1",
            "support/42",
            "alice-1",
            "a|b",
            "x".repeat(256).as_str(),
            "日本",
        ] {
            assert_eq!(check_thread(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn empty_long_and_control_names_are_not() {
        assert_eq!(check_thread(""), Err(InvalidThread::Empty));
        let long = "é".repeat(129);
        assert_eq!(
            check_thread(&long),
            Err(InvalidThread::TooLong { len: 258 })
        );
        for (name, found, at) in [
            ("\0", '\0', 0),
            ("a\tb", '\t', 1),
            ("ab\u{7f}", '\u{7f}', 2),
        ] {
            assert_eq!(
                check_thread(name),
                Err(InvalidThread::Control { found, at })
            );
        }
        let c1 = "é\u{85}";
        assert_eq!(
            check_thread(c1),
            Err(InvalidThread::Control {
                found: '\u{85}',
                at: 2
            })
        );
    }

    #[tokio::test]
    async fn a_run_on_a_thread_no_thread_may_have_fails_before_it_starts() {
        let model = ScriptedModel::new([Turn::text("hi")]);
        let agent = Agent::builder(model.clone()).build().unwrap();

        let request = AgentRequest::user("hi").on_thread("a\nb");
        let error = agent.run(request).await.unwrap_err();

        assert_eq!(error.code(), "invalid_thread");
        assert_eq!(model.calls(), 0);
        assert!(agent.last_checkpoint("a\nb").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_resume_of_a_checkpoint_on_such_a_thread_fails_before_it_starts() {
        let model = ScriptedModel::new([Turn::text("hi")]);
        let agent = Agent::builder(model.clone()).build().unwrap();

        let checkpoint = "a\0b@1#run".parse().unwrap();
        let decisions: [(String, crate::interrupt::Decision); 0] = [];
        let error = agent
            .run(AgentRequest::resume(checkpoint, decisions))
            .await
            .unwrap_err();

        assert_eq!(error.code(), "invalid_thread");
        assert_eq!(model.calls(), 0);
    }
}
