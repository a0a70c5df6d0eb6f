//! Connecting: the retry budget, and servers that cannot be started or never answer.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use tower_adk::ToolRequest;
use tower_adk::providers::mcp::{McpError, McpServer};

use crate::support::{self, tool};

/// A fresh start counter for flaky_start.py.
fn counter(test: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("tower-adk-mcp-{test}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn flaky(counter: &Path, failures: u32) -> McpServer {
    McpServer::stdio(
        support::python(),
        [
            support::script("flaky_start.py"),
            counter.to_path_buf(),
            PathBuf::from(failures.to_string()),
        ],
    )
    .name("flaky")
    .quiet()
    .retry_backoff(Duration::from_millis(10))
}

fn starts(counter: &Path) -> u32 {
    std::fs::read_to_string(counter)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn the_retry_budget_covers_a_server_that_fails_its_first_starts() {
    let counter = counter("retries-enough");
    let set = flaky(&counter, 2)
        .connect_retries(2)
        .connect()
        .await
        .unwrap();

    let tools = set.into_tools().unwrap();
    let output = tool(&tools, "add")
        .invoke(ToolRequest::new("c1", "add", json!({"a": 1, "b": 2})))
        .await
        .unwrap();
    assert_eq!(output.content, "3");
    assert_eq!(starts(&counter), 3);
}

#[tokio::test]
async fn a_server_that_fails_more_often_than_the_budget_allows_is_unavailable() {
    let counter = counter("retries-short");
    let error = flaky(&counter, 2)
        .connect_retries(1)
        .connect()
        .await
        .unwrap_err();

    assert!(
        matches!(&error, McpError::Unavailable { server, attempts: 2, source }
            if server == "flaky" && matches!(**source, McpError::Handshake { .. })),
        "{error:?}"
    );
    assert!(error.is_connection());
    assert_eq!(starts(&counter), 2);
}

#[tokio::test]
async fn a_program_that_cannot_be_started_is_a_spawn_error_without_retries() {
    let error = McpServer::stdio("/nonexistent/tower-adk-mcp-server", ["--stdio"])
        .connect_retries(5)
        .connect()
        .await
        .unwrap_err();

    let McpError::Spawn { server, source } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(server, "/nonexistent/tower-adk-mcp-server --stdio");
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
}

#[tokio::test]
async fn a_server_that_never_answers_the_handshake_times_out() {
    let started = Instant::now();
    let error = McpServer::stdio("sleep", ["30"])
        .connect_timeout(Duration::from_millis(300))
        .connect_retries(1)
        .retry_backoff(Duration::from_millis(10))
        .connect()
        .await
        .unwrap_err();

    assert!(error.is_timeout(), "{error:?}");
    assert!(
        matches!(error, McpError::Unavailable { attempts: 2, .. }),
        "{error:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_http_url_where_nothing_listens_is_unavailable() {
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = McpServer::http(format!("http://127.0.0.1:{port}/mcp"))
        .connect_retries(1)
        .retry_backoff(Duration::from_millis(10))
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap_err();

    assert!(
        matches!(error, McpError::Unavailable { attempts: 2, .. }),
        "{error:?}"
    );
}
