//! What the multi-process tests (`tests/processes`, `tests/hosts`) share: stores opened
//! from a URL, a tool that logs its runs to a file every process appends to, and the
//! approval wrapper their bank agents use. (`#[path]`-included.)

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tower_adk::ToolResponse;
use tower_adk::checkpoint::{CheckpointStore, PostgresStore, RedisStore, SqliteStore};
use tower_adk::interrupt::Interrupt;
use tower_adk::{BoxError, Handler, Tool, ToolCallNext, ToolInfo, ToolOutput, ToolRequest};

/// The store at `url`: `sqlite:PATH`, `postgres://...` or `redis://...`.
pub(crate) async fn open(url: &str) -> Arc<dyn CheckpointStore> {
    if let Some(path) = url.strip_prefix("sqlite:") {
        Arc::new(SqliteStore::open(path).await.unwrap())
    } else if url.starts_with("postgres") {
        Arc::new(PostgresStore::connect(url).await.unwrap())
    } else {
        Arc::new(RedisStore::connect(url).await.unwrap())
    }
}

/// A tool that writes its name to the log each time it runs, whichever process runs it.
pub(crate) fn logged(name: &'static str, log: &Path) -> Tool {
    let log = log.to_owned();
    Tool::from_fn(
        ToolInfo::new(name, "Logs its runs"),
        move |_: ToolRequest| {
            let log = log.clone();
            async move {
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)?;
                writeln!(file, "{name}")?;
                file.sync_all()?;
                Ok::<_, std::io::Error>(ToolOutput::new(format!("{name} done")))
            }
        },
    )
}

/// How many times the tool `name` ran, in any process, as the log says.
pub(crate) fn runs_of(log: &Path, name: &str) -> usize {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter(|line| *line == name).count()
}

/// A name no earlier run of the tests used (the databases live as long as the servers).
pub(crate) fn unique() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}-{nanos}", std::process::id())
}

/// Asks before every transfer: interrupts until the call comes back with a decision.
#[derive(Debug, Clone)]
pub(crate) struct AskBefore;

impl Handler for AskBefore {
    async fn wrap_tool(
        &self,
        request: ToolRequest,
        next: ToolCallNext,
    ) -> Result<ToolResponse, BoxError> {
        if request.name == "transfer" && request.decision().is_none() {
            return Err(Interrupt::new(json!({"approve": request.arguments})).into());
        }
        next.run(request).await
    }
}
