//! An OpenAI-compatible model behind stock tower middleware: a timeout on each attempt and
//! a retry policy that asks [`OpenAiError::is_retryable`] what is worth another try and
//! waits as long as a rate limit asks.
//!
//! ```text
//! scripts/setup-openai-mocks                              # once: installs llmock
//! cargo run --features openai --example openai_retry      # starts llmock, breaks it, recovers
//! ```
//!
//! Without `OPENAI_BASE_URL` the example starts llmock (from `scripts/setup-openai-mocks`)
//! on a free port and scripts three failures before the first answer: a 429 asking for a
//! one-second wait, a 503, and a reply held for five seconds (the timeout cuts it off).
//! With `OPENAI_BASE_URL` (and `OPENAI_MODEL`, `OPENAI_API_KEY`) it runs on that server,
//! and retries only what that server really gets wrong.
//!
//! Retries see the errors of the service's future: statuses, rate limits, refused
//! connections, a timeout before the reply starts. Once a streamed reply has started,
//! its errors arrive in the stream (and its text may have reached the caller): a stalled
//! stream is cut off by the model's own read timeout, not retried.

mod common;

use std::error::Error;
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tower::retry::{Policy, RetryLayer};
use tower::timeout::error::Elapsed;
use tower::{BoxError, ServiceBuilder};
use tower_adk::providers::openai::{OpenAiError, OpenAiModel};
use tower_adk::{Agent, AgentRequest, ModelRequest, ModelResponse, Tool, ToolInfo, ToolOutput};

/// The longest wait between two attempts, whatever the server asks.
const MAX_WAIT: Duration = Duration::from_secs(10);

/// Retries retryable model errors and timeouts, at most `attempts_left` times: after the
/// wait the server asked for, else after `backoff`, doubled at each retry.
#[derive(Debug, Clone)]
struct RetryModel {
    attempts_left: usize,
    backoff: Duration,
}

impl Policy<ModelRequest, ModelResponse, BoxError> for RetryModel {
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        _: &mut ModelRequest,
        result: &mut Result<ModelResponse, BoxError>,
    ) -> Option<Self::Future> {
        let error = result.as_ref().err()?;
        let wait = if error.is::<Elapsed>() {
            self.backoff
        } else {
            let error = OpenAiError::find(&**error).filter(|e| e.is_retryable())?;
            error.retry_after().unwrap_or(self.backoff)
        };
        self.attempts_left = self.attempts_left.checked_sub(1)?;
        self.backoff *= 2;
        let wait = wait.min(MAX_WAIT);
        println!("  [retry] {error}; again in {wait:?}");
        Some(tokio::time::sleep(wait))
    }

    fn clone_request(&mut self, request: &ModelRequest) -> Option<ModelRequest> {
        Some(request.clone())
    }
}

fn weather() -> Tool {
    Tool::from_fn(
        ToolInfo::new("weather", "Current weather in a city").parameters(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        })),
        |req: tower_adk::ToolRequest| async move {
            let city = req.arguments["city"].as_str().unwrap_or("?").to_owned();
            Ok::<_, std::convert::Infallible>(ToolOutput::new(format!("21C in {city}")))
        },
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // Kept alive until the end: dropping it stops the mock.
    let (model, _mock) = match std::env::var_os("OPENAI_BASE_URL") {
        Some(_) => (OpenAiModel::from_env()?, None),
        None => {
            let mock = mock::Llmock::start()?;
            mock.script(json!([
                {"type": "fail", "status": 429, "retry_after": 1, "message": "Rate limit reached"},
                {"type": "fail", "status": 503},
                {"type": "delay", "seconds": 5}
            ]))?;
            let model = OpenAiModel::builder()
                .base_url(mock.base_url())
                .model("gpt-4o-mini")
                .build()?;
            (model, Some(mock))
        }
    };
    println!("model {} at {}", model.model_name(), model.endpoint());

    // Outermost first: the retry wraps the timeout, so each attempt gets its 2 seconds.
    let model = ServiceBuilder::new()
        .layer(RetryLayer::new(RetryModel {
            attempts_left: 4,
            backoff: Duration::from_millis(200),
        }))
        .timeout(Duration::from_secs(2))
        .service(model);
    let agent = Agent::builder(model).tool(weather()).build()?;

    let mut run = agent.run(AgentRequest::user("What is the weather in Paris?"));
    while let Some(event) = run.next().await {
        if common::print_event(&event?) {
            break;
        }
    }
    Ok(())
}

/// Just enough to start llmock and script it, for running this example on its own.
mod mock {
    use std::error::Error;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    /// An llmock process, stopped when dropped.
    pub(crate) struct Llmock {
        child: Child,
        port: u16,
    }

    impl Llmock {
        pub(crate) fn start() -> Result<Self, Box<dyn Error>> {
            let exe =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/openai/bin/llmock");
            if !exe.exists() {
                return Err("llmock is not installed: run scripts/setup-openai-mocks, or set OPENAI_BASE_URL".into());
            }
            let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
            let child = Command::new(exe)
                .args(["serve", "--host", "127.0.0.1", "--port", &port.to_string()])
                .args(["--log-level", "warning"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            let mock = Llmock { child, port };
            let deadline = Instant::now() + Duration::from_secs(30);
            while mock.request("/health", "").is_err() {
                if Instant::now() > deadline {
                    return Err("llmock did not start".into());
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Ok(mock)
        }

        pub(crate) fn base_url(&self) -> String {
            format!("http://127.0.0.1:{}/v1", self.port)
        }

        /// Queues llmock behaviours for the next requests.
        pub(crate) fn script(&self, behaviors: serde_json::Value) -> Result<(), Box<dyn Error>> {
            let body = serde_json::json!({"behaviors": behaviors}).to_string();
            self.request("/_llmock/scenario", &body)?;
            Ok(())
        }

        fn request(&self, path: &str, body: &str) -> std::io::Result<String> {
            let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
            let method = if body.is_empty() { "GET" } else { "POST" };
            write!(
                stream,
                "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            )?;
            let mut response = String::new();
            stream.read_to_string(&mut response)?;
            Ok(response)
        }
    }

    impl Drop for Llmock {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
