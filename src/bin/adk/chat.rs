//! `adk run`: a chat with an agent in the terminal, on one thread.
//!
//! The prompt is read with rustyline, which reads Ctrl-C and Ctrl-D as keys while the
//! person types. A run is driven on the async runtime between prompts; Ctrl-C then
//! arrives as a signal, and the run is dropped, which cancels its model and tool calls
//! (nothing of a run outlives it). Interrupts (approvals, questions) are asked at the
//! prompt and the run resumed with the answers.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use serde_json::Value;
use tokio::runtime::Runtime;
use tower::ServiceExt;
use tower_adk::checkpoint::CheckpointId;
use tower_adk::file::{FileAgent, Role};
use tower_adk::interrupt::{Decision, PendingInterrupt};
use tower_adk::wire::WireEvent;
use tower_adk::{AgentEvent, AgentRequest, AgentResult, RunStatus};

use crate::screen::{self, Screen};
use crate::{Failure, load};

/// What `adk run` was asked.
#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) file: PathBuf,
    pub(crate) role: Option<String>,
    pub(crate) thread: Option<String>,
    pub(crate) message: Option<String>,
    pub(crate) json: bool,
}

impl Options {
    /// Loads the file, then chats (or sends the one message) until the person leaves.
    pub(crate) fn run(self, runtime: &Runtime) -> Result<(), Failure> {
        let loaded = runtime.block_on(load::load(&self.file))?;
        let agent = load::build(&self.file, loaded)?;
        let editor = DefaultEditor::new().map_err(|error| {
            screen::error(format_args!("cannot read the terminal: {error}"));
            Failure::Run
        })?;
        let mut chat = Chat {
            agent,
            role: self.role.map(Role::new),
            thread: self.thread.unwrap_or_else(new_thread),
            editor,
            screen: Screen::new(),
            runtime,
            waiting: None,
            json: self.json,
            one_message: self.message.is_some(),
            failed: false,
        };
        match self.message {
            Some(text) => chat.turn(&text),
            None => chat.prompt_loop(),
        }
    }
}

/// A run that waits for the person's decisions.
struct Waiting {
    checkpoint: CheckpointId,
    interrupts: Vec<PendingInterrupt>,
}

/// How one run ended.
enum Ended {
    /// With its result: completed, or waiting at interrupts.
    Result(Box<AgentResult>),
    /// The person pressed Ctrl-C.
    Cancelled,
    /// Standard output's reader went away: the run is dropped (cancelled), no one reads it.
    Closed,
    /// With an error, as the person is to read it.
    Failed(String),
}

struct Chat<'r> {
    agent: FileAgent,
    role: Option<Role>,
    thread: String,
    editor: DefaultEditor,
    screen: Screen,
    runtime: &'r Runtime,
    waiting: Option<Waiting>,
    /// Events are printed in their wire form, one JSON object per line.
    json: bool,
    /// `--message`: one message, no next one to ask again with.
    one_message: bool,
    /// A run of the chat failed: the chat goes on, and ends with status 1.
    failed: bool,
}

