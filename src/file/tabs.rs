//! Tabs where YAML wants spaces (indentation, after a key's `:`): saphyr stops at the
//! first with a syntax error, often placed on a neighbouring node, that hides every
//! other problem of the file. So a file that does not parse and holds tabs is parsed
//! again with each tab read as a space (one character for one: every other place stays
//! where it is); each run of tabs outside the file's scalars is then one problem at its
//! place, and the file's other problems are found as usual.
//!
//! A tab inside a scalar (a quoted string, a block of text) is the scalar's own, and one
//! in a comment or at the end of a line does no harm: neither is a problem.

use saphyr_parser::{Event, Span};

use super::error::{Location, Problem, ProblemKind};

/// A run of tabs: where it starts (a character index, as the parser counts) and how
/// many.
#[derive(Debug)]
struct Run {
    index: usize,
    at: Location,
    len: usize,
    /// In a comment, or with nothing but a comment after it on its line.
    harmless: bool,
}

/// The tabs of a file, sorted out event by event: those outside every scalar are
/// problems.
#[derive(Debug)]
pub(crate) struct Tabs {
    runs: Vec<Run>,
    /// The first run not yet sorted out.
    next: usize,
    problems: Vec<Problem>,
}

impl Tabs {
    /// The runs of tabs of `text`.
    pub(crate) fn new(text: &str) -> Self {
        let mut runs: Vec<Run> = Vec::new();
        for (number, (line, start)) in lines(text).enumerate() {
            let mut comment = false;
            let mut previous = ' ';
            for (column, (offset, c)) in line.char_indices().enumerate() {
                if c == '#' && previous.is_whitespace() {
                    comment = true;
                }
                if c == '\t' {
                    match runs.last_mut() {
                        Some(run)
                            if run.at.line == number + 1
                                && run.index + run.len == start + column =>
                        {
                            run.len += 1;
                        }
                        _ => {
                            let rest = line[offset..].trim_start_matches([' ', '\t']);
                            runs.push(Run {
                                index: start + column,
                                at: Location {
                                    line: number + 1,
                                    column: column + 1,
                                },
                                len: 1,
                                harmless: comment || rest.is_empty() || rest.starts_with('#'),
                            });
                        }
                    }
                }
                previous = c;
            }
        }
        Tabs {
            runs,
            next: 0,
            problems: Vec::new(),
        }
    }

    /// Takes one event of the file read with its tabs as spaces: the runs before a
    /// scalar are outside every scalar, those within it are its own.
    pub(crate) fn see(&mut self, event: &Event<'_>, span: Span) {
        if let Event::Scalar(..) = event {
            self.outside_until(|run| run.index < span.start.index());
            while self
                .runs
                .get(self.next)
                .is_some_and(|run| run.index < span.end.index())
            {
                self.next += 1;
            }
        }
    }

    /// The problems, once the events are over: up to the place where the parse stopped,
    /// if it did.
    pub(crate) fn finish(mut self, stopped: Option<Location>) -> Vec<Problem> {
        let place = |at: Location| (at.line, at.column);
        match stopped {
            Some(stop) => self.outside_until(|run| place(run.at) < place(stop)),
            None => self.outside_until(|_| true),
        }
        self.problems
    }

    /// The runs from the next one on, while `before` holds, are outside every scalar.
    fn outside_until(&mut self, before: impl Fn(&Run) -> bool) {
        while let Some(run) = self.runs.get(self.next).filter(|run| before(run)) {
            if !run.harmless {
                let message =
                    "a tab: YAML indents and separates with spaces only (read here as a space)";
                self.problems
                    .push(Problem::new(ProblemKind::Syntax, run.at, message).width(run.len));
            }
            self.next += 1;
        }
    }
}

/// Each line of `text` without its line break, and the character index it starts at.
fn lines(text: &str) -> impl Iterator<Item = (&str, usize)> {
    let mut start = 0;
    text.split_inclusive('\n').map(move |line| {
        let at = start;
        start += line.chars().count();
        (line.trim_end_matches(['\n', '\r']), at)
    })
}
