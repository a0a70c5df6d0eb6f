//! `adk serve`: agent files served over HTTP by the server of
//! [`tower_adk::server`], until Ctrl-C (or SIGTERM), with the runs under way let finish.

use std::net::SocketAddr;
use std::path::PathBuf;

use tower_adk::file::Role;
use tower_adk::server::{BearerTokens, Server};

use crate::screen::{self, Screen};
use crate::{Failure, load};

/// Reads `TOKEN=ROLE`.
pub(crate) fn parse_token(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((token, role)) if !token.is_empty() && !role.is_empty() => {
            Ok((token.to_owned(), role.to_owned()))
        }
        _ => Err("expected TOKEN=ROLE".to_owned()),
    }
}

/// Loads every file, then serves them on `addr`, to the holders of `tokens` if any.
pub(crate) async fn serve(
    files: &[PathBuf],
    addr: SocketAddr,
    tokens: Vec<(String, String)>,
) -> Result<(), Failure> {
    let mut server = Server::new();
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
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|error| {
        screen::error(format_args!("cannot listen on {addr}: {error}"));
        Failure::Run
    })?;
    let bound = listener.local_addr().map_err(|error| {
        screen::error(format_args!("cannot listen on {addr}: {error}"));
        Failure::Run
    })?;
    let mut screen = Screen::new();
    screen.ok(format_args!("serving on http://{bound}"));
    for name in &names {
        screen.line(format_args!("  POST http://{bound}/agents/{name}/runs"));
    }
    screen.note(format_args!("GET /agents lists them; Ctrl-C stops."));
    axum::serve(listener, server.into_router())
        .with_graceful_shutdown(shutdown())
        .await
        .map_err(|error| {
            screen::error(format_args!("the server failed: {error}"));
            Failure::Run
        })?;
    Screen::new().note(format_args!("stopped"));
    Ok(())
}

/// Ctrl-C, or SIGTERM on Unix (how service managers and containers stop a process).
async fn shutdown() {
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