impl Chat<'_> {
    /// Reads a message, runs it, again, until Ctrl-D or `/exit`; a chat in which a run
    /// failed ends with [`Failure::Run`] (a piped chat's status says so).
    fn prompt_loop(&mut self) -> Result<(), Failure> {
        let chatted = self.chat();
        match chatted {
            Ok(()) if self.failed => Err(Failure::Run),
            other => other,
        }
    }

    fn chat(&mut self) -> Result<(), Failure> {
        self.screen.note(format_args!(
            "Chatting with `{}` on thread {}. Ctrl-C cancels a reply; Ctrl-D or /exit leaves.",
            self.agent.name(),
            self.thread
        ));
        loop {
            match self.editor.readline("> ") {
                Ok(line) => {
                    let line = line.trim();
                    if line == "/exit" {
                        return Ok(());
                    }
                    if !line.is_empty() {
                        let _ = self.editor.add_history_entry(line);
                        // A failed run is shown; the chat goes on, unless no one reads it.
                        if let Err(Failure::Closed) = self.turn(line) {
                            return Err(Failure::Closed);
                        }
                    }
                }
                Err(ReadlineError::Interrupted) => {
                    self.screen.note(format_args!("(Ctrl-D or /exit leaves)"));
                }
                Err(ReadlineError::Eof) => return Ok(()),
                Err(error) => {
                    screen::error(format_args!("cannot read the terminal: {error}"));
                    return Err(Failure::Run);
                }
            }
        }
    }

    /// Runs one message on the thread (after the decisions the last reply still waits
    /// for, if the person cancelled at them).
    fn turn(&mut self, text: &str) -> Result<(), Failure> {
        self.screen.start_turn();
        if let Some(waiting) = self.waiting.take() {
            self.screen
                .note(format_args!("The last reply waits for a decision first."));
            let request = self.answer(waiting)?;
            self.drive(request)?;
        }
        self.drive(AgentRequest::user(text).on_thread(self.thread.clone()))
    }

    /// Runs `request`, asking about each interrupt and resuming, until the run
    /// completes, fails or is cancelled.
    fn drive(&mut self, mut request: AgentRequest) -> Result<(), Failure> {
        loop {
            let result = self.run_once(request)?;
            if result.status != RunStatus::Interrupted || self.json {
                return Ok(());
            }
            let Some(checkpoint) = result.checkpoint else {
                screen::error(format_args!(
                    "the run stopped at an interrupt without a checkpoint"
                ));
                self.failed = true;
                return Err(Failure::Run);
            };
            request = self.answer(Waiting {
                checkpoint,
                interrupts: result.interrupts,
            })?;
        }
    }

    /// One run, shown as it goes, to its result; a cancelled or failed one is shown.
    fn run_once(&mut self, mut request: AgentRequest) -> Result<Box<AgentResult>, Failure> {
        if let Some(role) = &self.role {
            request = request.with_extension(role.clone());
        }
        let runtime = self.runtime;
        let ended = runtime.block_on(self.stream(request));
        self.screen.end_run();
        match ended {
            Ended::Result(result) => Ok(result),
            Ended::Cancelled => {
                self.screen.break_line();
                self.screen.note(format_args!("cancelled"));
                Err(Failure::Run)
            }
            Ended::Closed => Err(Failure::Closed),
            Ended::Failed(error) => {
                screen::error(format_args!("the run failed: {error}"));
                self.failed = true;
                Err(Failure::Run)
            }
        }
    }

    /// The request that resumes a run with the person's decisions; when they cancel,
    /// the run keeps waiting (its thread too), and is asked about again first thing
    /// (with `--message`, there is no next message: where it waits is shown instead).
    fn answer(&mut self, waiting: Waiting) -> Result<AgentRequest, Failure> {
        match self.decide(&waiting.interrupts) {
            Some(decisions) => Ok(AgentRequest::resume(waiting.checkpoint, decisions)),
            None if self.one_message => {
                self.screen.note(format_args!(
                    "unanswered: the run waits for a decision on thread {} at checkpoint {}",
                    self.thread, waiting.checkpoint
                ));
                Err(Failure::Run)
            }
            None => {
                self.screen.note(format_args!(
                    "cancelled (the reply waits for a decision, asked again with the next message)"
                ));
                self.waiting = Some(waiting);
                Err(Failure::Run)
            }
        }
    }

    /// Drives one run, showing its events, until it ends or Ctrl-C drops it.
    async fn stream(&mut self, request: AgentRequest) -> Ended {
        let Ok(mut run) = self.agent.clone().oneshot(request).await;
        let cancel = async {
            // Without a signal handler, Ctrl-C ends the process as it would anyway.
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        tokio::pin!(cancel);
        loop {
            tokio::select! {
                event = run.next() => match event {
                    Some(Ok(event)) if self.json => {
                        self.screen.wire(&WireEvent::from(&event));
                        if let AgentEvent::Completed(result) = event {
                            return Ended::Result(result);
                        }
                    }
                    Some(Ok(AgentEvent::Completed(result))) => {
                        self.screen.completed(&result);
                        return Ended::Result(result);
                    }
                    Some(Ok(event)) => self.screen.event(&event),
                    Some(Err(error)) => {
                        if self.json {
                            self.screen.wire(&WireEvent::from(&error));
                        }
                        return Ended::Failed(error.to_string());
                    }
                    None => return Ended::Failed("the run ended without a result".into()),
                },
                () = &mut cancel => return Ended::Cancelled,
            }
            if self.screen.closed() {
                return Ended::Closed;
            }
        }
    }

    /// Asks the person about each interrupt; `None` when they cancel (Ctrl-C, Ctrl-D).
    fn decide(&mut self, interrupts: &[PendingInterrupt]) -> Option<Vec<(String, Decision)>> {
        interrupts
            .iter()
            .map(|interrupt| Some((interrupt.id.clone(), self.decide_one(interrupt)?)))
            .collect()
    }

    fn decide_one(&mut self, interrupt: &PendingInterrupt) -> Option<Decision> {
        let payload = &interrupt.payload;
        match payload["kind"].as_str() {
            // One call of the approval handler.
            Some("approval") => {
                self.screen.ask(format_args!(
                    "{} {}: {}",
                    payload["tool"].as_str().unwrap_or("the tool"),
                    payload["arguments"],
                    payload["description"].as_str().unwrap_or("run it?")
                ));
                let offer = Offer::of(std::slice::from_ref(payload));
                self.approve(offer, &payload["arguments"])
            }
            // The calls of one turn, answered alike.
            Some("approvals") => {
                let calls = payload["calls"].as_array().map_or(&[][..], Vec::as_slice);
                for call in calls {
                    self.screen.ask(format_args!(
                        "{} {}: {}",
                        call["tool"].as_str().unwrap_or("a tool"),
                        call["arguments"],
                        call["description"].as_str().unwrap_or("run it?")
                    ));
                }
                // One answer for calls with different arguments: no editing.
                let offer = Offer {
                    edit: false,
                    ..Offer::of(calls)
                };
                self.approve(offer, &Value::Null)
            }
            // A question from a tool or a handler: the answer is the result.
            _ => {
                let question = payload
                    .as_str()
                    .map_or_else(|| payload.to_string(), str::to_owned);
                self.screen.ask(format_args!("{question}"));
                let answer = self.read("answer> ", "")?;
                Some(Decision::Respond {
                    answer: Value::String(answer),
                })
            }
        }
    }

    /// Asks "approve? [y/n/e(dit)]", offering only the decisions allowed,
    /// until the answer is one of them; `arguments` are the call's, for editing.
    fn approve(&mut self, offer: Offer, arguments: &Value) -> Option<Decision> {
        let question = offer.question();
        loop {
            let answer = self.read(&question, "")?.to_lowercase();
            match answer.as_str() {
                "y" | "yes" if offer.approve => return Some(Decision::Approve),
                "n" | "no" if offer.reject => {
                    let reason = self.read("reason (optional)> ", "")?;
                    let reason = if reason.is_empty() {
                        "The user rejected this call.".to_owned()
                    } else {
                        reason
                    };
                    return Some(Decision::Reject { reason });
                }
                "e" | "edit" if offer.edit => return self.edit(arguments),
                _ => {}
            }
        }
    }

    /// Asks for new arguments, starting from the call's, until they are JSON.
    fn edit(&mut self, arguments: &Value) -> Option<Decision> {
        let mut text = arguments.to_string();
        loop {
            text = self.read("arguments> ", &text)?;
            match serde_json::from_str(&text) {
                Ok(arguments) => return Some(Decision::Edit { arguments }),
                Err(error) => self.screen.note(format_args!("not JSON: {error}")),
            }
        }
    }

    /// One line from the person, trimmed, with `initial` already typed; `None` on
    /// Ctrl-C, Ctrl-D or a terminal that cannot be read.
    fn read(&mut self, prompt: &str, initial: &str) -> Option<String> {
        match self.editor.readline_with_initial(prompt, (initial, "")) {
            Ok(line) => Some(line.trim().to_owned()),
            Err(_) => None,
        }
    }
}

