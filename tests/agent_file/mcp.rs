//! Agent files with MCP servers (the test servers of scripts/setup-mcp-servers): the
//! include and exclude lists, their names checked once connected, and the retries.

use std::path::{Path, PathBuf};

use tower::ServiceExt;
use tower_adk::AgentRequest;
use tower_adk::file::{AgentFile, LoadError, ProblemKind, Registry};

use super::examples::example;
use super::support::places;

fn servers_dir() -> PathBuf {
    std::env::var_os("MCP_TEST_SERVERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/mcp"),
        PathBuf::from,
    )
}

fn installed(path: PathBuf) -> String {
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup-mcp-servers first",
        path.display()
    );
    path.display().to_string()
}

/// The variables mcp.yaml reads.
fn vars() -> Vec<(&'static str, String)> {
    let dir = servers_dir();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/servers/toolbox.py");
    vec![
        ("MCP_PYTHON", installed(dir.join("venv/bin/python"))),
        ("MCP_TOOLBOX", installed(script)),
        (
            "MCP_EVERYTHING",
            installed(
                dir.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
            ),
        ),
    ]
}

fn read(text: &str) -> AgentFile {
    let vars = vars();
    AgentFile::reader()
        .env(move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone())
        })
        .read_str(text, "mcp.yaml")
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn the_mcp_example_gets_the_included_tools_and_all_but_the_excluded() {
    let text = std::fs::read_to_string(example("mcp.yaml")).expect("example");
    assert_eq!(
        read(&text).mcp_servers().collect::<Vec<_>>(),
        ["toolbox", "everything"]
    );
    let agent = super::support::build(read(&text), &Registry::new()).await;
    let names = agent
        .preview(None)
        .await
        .expect("preview")
        .tool_names()
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    assert_eq!(
        &names[..2],
        ["add", "shout"],
        "the toolbox's included tools, in the list's order"
    );
    assert!(names.iter().any(|n| n == "get-sum"), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n == "echo" || n == "trigger-long-running-operation"),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n == "pid"), "not included: {names:?}");

    let result = agent
        .oneshot(AgentRequest::user("2 + 3?"))
        .await
        .expect("starts")
        .await
        .expect("runs");
    assert_eq!(result.tool_records[0].name, "add");
    assert!(
        result.tool_records[0].content.contains('5'),
        "{}",
        result.tool_records[0].content
    );
    assert_eq!(result.final_message.content(), "2 + 3 = 5.");
}

#[tokio::test]
async fn a_listed_tool_the_server_does_not_have_is_a_problem_at_its_place() {
    let text = "\
model: {provider: scripted, turns: [{text: ok}]}
mcp_servers:
  - name: toolbox
    command: ['${MCP_PYTHON}', '${MCP_TOOLBOX}']
    include: [add, shoot]
";
    let Err(LoadError::File(errors)) = read(text).load(&Registry::new()).await else {
        panic!("`shoot` is not a tool of the toolbox");
    };
    assert_eq!(
        places(errors.problems()),
        [(ProblemKind::UnknownTool, 5, 20)]
    );
    assert_eq!(errors.problems()[0].suggestion(), Some("shout"));
}

#[tokio::test]
async fn mcp_connection_retries_let_a_flaky_server_start() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent_file_tests/flaky");
    std::fs::create_dir_all(&dir).expect("dir");
    let flaky = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/servers/flaky_start.py");
    for (retries, starts) in [(2, true), (1, false)] {
        let counter = dir.join(format!("starts-{retries}"));
        let _ = std::fs::remove_file(&counter);
        let text = format!(
            "model: {{provider: scripted, turns: [{{text: ok}}]}}\nmcp_connection_retries: {retries}\nmcp_servers:\n  - name: flaky\n    command: ['${{MCP_PYTHON}}', '{}', '{}', '2']\n",
            flaky.display(),
            counter.display()
        );
        let loaded = read(&text).load(&Registry::new()).await;
        match loaded {
            Ok(_) => assert!(starts, "{retries} retries should not be enough"),
            Err(LoadError::Mcp { server, .. }) => {
                assert!(!starts, "{retries} retries should be enough");
                assert_eq!(server, "flaky");
            }
            Err(other) => panic!("{other}"),
        }
        let count = std::fs::read_to_string(&counter).expect("counter");
        assert_eq!(
            count.trim(),
            (retries + 1).to_string(),
            "one start, then one per retry"
        );
    }
}
