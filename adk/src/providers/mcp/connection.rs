//! One server's connection, shared by its tools: connecting with retries, and connecting
//! again after the connection is lost.

use std::process::Stdio as ProcessStdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::Tool as McpTool;
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::sync::Mutex;

use super::McpError;
use super::progress::{Client, ProgressRouter};
use super::server::{Http, McpServer, Stdio, Transport};

/// The longest wait between two connect attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// A server's connection: the live MCP session, if any, and how to make a new one.
pub(crate) struct Connection {
    config: McpServer,
    progress: ProgressRouter,
    /// Held while connecting, so concurrent calls that find the connection lost wait for
    /// one reconnect instead of each starting a server.
    live: Mutex<Option<Live>>,
}

struct Live {
    service: RunningService<RoleClient, Client>,
    /// Counts connections, so a call that saw its connection fail drops that one only.
    generation: u64,
}

/// A handle for one call: the session's peer, and which connection it belongs to.
pub(crate) struct Session {
    pub(crate) peer: Peer<RoleClient>,
    generation: u64,
}

impl Connection {
    /// Connects (within the retry budget) and lists the server's tools.
    pub(crate) async fn open(
        config: McpServer,
    ) -> Result<(std::sync::Arc<Connection>, Vec<McpTool>), McpError> {
        let connection = Connection {
            config,
            progress: ProgressRouter::default(),
            live: Mutex::new(None),
        };
        let (service, tools) = connection
            .with_retries(|| async {
                let service = connection.connect_once().await?;
                let tools = connection
                    .bounded(service.peer().list_all_tools())
                    .await?
                    .map_err(|source| McpError::ListTools {
                        server: connection.server().to_owned(),
                        source: source.into(),
                    })?;
                Ok((service, tools))
            })
            .await?;
        *connection.live.lock().await = Some(Live {
            service,
            generation: 0,
        });
        Ok((std::sync::Arc::new(connection), tools))
    }

    /// The server's name.
    pub(crate) fn server(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn config(&self) -> &McpServer {
        &self.config
    }

    pub(crate) fn progress(&self) -> &ProgressRouter {
        &self.progress
    }

    /// The live session, connecting again (within the retry budget) if it was lost.
    pub(crate) async fn session(&self) -> Result<Session, McpError> {
        let mut live = self.live.lock().await;
        if let Some(current) = live.as_ref() {
            if !current.service.peer().is_transport_closed() {
                return Ok(Session {
                    peer: current.service.peer().clone(),
                    generation: current.generation,
                });
            }
        }
        let generation = live.as_ref().map_or(0, |l| l.generation) + 1;
        // Drop the dead session (and its process) before starting the next one.
        *live = None;
        let service = self.with_retries(|| self.connect_once()).await?;
        let session = Session {
            peer: service.peer().clone(),
            generation,
        };
        *live = Some(Live {
            service,
            generation,
        });
        Ok(session)
    }

    /// Forgets the session a call found broken, so that the next call connects again.
    pub(crate) async fn lost(&self, session: &Session) {
        let mut live = self.live.lock().await;
        if live
            .as_ref()
            .is_some_and(|l| l.generation == session.generation)
        {
            *live = None;
        }
    }

    /// Runs `attempt` once, then again after each failure within the retry budget, with
    /// a doubling backoff. A process that cannot be started is not retried.
    async fn with_retries<T, F, Fut>(&self, mut attempt: F) -> Result<T, McpError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, McpError>>,
    {
        let attempts = self.config.connect_retries.saturating_add(1);
        let mut backoff = self.config.retry_backoff;
        let mut made = 0;
        loop {
            made += 1;
            match attempt().await {
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

    /// One connect attempt: start or reach the server and complete the handshake, within
    /// the connect timeout.
    async fn connect_once(&self) -> Result<RunningService<RoleClient, Client>, McpError> {
        let client = Client::new(self.progress.clone());
        let server = || self.server().to_owned();
        let handshake = |source: rmcp::service::ClientInitializeError| McpError::Handshake {
            server: server(),
            source: source.into(),
        };
        match &self.config.transport {
            Transport::Stdio(stdio) => {
                let process = spawn(stdio).map_err(|source| McpError::Spawn {
                    server: server(),
                    source,
                })?;
                self.bounded(client.serve(process))
                    .await?
                    .map_err(handshake)
            }
            Transport::Http(http) => {
                let transport = StreamableHttpClientTransport::from_config(http_config(http));
                self.bounded(client.serve(transport))
                    .await?
                    .map_err(handshake)
            }
        }
    }

    /// Bounds a step of connecting by the connect timeout.
    async fn bounded<T>(&self, step: impl Future<Output = T>) -> Result<T, McpError> {
        tokio::time::timeout(self.config.connect_timeout, step)
            .await
            .map_err(|_| McpError::ConnectTimeout {
                server: self.server().to_owned(),
                timeout: self.config.connect_timeout,
            })
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
