//! What the reader refuses before it builds a file's nodes: nesting deeper than
//! [`MAX_DEPTH`] levels, and aliases that together repeat more than
//! [`MAX_ALIASED_NODES`] nodes. Both are checked on the parser's events, as they come,
//! so that a hostile file costs what its text costs: a few hundred bytes of aliases
//! that would expand to billions of nodes (an "alias bomb") are refused at the alias
//! that passes the limit, and a file nested too deep for any stack at the level past
//! it.

use std::collections::HashMap;

use saphyr_parser::{Event, Span};

use super::error::{Location, Problem, ProblemKind};

/// The deepest an agent file nests: a collection inside this many others (the top
/// mapping is level 1) is refused, aliases counted as what they repeat.
pub(crate) const MAX_DEPTH: usize = 128;

/// The most nodes that all the aliases of a file may repeat together (an alias of a
/// list of ten scalars repeats eleven).
pub(crate) const MAX_ALIASED_NODES: u64 = 10_000;

/// How much a node is: its nodes with aliases expanded, and how many levels of
/// collections it holds (a scalar none, `[1]` one).
#[derive(Debug, Clone, Copy)]
struct Extent {
    nodes: u64,
    height: usize,
}

impl Extent {
    const SCALAR: Extent = Extent {
        nodes: 1,
        height: 0,
    };
}

/// A collection being read: its anchor (0 for none) and its extent so far.
#[derive(Debug)]
struct Open {
    anchor: usize,
    extent: Extent,
}

/// The limits, checked event by event.
#[derive(Debug, Default)]
pub(crate) struct Limits {
    open: Vec<Open>,
    anchors: HashMap<usize, Extent>,
    aliased: u64,
}

impl Limits {
    /// Takes one event; a problem at it when it passes a limit.
    pub(crate) fn check(&mut self, event: &Event<'_>, span: Span) -> Result<(), Problem> {
        match *event {
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.open.len() >= MAX_DEPTH {
                    return Err(too_deep(span));
                }
                let extent = Extent {
                    nodes: 1,
                    height: 1,
                };
                self.open.push(Open { anchor, extent });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(Open { anchor, extent }) = self.open.pop() {
                    self.close(extent, anchor);
                }
            }
            Event::Scalar(_, _, anchor, _) => self.close(Extent::SCALAR, anchor),
            Event::Alias(anchor) => {
                // An anchor still open (`&a [*a]`) is loaded as nothing: one node.
                let extent = self.anchors.get(&anchor).copied().unwrap_or(Extent::SCALAR);
                if self.open.len() + extent.height > MAX_DEPTH {
                    return Err(too_deep(span));
                }
                self.aliased = self.aliased.saturating_add(extent.nodes);
                if self.aliased > MAX_ALIASED_NODES {
                    let message = format!(
                        "with this alias, the file's aliases repeat more than {MAX_ALIASED_NODES} nodes, \
                         the most an agent file may: write the repeated part out, or repeat less"
                    );
                    let at = Location::from_marker(span.start);
                    return Err(Problem::new(ProblemKind::AliasExpansion, at, message));
                }
                self.close(extent, 0);
            }
            _ => {}
        }
        Ok(())
    }

    /// A node read whole: its anchor remembers its extent, its collection grows by it.
    fn close(&mut self, extent: Extent, anchor: usize) {
        if anchor != 0 {
            self.anchors.insert(anchor, extent);
        }
        if let Some(parent) = self.open.last_mut() {
            parent.extent.nodes = parent.extent.nodes.saturating_add(extent.nodes);
            parent.extent.height = parent.extent.height.max(extent.height + 1);
        }
    }
}

fn too_deep(span: Span) -> Problem {
    let message = format!(
        "nested deeper than {MAX_DEPTH} levels, the most an agent file may (aliases count as what they repeat)"
    );
    Problem::new(
        ProblemKind::TooDeep,
        Location::from_marker(span.start),
        message,
    )
}
