//! How `adk` writes to the terminal: a run's events as they happen, notes and errors,
//! styled with [`anstyle`] through [`anstream`], which drops the styles when the output
//! is not a terminal or `NO_COLOR` is set (as clap does for the help).
//!
//! A standard output whose reader went away (`adk run ... | head -1`) is not an error:
//! the screen stops writing and says so ([`Screen::closed`]), and the command ends
//! quietly, with status 0, as `head` meant it to (ripgrep does the same).

use std::collections::HashMap;
use std::fmt;
use std::io::Write;

use anstyle::{AnsiColor, Style};
use tower_adk::file::FileErrors;
use tower_adk::wire::WireEvent;
use tower_adk::{AgentEvent, AgentResult, RunStatus};

const TOOL: Style = AnsiColor::Cyan.on_default();
const CHUNK: Style = Style::new().dimmed();
const NOTE: Style = Style::new().dimmed();
const GOOD: Style = AnsiColor::Green.on_default().bold();
const BAD: Style = AnsiColor::Red.on_default().bold();
const NOTE_BOLD: Style = AnsiColor::Cyan.on_default().bold();
const ASK: Style = AnsiColor::Yellow.on_default().bold();

/// The longest tool result shown in full; longer ones are cut (the model sees them whole).
const RESULT_CHARS: usize = 200;

/// Standard output (or, in tests, a buffer), and where a run's output stands: whether
/// the cursor is at the start of a line, whether this turn's text streamed, and the
/// arguments of the tool calls announced and not started yet.
#[derive(Debug)]
pub(crate) struct Screen<W = anstream::Stdout> {
    out: W,
    /// The output's reader went away: nothing more is written.
    closed: bool,
    line_start: bool,
    streamed: bool,
    arguments: HashMap<String, String>,
    /// The text of the run's last message shown, to tell whether its final message,
    /// when a tool ends the run with one of its own, is still to be shown.
    last_text: String,
}

impl Screen {
    /// The screen on standard output.
    pub(crate) fn new() -> Self {
        Screen::on(anstream::stdout())
    }
}

impl<W: Write> Screen<W> {
    fn on(out: W) -> Self {
        Screen {
            out,
            closed: false,
            line_start: true,
            streamed: false,
            arguments: HashMap::new(),
            last_text: String::new(),
        }
    }

    /// Shows one event of a run as it happens: text as it streams, a tool call when it
    /// starts (with its arguments), its chunks, and its result.
    pub(crate) fn event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TextDelta(text) => {
                self.streamed = true;
                self.write(format_args!("{text}"));
                self.line_start = text.ends_with('\n');
            }
            AgentEvent::Message(message) => {
                // A model that does not stream sends its text only here.
                if !self.streamed && !message.content().is_empty() {
                    self.write(format_args!("{}", message.content()));
                    self.line_start = false;
                }
                self.streamed = false;
                message.content().clone_into(&mut self.last_text);
                for call in message.tool_calls() {
                    self.arguments
                        .insert(call.id.to_string(), call.arguments.to_string());
                }
            }
            AgentEvent::ToolCallStarted { call_id, name } => {
                let arguments = self.arguments.get(&**call_id).cloned().unwrap_or_default();
                self.line(format_args!(
                    "{TOOL}→ {name}{TOOL:#} {NOTE}{arguments}{NOTE:#}"
                ));
            }
            AgentEvent::ToolOutputChunk { chunk, .. } => {
                for piece in chunk.lines() {
                    self.line(format_args!("{CHUNK}  │ {piece}{CHUNK:#}"));
                }
            }
            AgentEvent::ToolResult(record) => match &record.error {
                None => self.line(format_args!(
                    "{GOOD}  ✓{GOOD:#} {}: {}",
                    record.name,
                    cut(&record.content)
                )),
                Some(error) => self.line(format_args!(
                    "{BAD}  ✗{BAD:#} {}: {}",
                    record.name,
                    cut(&error.to_string())
                )),
            },
            _ => {}
        }
        self.flush();
    }

    /// Forgets the tool calls of the last message (a run and its resumes share them).
    pub(crate) fn start_turn(&mut self) {
        self.arguments.clear();
        self.last_text.clear();
    }

    /// Shows the final message of a completed run when no message event showed it: a
    /// tool ended the run with a message of its own (the slots' "I have everything I
    /// need", a tool that returns directly).
    pub(crate) fn completed(&mut self, result: &AgentResult) {
        let text = result.final_message.content();
        if result.status != RunStatus::Interrupted && !text.is_empty() && text != self.last_text {
            self.line(format_args!("{text}"));
            text.clone_into(&mut self.last_text);
            self.flush();
        }
    }

    /// Ends the line the run's text left open.
    pub(crate) fn end_run(&mut self) {
        self.streamed = false;
        if !self.line_start {
            self.write(format_args!("\n"));
            self.line_start = true;
        }
        self.flush();
    }

    /// A line of its own.
    pub(crate) fn line(&mut self, line: fmt::Arguments<'_>) {
        if !self.line_start {
            self.write(format_args!("\n"));
        }
        self.write(format_args!("{line}\n"));
        self.line_start = true;
    }

    /// A line that says something went well.
    pub(crate) fn ok(&mut self, line: fmt::Arguments<'_>) {
        self.line(format_args!("{GOOD}✓{GOOD:#} {line}"));
    }

    /// Starts a new line even where the terminal wrote something of its own (the `^C`
    /// it echoes).
    pub(crate) fn break_line(&mut self) {
        self.write(format_args!("\n"));
        self.line_start = true;
    }

    /// A dimmed line about the session rather than the conversation.
    pub(crate) fn note(&mut self, line: fmt::Arguments<'_>) {
        self.line(format_args!("{NOTE}{line}{NOTE:#}"));
        self.flush();
    }

    /// A question for the person, on its own line.
    pub(crate) fn ask(&mut self, line: fmt::Arguments<'_>) {
        self.line(format_args!("{ASK}?{ASK:#} {line}"));
        self.flush();
    }

    /// One event on a line of its own, in its wire form (`adk run --json`).
    pub(crate) fn wire(&mut self, event: &WireEvent) {
        match serde_json::to_string(event) {
            Ok(line) => {
                self.write(format_args!("{line}\n"));
                self.flush();
            }
            Err(failure) => error(format_args!("cannot write an event as JSON: {failure}")),
        }
    }

    /// Whether the output's reader went away (a closed pipe): whatever is left to show
    /// has no one to read it.
    pub(crate) fn closed(&self) -> bool {
        self.closed
    }

    pub(crate) fn flush(&mut self) {
        let flushed = self.out.flush();
        self.note_closed(flushed);
    }

    fn write(&mut self, text: fmt::Arguments<'_>) {
        if !self.closed {
            let written = self.out.write_fmt(text);
            self.note_closed(written);
        }
    }

    /// A closed pipe closes the screen; other errors (a terminal that went away) leave
    /// nothing to show them on, and are let go.
    fn note_closed(&mut self, outcome: std::io::Result<()>) {
        if let Err(error) = outcome
            && error.kind() == std::io::ErrorKind::BrokenPipe
        {
            self.closed = true;
        }
    }
}

