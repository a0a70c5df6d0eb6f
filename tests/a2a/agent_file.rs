//! Agent files that name remote A2A agents (`remote_agents:`): each a tool of the file's
//! agent, its token from the environment, its problems at their places, an agent that
//! cannot be reached a load error.

use std::collections::HashMap;

use tower::ServiceExt;
use tower_adk::AgentRequest;
use tower_adk::a2a::client::A2aError;
use tower_adk::file::{AgentFile, FileErrors, LoadError, ProblemKind, Registry};

use super::peer::{Peer, free_port};

fn read(text: &str, vars: &[(&str, &str)]) -> Result<AgentFile, FileErrors> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    AgentFile::reader()
        .env(move |name| vars.get(name).cloned())
        .read_str(text, "support.yaml")
}

const SUPPORT: &str = r#"
name: support
model:
  provider: scripted
  turns:
    - call: {tool: billing, arguments: {message: stream invoice 7}}
    - text: Invoice 7 is paid.
remote_agents:
  - name: billing
    url: ${LEDGER_URL}
    description: Invoices and refunds, from the ledger
    bearer_token: {env: LEDGER_TOKEN}
    headers: {x-tenant: acme}
    request_timeout: 30s
    cancel_timeout: 1s
"#;

#[tokio::test]
async fn a_remote_agent_named_in_a_file_is_a_tool_of_its_agent() {
    let peer = Peer::with_args(&["--token", "s3cret"]).await;
    let url = peer.url();
    let file = read(SUPPORT, &[("LEDGER_URL", &url), ("LEDGER_TOKEN", "s3cret")])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file.remote_agents().collect::<Vec<_>>(), ["billing"]);
    let loaded = file
        .load(&Registry::new())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let model = loaded.scripted_model().cloned().unwrap();
    let agent = loaded.build().unwrap();

    let result = agent
        .oneshot(AgentRequest::user("Is invoice 7 paid?"))
        .await
        .unwrap()
        .await
        .unwrap();
    let record = &result.tool_records[0];
    assert_eq!(record.name, "billing");
    assert_eq!(record.content, "Invoice 7 is paid in full.");
    assert_eq!(result.final_message.content(), "Invoice 7 is paid.");
    let tools = &model.requests()[0].tools;
    assert_eq!(tools[0].name, "billing");
    assert_eq!(
        tools[0].description,
        "Invoices and refunds, from the ledger"
    );
    // The token from the environment went with the call.
    let seen = peer.record().await;
    assert_eq!(seen["requests"][0]["authorization"], "Bearer s3cret");
}

#[tokio::test]
async fn a_remote_agent_that_cannot_be_reached_fails_the_load() {
    let url = format!("http://127.0.0.1:{}", free_port());
    let file = read(SUPPORT, &[("LEDGER_URL", &url), ("LEDGER_TOKEN", "x")]).unwrap();
    let error = file.load(&Registry::new()).await.unwrap_err();
    let LoadError::RemoteAgent { agent, source } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(agent, "billing");
    let source = source.downcast_ref::<A2aError>().expect("an A2aError");
    assert!(matches!(source, A2aError::Connect { .. }), "{source:?}");
}

#[test]
fn problems_of_remote_agents_are_reported_at_their_places() {
    let text = "\
model: {provider: scripted, turns: [{text: hi}]}
remote_agents:
  - name: billing
    urll: http://127.0.0.1:9
  - name: bad name
    url: ftp://127.0.0.1/
  - name: ledger
    url: http://:80/
    streaming: maybe
    bearer_token: {env: NOT_SET}
";
    let errors = read(text, &[]).unwrap_err();
    let found: Vec<(ProblemKind, usize, usize)> = errors
        .problems()
        .iter()
        .map(|p| (p.kind(), p.location().line, p.location().column))
        .collect();
    use ProblemKind::*;
    assert_eq!(
        found,
        [
            (MissingKey, 3, 5),
            (UnknownKey, 4, 5),
            (InvalidValue, 5, 11),
            (InvalidValue, 6, 10),
            (InvalidValue, 8, 10),
            (WrongType, 9, 16),
            (MissingEnv, 10, 25),
        ],
        "{errors}"
    );
    assert_eq!(errors.problems()[1].suggestion(), Some("url"));
    let shown = errors.to_string();
    assert!(
        shown.contains("`ftp://127.0.0.1/` is not an agent's URL"),
        "{shown}"
    );
    assert!(
        shown.contains("`http://:80/` is not an agent's URL: it names no host"),
        "{shown}"
    );
}
