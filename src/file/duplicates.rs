//! Keys that a mapping repeats: the loaded nodes keep only one value per key, so they
//! are found on the parser's events instead.

use std::collections::HashSet;

use saphyr_parser::{Event, Span};

use super::error::{Location, Problem, ProblemKind};

/// A collection being read: a mapping knows its keys and whether a key comes next.
#[derive(Debug)]
enum Frame {
    Sequence,
    Mapping {
        key_next: bool,
        keys: HashSet<String>,
    },
}

/// Finds, event by event, each key that its mapping has already.
#[derive(Debug, Default)]
pub(crate) struct DuplicateKeys {
    stack: Vec<Frame>,
    /// A problem at each repeated key.
    pub(crate) problems: Vec<Problem>,
}

impl DuplicateKeys {
    /// Takes one event.
    pub(crate) fn see(&mut self, event: &Event<'_>, span: Span) {
        match event {
            Event::MappingStart(..) => {
                self.node();
                self.stack.push(Frame::Mapping {
                    key_next: true,
                    keys: HashSet::new(),
                });
            }
            Event::SequenceStart(..) => {
                self.node();
                self.stack.push(Frame::Sequence);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            Event::Scalar(value, ..) => {
                let is_key = self.node();
                if let (true, Some(Frame::Mapping { keys, .. })) = (is_key, self.stack.last_mut())
                    && !keys.insert(value.to_string())
                {
                    let at = Location::from_marker(span.start);
                    let message = format!("the key `{value}` is given twice here: keep one");
                    self.problems.push(
                        Problem::new(ProblemKind::DuplicateKey, at, message)
                            .width(value.chars().count()),
                    );
                }
            }
            Event::Alias(..) => {
                self.node();
            }
            _ => {}
        }
    }

    /// A node starts in the innermost collection; whether it is a mapping's key.
    fn node(&mut self) -> bool {
        match self.stack.last_mut() {
            Some(Frame::Mapping { key_next, .. }) => {
                let is_key = *key_next;
                *key_next = !*key_next;
                is_key
            }
            _ => false,
        }
    }
}
