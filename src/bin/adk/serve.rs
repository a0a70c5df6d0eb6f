//! `adk serve`: agent files served over HTTP by the server of
//! [`tower_adk::server`], until Ctrl-C (or SIGTERM): then it drains ([`Shutdown`]): new
//! runs are refused, those under way get [`DRAIN_DEADLINE`] to finish, and the rest are
//! cancelled (a durable one leaving a checkpoint to resume).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use tower_adk::file::Role;
use tower_adk::server::a2a::A2a;
use tower_adk::server::{BearerTokens, PrometheusMetrics, Server, Shutdown};

use crate::screen::{self, Screen};
use crate::{Failure, load};

/// How long the runs under way get to finish once a stop is asked for.
pub(crate) const DRAIN_DEADLINE: Duration = Duration::from_secs(10);

/// Reads `TOKEN=ROLE`.
pub(crate) fn parse_token(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((token, role)) if !token.is_empty() && !role.is_empty() => {
            Ok((token.to_owned(), role.to_owned()))
        }
        _ => Err("expected TOKEN=ROLE".to_owned()),
    }
}

/// Loads every file, then serves them on `addr`, to the holders of `tokens` if any, with
/// `GET /metrics` and over A2A if asked for.
pub(crate) async fn serve(
    files: &[PathBuf],
    addr: SocketAddr,
    tokens: Vec<(String, String)>,
    metrics: bool,
    a2a: bool,
) -> Result<(), Failure> {
    let mut server = Server::new();
    if metrics {
        let installed = PrometheusMetrics::install().map_err(|error| {
            screen::error(format_args!("{error}"));
            Failure::Run
        })?;
        server = server.metrics(installed.require_identity(!tokens.is_empty()));
    }
    if !tokens.is_empty() {
        let tokens = tokens
            .into_iter()
            .fold(BearerTokens::new(), |tokens, (token, role)| {
                tokens.token(token, Role::new(role))
            });
        server = server.identify(tokens);
    }
    let mut names: Vec<String> = Vec::new();
    for path in files {
        let agent = load::build(path, load::load(path).await?)?;
        if names.iter().any(|name| name == agent.name()) {
            screen::error(format_args!(
                "{}: another file already names an agent `{}`",
                path.display(),
                agent.name()
            ));
            return Err(Failure::File);
        }
        names.push(agent.name().to_owned());
        server = server.agent(agent.name(), agent.served());
    }
    if a2a {
        let face = match names.as_slice() {
            [only] => A2a::new().root(only.clone()),
            _ => A2a::new(),
        };
        server = server.a2a(face);
    }
    let (listener, bound) = listen(addr).await?;
    let mut screen = Screen::new();
    screen.ok(format_args!("serving on http://{bound}"));
    for name in &names {
        screen.line(format_args!("  POST http://{bound}/agents/{name}/runs"));
        if a2a {
            screen.line(format_args!("  A2A  http://{bound}/agents/{name}/a2a"));
        }
    }
    if let ([only], true) = (names.as_slice(), a2a) {
        let card = tower_adk::a2a::AGENT_CARD_PATH;
        screen.line(format_args!(
            "  A2A  http://{bound}/a2a ({only}; card at {card})"
        ));
    }
    if metrics {
        screen.line(format_args!("  GET http://{bound}/metrics"));
    }
    screen.note(format_args!("GET /agents lists them; Ctrl-C stops."));
    tokio::spawn(drain_on_stop(server.shutdown_handle()));
    // hyper's server with the default deadlines for headers and bodies (30 s each); it
    // stops once the drain is over.
    server.serve(listener).await.map_err(|error| {
        screen::error(format_args!("the server failed: {error}"));
        Failure::Run
    })?;
    Screen::new().note(format_args!("stopped"));
    Ok(())
}

/// Drains the server when a stop is asked for.
/// A listener on `addr`, and the address it is bound to (the port chosen for `:0`); a
/// failure said on the screen.
pub(crate) async fn listen(
    addr: SocketAddr,
) -> Result<(tokio::net::TcpListener, SocketAddr), Failure> {
    let cannot = |error: std::io::Error| {
        screen::error(format_args!("cannot listen on {addr}: {error}"));
        Failure::Run
    };
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(cannot)?;
    let bound = listener.local_addr().map_err(cannot)?;
    Ok((listener, bound))
}

async fn drain_on_stop(shutdown: Shutdown) {
    stop_asked().await;
    Screen::new().note(format_args!(
        "stopping: no new runs; {} s for those under way",
        DRAIN_DEADLINE.as_secs()
    ));
    let drained = shutdown.drain(DRAIN_DEADLINE).await;
    if drained.cancelled > 0 {
        Screen::new().note(format_args!("cancelled {} runs", drained.cancelled));
    }
}

/// Ctrl-C, or SIGTERM on Unix (how service managers and containers stop a process).
pub(crate) async fn stop_asked() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    () = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => interrupt.await,
        }
    }
    #[cfg(not(unix))]
    interrupt.await;
}
