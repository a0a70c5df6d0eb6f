//! The file's text into YAML nodes, in one pass over the parser's events: each event
//! is checked against the [`limits`](super::limits) before the loader builds anything
//! from it, and seen by the search for [duplicate keys](super::duplicates). A file that
//! does not parse and holds tabs is parsed again with its [tabs](super::tabs) as
//! spaces, so that they do not hide its other problems.
//!
//! (saphyr's own `load_from_str` recurses once per level, so a file nested deep enough
//! overflows the stack, and copies each alias's node as it comes: the events are fed to
//! its loader here instead, after the limits.)

use saphyr::{MarkedYaml, YamlLoader};
use saphyr_parser::{BufferedInput, Input, Parser, SpannedEventReceiver};

use super::duplicates::DuplicateKeys;
use super::error::{Location, Problem, ProblemKind};
use super::limits::Limits;
use super::tabs::Tabs;

/// A file's YAML documents, and the problems found on the way: keys repeated, tabs.
#[derive(Debug)]
pub(crate) struct Nodes<'t> {
    pub(crate) documents: Vec<MarkedYaml<'t>>,
    pub(crate) problems: Vec<Problem>,
}

impl Nodes<'_> {
    /// Adds the problems found loading a file that holds one document (`what`, e.g.
    /// "an agent file") to `problems`: the loader's own, and one at a second document.
    pub(crate) fn one_document(self, what: &str, problems: &mut Vec<Problem>) {
        problems.extend(self.problems);
        if let Some(extra) = self.documents.get(1) {
            let message = format!("{what} holds one YAML document");
            problems.push(Problem::new(
                ProblemKind::Syntax,
                super::yaml::location(extra),
                message,
            ));
        }
    }
}

/// Parses and loads `text`; the problems that stop it: a syntax error or a limit (with
/// the tabs before it).
pub(crate) fn load(text: &str) -> Result<Nodes<'_>, Vec<Problem>> {
    match from_events(Parser::new_from_str(text), None) {
        Err(first) if first.kind() == ProblemKind::Syntax && text.contains('\t') => {
            tabs_as_spaces(text, first)
        }
        loaded => loaded.map_err(|problem| vec![problem]),
    }
}

/// `text` parsed with its tabs as spaces: each tab outside a scalar is a problem, and
/// the nodes are the rest of the file's, for its other problems. The `first` syntax
/// error when no tab is to blame.
fn tabs_as_spaces(text: &str, first: Problem) -> Result<Nodes<'_>, Vec<Problem>> {
    let mut tabs = Tabs::new(text);
    let spaced = text.chars().map(|c| if c == '\t' { ' ' } else { c });
    match from_events(Parser::new(BufferedInput::new(spaced)), Some(&mut tabs)) {
        Ok(mut nodes) => {
            let found = tabs.finish(None);
            if found.is_empty() {
                return Err(vec![first]);
            }
            nodes.problems.extend(found);
            Ok(nodes)
        }
        Err(problem) => {
            let mut found = tabs.finish(Some(problem.location()));
            found.push(problem);
            Err(found)
        }
    }
}

/// The nodes of the parser's events, checked against the limits; `tabs`, if given,
/// sees each event too.
fn from_events<'t, I: Input>(
    parser: Parser<'t, I>,
    mut tabs: Option<&mut Tabs>,
) -> Result<Nodes<'t>, Problem> {
    let mut limits = Limits::default();
    let mut duplicates = DuplicateKeys::default();
    let mut loader = YamlLoader::<MarkedYaml<'t>>::default();
    for event in parser {
        let (event, span) = event.map_err(|error| {
            let location = Location::from_marker(*error.marker());
            let message = format!("not valid YAML: {}", error.info());
            Problem::new(ProblemKind::Syntax, location, message)
        })?;
        limits.check(&event, span)?;
        duplicates.see(&event, span);
        if let Some(tabs) = tabs.as_deref_mut() {
            tabs.see(&event, span);
        }
        loader.on_event(event, span);
    }
    Ok(Nodes {
        documents: loader.into_documents(),
        problems: duplicates.problems,
    })
}