/// Writes an error to standard error.
pub(crate) fn error(message: fmt::Arguments<'_>) {
    let _ = writeln!(anstream::stderr(), "{BAD}error{BAD:#}: {message}");
}

/// Writes a hint to standard error, after an error.
pub(crate) fn hint(message: fmt::Arguments<'_>) {
    let _ = writeln!(
        anstream::stderr(),
        "{NOTE_BOLD}note{NOTE_BOLD:#}: {message}"
    );
}

/// Writes a file's problems to standard error, each with its place in the file, in
/// one write (a file can have a hundred thousand of them).
pub(crate) fn problems(errors: &FileErrors) {
    use std::fmt::Write as _;
    let shown = errors.to_string();
    let mut styled = String::with_capacity(shown.len() + 64);
    for line in shown.lines() {
        let _ = match line.strip_prefix("error") {
            Some(rest) => writeln!(styled, "{BAD}error{BAD:#}{rest}"),
            None => writeln!(styled, "{line}"),
        };
    }
    let _ = anstream::stderr().write_all(styled.as_bytes());
}

/// The text, cut to [`RESULT_CHARS`] characters on one line.
fn cut(text: &str) -> String {
    let flat = text.replace('\n', " ");
    match flat.char_indices().nth(RESULT_CHARS) {
        Some((end, _)) => format!("{}…", &flat[..end]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tower_adk::{AgentEvent, Message, ToolCall, ToolRecord};

    use super::{Screen, cut};

    fn shown(events: &[AgentEvent]) -> String {
        // As on a terminal that takes no colours.
        let mut screen = Screen::on(anstream::StripStream::new(Vec::new()));
        for event in events {
            screen.event(event);
        }
        screen.end_run();
        String::from_utf8(screen.out.into_inner()).unwrap_or_default()
    }

    #[test]
    fn text_streams_then_tool_calls_their_chunks_and_results_get_lines_of_their_own() {
        let call = ToolCall::new("c1", "search", serde_json::json!({"q": "rust"}));
        let (id, name): (Arc<str>, Arc<str>) = (Arc::from("c1"), Arc::from("search"));
        let shown = shown(&[
            AgentEvent::TextDelta("Let me ".into()),
            AgentEvent::TextDelta("look.".into()),
            AgentEvent::Message(Message::assistant_with_calls(
                "Let me look.",
                vec![call.clone()],
            )),
            AgentEvent::ToolCallStarted {
                call_id: id.clone(),
                name: name.clone(),
            },
            AgentEvent::ToolOutputChunk {
                call_id: id,
                name,
                chunk: "page 1\npage 2".into(),
            },
            AgentEvent::ToolResult(Arc::new(ToolRecord::success(&call, "2 pages"))),
            AgentEvent::Message(Message::assistant("Found two pages.")),
        ]);
        assert_eq!(
            shown,
            "Let me look.\n→ search {\"q\":\"rust\"}\n  │ page 1\n  │ page 2\n  ✓ search: 2 pages\nFound two pages.\n"
        );
    }

    #[test]
    fn long_results_are_cut_on_one_line() {
        assert_eq!(cut("a\nb"), "a b");
        let long = "x".repeat(300);
        assert_eq!(cut(&long).chars().count(), 201);
        assert!(cut(&long).ends_with('…'));
    }
}
