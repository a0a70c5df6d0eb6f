//! The server's request bodies, as any bytes: the body of `POST /agents/{name}/runs` (a
//! run or a resume), AG-UI's `RunAgentInput` and the OpenAI chat completion request,
//! each read as its route reads it (`tower_adk::server::fuzzing`). Nothing panics, and:
//! - every body is either an agent request or a refusal: a 4xx status with one of the
//!   codes a body can be refused with, and a message;
//! - reading the same body twice gives the same answer;
//! - an accepted run has a message to answer (a resume has its checkpoint instead), and
//!   any thread it names, or its checkpoint names, is one a thread may have.
//!
//! The input's first byte chooses the route (modulo 3: runs, AG-UI, OpenAI); the rest is
//! the body. The seed corpus holds a real body of each shape for the fuzzer to bend.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tower_adk::AgentRequest;
use tower_adk::agent::check_thread;
use tower_adk::server::{ApiError, fuzzing};

/// The codes a body can be refused with before anything runs.
const REFUSALS: &[&str] = &[
    "invalid_body",
    "invalid_thread",
    "malformed_checkpoint_id",
    "unknown_interrupt",
];

fuzz_target!(|input: &[u8]| {
    let Some((&route, body)) = input.split_first() else {
        return;
    };
    let read: fn(&[u8]) -> Result<AgentRequest, ApiError> = match route % 3 {
        0 => fuzzing::runs_body,
        1 => fuzzing::agui_body,
        _ => fuzzing::chat_body,
    };
    let first = read(body);
    let again = read(body);
    match (&first, &again) {
        (Ok(request), Ok(same)) => {
            check(route % 3, request);
            assert_eq!(request.messages().len(), same.messages().len());
            assert_eq!(request.thread(), same.thread());
            assert_eq!(request.resumes(), same.resumes());
        }
        (Err(refused), Err(same)) => {
            let code = &*refused.error().code;
            assert!(refused.status().is_client_error(), "{refused:?}");
            assert!(REFUSALS.contains(&code), "{refused:?}");
            assert!(!refused.error().message.is_empty(), "{refused:?}");
            assert_eq!(code, &*same.error().code);
            assert_eq!(refused.error().message, same.error().message);
        }
        _ => panic!("the same body read twice: {first:?} then {again:?}"),
    }
});

/// What an accepted request of `route` must be.
fn check(route: u8, request: &AgentRequest) {
    if let Some(thread) = request.thread() {
        assert_eq!(check_thread(thread), Ok(()), "{thread:?}");
    }
    match (route, request.resumes()) {
        // A resume on the runs route names a thread a thread may have; AG-UI's interrupt
        // ids are checked when the run starts.
        (0, Some(checkpoint)) => assert_eq!(check_thread(&checkpoint.thread), Ok(())),
        // AG-UI's client holds the conversation: its messages may be empty.
        (1, _) | (_, Some(_)) => {}
        (_, None) => assert!(!request.messages().is_empty(), "a run with no message"),
    }
}
