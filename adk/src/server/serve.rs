//! [`Server::serve`](super::Server::serve): the router on a TCP listener, served by
//! hyper as `axum::serve` serves it, but with a timer, so that hyper bounds how long a
//! request's headers take to arrive.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

/// Serves `router` on `listener`, each connection's headers within `header_timeout`,
/// until `stop` resolves; then waits for the open connections to close (gracefully:
/// each finishes the request it serves).
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    header_timeout: Duration,
    stop: impl Future<Output = ()>,
) -> io::Result<()> {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let connections = GracefulShutdown::new();
    let mut stop = pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                wait_out(&error).await;
                continue;
            }
        };
        // Events are small writes: send each at once.
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let connection = http.serve_connection(TokioIo::new(stream), service);
        let connection = connections.watch(connection);
        tokio::spawn(async move {
            // A connection's failure (a client that went away) is its own.
            let _ = connection.await;
        });
    }
    drop(listener);
    connections.shutdown().await;
    Ok(())
}

/// Waits out an error accepting a connection, as `axum::serve` does: none for an error
/// of that connection, a second for one of the process (too many open files).
async fn wait_out(error: &io::Error) {
    let of_the_connection = matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    );
    if !of_the_connection {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