/// A thread id of its own for a chat that names none.
fn new_thread() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!("adk-{}-{nanos:x}", std::process::id())
}

/// The decisions a person is offered at an approval (approve, edit, reject): those
/// every call's `allowed` list (in the approval handler's payload) names; all of them
/// when a payload has no list.
#[derive(Debug, Clone, Copy)]
struct Offer {
    approve: bool,
    edit: bool,
    reject: bool,
}

impl Offer {
    fn of(calls: &[Value]) -> Offer {
        let allows = |name: &str| {
            calls.iter().all(|call| match call["allowed"].as_array() {
                Some(list) => list.iter().any(|a| a == name),
                None => true,
            })
        };
        let offer = Offer {
            approve: allows("approve"),
            edit: allows("edit"),
            reject: allows("reject"),
        };
        if offer.question_keys().is_empty() {
            // Nothing in common: offer a rejection, which the handler then refuses or
            // takes, rather than a question with no answer.
            Offer {
                reject: true,
                ..offer
            }
        } else {
            offer
        }
    }

    fn question_keys(self) -> Vec<&'static str> {
        [
            (self.approve, "y"),
            (self.reject, "n"),
            (self.edit, "e(dit)"),
        ]
        .into_iter()
        .filter_map(|(offered, key)| offered.then_some(key))
        .collect()
    }

    /// `approve? [y/n/e(dit)]` with the keys of the decisions offered.
    fn question(self) -> String {
        format!("approve? [{}] ", self.question_keys().join("/"))
    }
}
