//! Keys that a mapping repeats: the loaded nodes keep only one value per key, so they
//! are found on the parser's events instead.

use std::collections::HashSet;

use saphyr_parser::{Event, Parser};

use super::error::{Location, Problem, ProblemKind};

/// A collection being read: a mapping knows its keys and whether a key comes next.
enum Frame {
    Sequence,
    Mapping {
        key_next: bool,
        keys: HashSet<String>,
    },
}

/// A problem at each key that its mapping has already. Stops at the first syntax error
/// (which the loader reports).
pub(crate) fn duplicate_keys(text: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else {
            break;
        };
        match event {
            Event::MappingStart(..) => {
                node(&mut stack);
                stack.push(Frame::Mapping {
                    key_next: true,
                    keys: HashSet::new(),
                });
            }
            Event::SequenceStart(..) => {
                node(&mut stack);
                stack.push(Frame::Sequence);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
            }
            Event::Scalar(value, ..) => {
                let is_key = node(&mut stack);
                if let (true, Some(Frame::Mapping { keys, .. })) = (is_key, stack.last_mut())
                    && !keys.insert(value.to_string())
                {
                    let at = Location::from_marker(span.start);
                    let message = format!("the key `{value}` is given twice here: keep one");
                    problems.push(
                        Problem::new(ProblemKind::DuplicateKey, at, message)
                            .width(value.chars().count()),
                    );
                }
            }
            Event::Alias(..) => {
                node(&mut stack);
            }
            _ => {}
        }
    }
    problems
}

/// A node starts in the innermost collection; whether it is a mapping's key.
fn node(stack: &mut [Frame]) -> bool {
    match stack.last_mut() {
        Some(Frame::Mapping { key_next, .. }) => {
            let is_key = *key_next;
            *key_next = !*key_next;
            is_key
        }
        _ => false,
    }
}
