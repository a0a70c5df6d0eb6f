//! What fails is a typed [`A2aError`]: no server, a server that is no A2A agent, an
//! agent's JSON-RPC error with its code.

use std::time::Duration;

use tower_adk::a2a::client::{A2aError, RemoteAgent};

use super::peer::{Peer, free_port};

#[tokio::test]
async fn no_server_at_the_url_is_a_connect_error() {
    let url = format!("http://127.0.0.1:{}", free_port());
    let error = RemoteAgent::connect(&url).await.unwrap_err();
    assert!(matches!(error, A2aError::Connect { .. }), "{error:?}");
    assert!(error.is_connection());
}

#[tokio::test]
async fn a_server_that_is_no_a2a_agent_is_a_card_error() {
    let peer = Peer::start().await;
    // An HTTP server, but no card under this path.
    let error = RemoteAgent::connect(format!("{}/not-an-agent", peer.url()))
        .await
        .unwrap_err();
    let A2aError::Card { url, reason } = &error else {
        panic!("{error:?}");
    };
    assert!(
        url.ends_with("/not-an-agent/.well-known/agent-card.json"),
        "{url}"
    );
    assert!(reason.contains("404"), "{reason}");
    // JSON that is no card.
    let error = RemoteAgent::connect(format!("{}/_test/record.json", peer.url()))
        .await
        .unwrap_err();
    assert!(matches!(error, A2aError::Card { .. }), "{error:?}");
}

#[tokio::test]
async fn a_url_that_is_no_http_url_is_a_config_error() {
    for url in ["ftp://127.0.0.1/", "127.0.0.1:80", ""] {
        let error = RemoteAgent::connect(url).await.unwrap_err();
        assert!(matches!(error, A2aError::Config { .. }), "{url}: {error:?}");
    }
    let error = RemoteAgent::builder("http://127.0.0.1:1")
        .header("bad header", "x")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(error, A2aError::Config { .. }), "{error:?}");
}

#[tokio::test]
async fn the_agent_s_json_rpc_error_keeps_its_code() {
    let peer = Peer::start().await;
    let ledger = RemoteAgent::connect(peer.url()).await.unwrap();
    let error = ledger.cancel_task("no-such-task").await.unwrap_err();
    assert_eq!(error.code(), Some(-32001), "{error:?}");
    assert!(matches!(
        &error,
        A2aError::Remote {
            method: "CancelTask",
            ..
        }
    ));
    let error = ledger.get_task("no-such-task").await.unwrap_err();
    assert_eq!(error.code(), Some(-32001), "{error:?}");
}

#[tokio::test]
async fn a_slow_answer_is_a_timeout() {
    let peer = Peer::with_args(&["--no-streaming"]).await;
    let ledger = RemoteAgent::builder(peer.url())
        .request_timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap();
    let mut events = ledger.send(tower_adk::a2a::Message::new(
        "m1",
        tower_adk::a2a::Role::User,
        vec![tower_adk::a2a::Part::text("slow")],
    ));
    let error = futures::StreamExt::next(&mut events)
        .await
        .unwrap()
        .unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
}
