//! `adk eval`: an eval set run against an agent file, scored, shown as a table, and
//! written as JSON and HTML; the exit status says whether every score met its threshold.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use tower_adk::BoxError;
use tower_adk::eval::{EvalReport, Evaluator};
use tower_adk::file::{AgentFile, EvalSetFile, FileAgent, LoadError, Registry};
use tower_adk::testing::cassette::Cassette;

use crate::screen::{self, Screen};
use crate::{Failure, load};

/// What `adk eval` was asked.
#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) agent: PathBuf,
    pub(crate) set: PathBuf,
    pub(crate) json: Option<PathBuf>,
    pub(crate) html: Option<PathBuf>,
    pub(crate) baseline: Option<PathBuf>,
    pub(crate) concurrency: usize,
    pub(crate) cassettes: Option<PathBuf>,
    pub(crate) clock: Option<SystemTime>,
}

impl Options {
    /// Reads everything first (a wrong file is status 2 before anything runs), then
    /// runs the cases and reports.
    pub(crate) async fn run(self) -> Result<(), Failure> {
        let set = EvalSetFile::from_path(&self.set).map_err(|errors| {
            screen::problems(&errors);
            Failure::File
        })?;
        let baseline = self.baseline.as_deref().map(read_baseline).transpose()?;
        let mut registry = Registry::new();
        if let Some(fixed) = self.clock {
            registry = registry.clock(move || fixed);
        }
        let judge = set.judge(&registry).map_err(|error| {
            screen::error(format_args!("{}: judge: {error}", self.set.display()));
            Failure::File
        })?;
        if let Some(dir) = &self.cassettes {
            // Checked before anything runs: a wrong ADK_CASSETTE_MODE is a usage error.
            Cassette::new(dir).resolved_mode().map_err(|error| {
                screen::error(format_args!("--cassettes: {error}"));
                Failure::File
            })?;
        }
        let loaded = load::load(&self.agent).await?;
        // A scripted model plays its script once across runs: each case gets an agent of
        // its own, which plays it from the start; so does each case with a cassette of
        // its own, or a fixed clock. Any other model is shared.
        let scripted = loaded.scripted_model().is_some() || self.clock.is_some();
        let shared = load::build(&self.agent, loaded)?;
        let file = AgentFile::reader()
            .registry(&registry)
            .read_path(&self.agent)
            .map_err(|errors| {
                screen::problems(&errors);
                Failure::File
            })?;
        let mut evaluator = Evaluator::new(set.set()).concurrency(self.concurrency);
        if let Some(judge) = judge {
            evaluator = evaluator.judge(judge);
        }
        let report = evaluator
            .run_with(|case| {
                let (file, registry, shared) = (&file, &registry, shared.clone());
                let cassette = self.cassettes.as_deref().map(|dir| cassette(dir, &case.id));
                async move {
                    match cassette {
                        Some(cassette) => fresh(file, registry, Some(cassette?)).await,
                        None if scripted => fresh(file, registry, None).await,
                        None => Ok(shared),
                    }
                }
            })
            .await;
        self.report(&report, baseline.as_ref())
    }

    /// The table on stdout, the files written; `Failure::Run` when a case failed.
    fn report(&self, report: &EvalReport, baseline: Option<&EvalReport>) -> Result<(), Failure> {
        let mut screen = Screen::new();
        screen.line(format_args!("{}", report.table(baseline)));
        screen.flush();
        if let Some(path) = &self.json {
            let json = serde_json::to_string_pretty(report).map_err(|error| {
                screen::error(format_args!("cannot write the report as JSON: {error}"));
                Failure::Run
            })?;
            write(path, &json)?;
            screen.note(format_args!("wrote {}", path.display()));
        }
        if let Some(path) = &self.html {
            write(path, &report.html(baseline))?;
            screen.note(format_args!("wrote {}", path.display()));
        }
        if screen.closed() {
            return Err(Failure::Closed);
        }
        if report.passed() {
            Ok(())
        } else {
            Err(Failure::Run)
        }
    }
}

/// A case's cassette, `DIR/CASE_ID.json`: only for an id that is a plain file name, so
/// that an eval set cannot have files read or written outside the directory.
fn cassette(dir: &Path, id: &str) -> Result<Cassette, BoxError> {
    let plain = id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    if !plain || id.starts_with('.') {
        return Err(format!(
            "the case id `{id}` cannot name a cassette: use letters, digits, `_`, `-` and `.`"
        )
        .into());
    }
    Ok(Cassette::new(dir.join(format!("{id}.json"))))
}

/// The agent loaded anew, with a script of its own, its model behind the case's cassette
/// when there is one.
async fn fresh(
    file: &AgentFile,
    registry: &Registry,
    cassette: Option<Cassette>,
) -> Result<FileAgent, BoxError> {
    let mut loaded = file.load(registry).await.map_err(|error| match error {
        LoadError::File(errors) => BoxError::from(errors.to_string()),
        other => other.into(),
    })?;
    if let Some(cassette) = cassette {
        loaded = loaded.model_layer(cassette.layer()?);
    }
    Ok(loaded.build()?)
}

/// A previous run's JSON report.
fn read_baseline(path: &Path) -> Result<EvalReport, Failure> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        screen::error(format_args!(
            "cannot read the baseline {}: {error}",
            path.display()
        ));
        Failure::File
    })?;
    serde_json::from_str(&text).map_err(|error| {
        screen::error(format_args!(
            "{}:{}:{}: not an `adk eval --json` report: {error}",
            path.display(),
            error.line(),
            error.column()
        ));
        Failure::File
    })
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|error| {
        screen::error(format_args!("cannot write {}: {error}", path.display()));
        Failure::Run
    })
}
