//! The file's text into YAML nodes, in one pass over the parser's events: each event
//! is checked against the [`limits`](super::limits) before the loader builds anything
//! from it, and seen by the search for [duplicate keys](super::duplicates).
//!
//! (saphyr's own `load_from_str` recurses once per level, so a file nested deep enough
//! overflows the stack, and copies each alias's node as it comes: the events are fed to
//! its loader here instead, after the limits.)

use saphyr::{MarkedYaml, YamlLoader};
use saphyr_parser::{Parser, SpannedEventReceiver};

use super::duplicates::DuplicateKeys;
use super::error::{Location, Problem, ProblemKind};
use super::limits::Limits;

/// A file's YAML documents, and the keys its mappings repeat.
#[derive(Debug)]
pub(crate) struct Nodes<'t> {
    pub(crate) documents: Vec<MarkedYaml<'t>>,
    pub(crate) duplicates: Vec<Problem>,
}

/// Parses and loads `text`; the problem that stops it: a syntax error or a limit.
pub(crate) fn load(text: &str) -> Result<Nodes<'_>, Problem> {
    let mut limits = Limits::default();
    let mut duplicates = DuplicateKeys::default();
    let mut loader = YamlLoader::<MarkedYaml<'_>>::default();
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|error| {
            let location = Location::from_marker(*error.marker());
            let message = format!("not valid YAML: {}", error.info());
            Problem::new(ProblemKind::Syntax, location, message)
        })?;
        limits.check(&event, span)?;
        duplicates.see(&event, span);
        loader.on_event(event, span);
    }
    Ok(Nodes {
        documents: loader.into_documents(),
        duplicates: duplicates.problems,
    })
}
