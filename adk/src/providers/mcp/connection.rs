//! One server's connection, shared by its tools: connecting with retries, and connecting
//! again after the connection is lost.

use std::process::Stdio as ProcessStdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::Tool as McpTool;
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::sync::Mutex;

use super::error::McpError;
use super::progress::{Client, ProgressRouter};
use super::transport::{Http, Stdio, Transport};

/// The longest wait between two connect attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What a connection needs of its [`McpServer`](super::McpServer): the server's name, how
/// to reach it, and the rules for connecting and for calls.
pub(crate) struct ConnectionConfig {
    pub(crate) name: String,
    pub(crate) transport: Transport,
    pub(crate) connect_retries: u32,
    pub(crate) retry_backoff: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) call_timeout: Duration,
}

/// A server's connection: the live MCP session, if any, and how to make a new one.
pub(crate) struct Connection {
    config: ConnectionConfig,
    progress: ProgressRouter,
    /// Held while connecting, so concurrent calls that find the connection lost wait for
    /// one reconnect instead of each starting a server.
    live: Mutex<Option<Live>>,
    /// Numbers the sessions, from 1.
    sessions: AtomicU64,
    /// The newest session a call found lost; it and older ones are not used again.
    lost: AtomicU64,
}

struct Live {
    service: RunningService<RoleClient, Client>,
    number: u64,
}

/// A handle for one call: the session's peer, and which session it is.
pub(crate) struct Session {
    pub(crate) peer: Peer<RoleClient>,
    number: u64,
}

impl Connection {
    /// Connects (within the retry budget) and lists the server's tools.
    pub(crate) async fn open(
        config: ConnectionConfig,
    ) -> Result<(Arc<Connection>, Vec<McpTool>), McpError> {
        let connection = Connection {
            config,
            progress: ProgressRouter::default(),
            live: Mutex::new(None),
            sessions: AtomicU64::new(0),
            lost: AtomicU64::new(0),
        };
        let (service, tools) = connection
            .with_retries(|| async {
                let service = connection.connect_once().await?;
                let tools = service.peer().list_all_tools().await.map_err(|source| {
                    McpError::ListTools {
                        server: connection.server().to_owned(),
                        source: source.into(),
                    }
                })?;
                Ok((service, tools))
            })
            .await?;
        *connection.live.lock().await = Some(connection.live_session(service));
        Ok((Arc::new(connection), tools))
    }

    /// The server's name.
    pub(crate) fn server(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn config(&self) -> &ConnectionConfig {
        &self.config
    }

    pub(crate) fn progress(&self) -> &ProgressRouter {
        &self.progress
    }

    /// The live session, connecting again (within the retry budget) if it was lost.
    pub(crate) async fn session(&self) -> Result<Session, McpError> {
        let mut live = self.live.lock().await;
        if let Some(current) = live.as_ref() {
            let closed = current.service.peer().is_transport_closed();
            if !closed && current.number > self.lost.load(Ordering::Acquire) {
                return Ok(current.session());
            }
        }
        // Drop the dead session (and kill its process) before starting the next one.
        *live = None;
        let service = self.with_retries(|| self.connect_once()).await?;
        let current = live.insert(self.live_session(service));
        Ok(current.session())
    }

    /// Marks the session a call found broken, so that the next call connects again.
    pub(crate) fn lost(&self, session: &Session) {
        self.lost.fetch_max(session.number, Ordering::AcqRel);
    }

    fn live_session(&self, service: RunningService<RoleClient, Client>) -> Live {
        Live {
            service,
            number: self.sessions.fetch_add(1, Ordering::AcqRel) + 1,
        }
    }

    /// Runs `attempt` once, bounded by the connect timeout, then again after each failure
    /// within the retry budget, with a doubling backoff. A process that cannot be started
    /// is not retried.
    async fn with_retries<T, F, Fut>(&self, mut attempt: F) -> Result<T, McpError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, McpError>>,
    {
        let attempts = self.config.connect_retries.saturating_add(1);
        let timeout = self.config.connect_timeout;
        let mut backoff = self.config.retry_backoff;
        let mut made = 0;
        loop {
            made += 1;
            let result = tokio::time::timeout(timeout, attempt())
                .await
                .unwrap_or_else(|_| {
                    Err(McpError::ConnectTimeout {
                        server: self.server().to_owned(),
                        timeout,
                    })
                });
            match result {
                Ok(value) => return Ok(value),
                Err(error @ McpError::Spawn { .. }) => return Err(error),
                Err(error) if made >= attempts => {
                    return Err(McpError::Unavailable {
                        server: self.server().to_owned(),
                        attempts: made,
                        source: Box::new(error),
                    });
                }
                Err(_) => {
                    tokio::time::sleep(backoff).await;
                    backoff = backoff.saturating_mul(2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// One connect attempt: start or reach the server and complete the handshake.
    async fn connect_once(&self) -> Result<RunningService<RoleClient, Client>, McpError> {
        let client = Client::new(self.progress.clone());
        let handshake = |source: rmcp::service::ClientInitializeError| McpError::Handshake {
            server: self.server().to_owned(),
            source: source.into(),
        };
        match &self.config.transport {
            Transport::Stdio(stdio) => {
                let process = spawn(stdio).map_err(|source| McpError::Spawn {
                    server: self.server().to_owned(),
                    source,
                })?;
                client.serve(process).await.map_err(handshake)
            }
            Transport::Http(http) => {
                let transport = StreamableHttpClientTransport::from_config(http_config(http));
                client.serve(transport).await.map_err(handshake)
            }
        }
    }
}

impl Live {
    fn session(&self) -> Session {
        Session {
            peer: self.service.peer().clone(),
            number: self.number,
        }
    }
}

/// Whether a call's error means the connection is gone.
pub(crate) fn is_lost(error: &ServiceError) -> bool {
    matches!(
        error,
        ServiceError::TransportClosed | ServiceError::TransportSend(_)
    )
}

fn spawn(stdio: &Stdio) -> std::io::Result<TokioChildProcess> {
    let mut command = tokio::process::Command::new(&stdio.program);
    command.args(&stdio.args).kill_on_drop(true);
    command.envs(stdio.env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = &stdio.current_dir {
        command.current_dir(dir);
    }
    let stderr = if stdio.quiet {
        ProcessStdio::null()
    } else {
        ProcessStdio::inherit()
    };
    let (process, _stderr) = TokioChildProcess::builder(command).stderr(stderr).spawn()?;
    Ok(process)
}

fn http_config(http: &Http) -> StreamableHttpClientTransportConfig {
    let config = StreamableHttpClientTransportConfig::with_uri(http.url.as_str());
    match &http.bearer_token {
        Some(token) => config.auth_header(token.to_string()),
        None => config,
    }
}
