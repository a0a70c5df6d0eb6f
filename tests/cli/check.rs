//! `adk check`: a good file lists the tools the model sees per role (exit 0); a broken
//! one shows every problem at its line and column (exit 2).

use crate::support::adk_output;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `adk ARGS`, checks that it exits 0, and gives its standard output.
fn succeeded(args: &[&str]) -> String {
    let output = adk_output(args);
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        text(&output.stderr)
    );
    stdout
}

#[test]
fn check_lists_the_tools_each_role_sees() {
    let stdout = succeeded(&["check", "tests/cli/agents/desk.yaml"]);
    assert!(stdout.contains("agent `desk` is ready"), "{stdout}");
    assert!(
        stdout.contains("role `clerk`: set_slot_city, set_slot_room"),
        "{stdout}"
    );
    assert!(
        stdout.contains("any other caller: set_slot_city\n"),
        "{stdout}"
    );
    // Not a terminal: no colours.
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
}

#[test]
fn check_accepts_the_example_agent_files_that_need_no_rust() {
    let stdout = succeeded(&["check", "examples/agents/booking.yaml"]);
    assert!(
        stdout.contains(
            "every caller: set_slot_city, set_slot_nights, set_slot_room, set_slot_breakfast"
        ),
        "{stdout}"
    );
}

#[test]
fn check_names_the_rust_tools_a_file_needs() {
    // support.yaml's tools are registered by a Rust program (examples/agent_file.rs);
    // `adk` registers none, and says so at the line that names them.
    let output = adk_output(&["check", "examples/agents/support.yaml"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error[unknown_tool]"), "{stderr}");
    assert!(stderr.contains("lookup_order"), "{stderr}");
    assert!(stderr.contains("support.yaml:"), "{stderr}");
}

#[test]
fn check_shows_every_problem_of_a_broken_file_with_its_line_and_column() {
    let output = adk_output(&["check", "tests/cli/agents/broken.yaml"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--> tests/cli/agents/broken.yaml:3:1"),
        "{stderr}"
    );
    assert!(
        stderr.contains("did you mean `max_iterations`?"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--> tests/cli/agents/broken.yaml:4:11"),
        "{stderr}"
    );
    assert!(stderr.contains("has 2 problems"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn check_goes_on_after_a_broken_file_and_fails_at_the_end() {
    let output = adk_output(&[
        "check",
        "tests/cli/agents/broken.yaml",
        "tests/cli/agents/desk.yaml",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stdout).contains("agent `desk` is ready"));
}

#[test]
fn usage_errors_exit_2_and_help_says_what_the_exit_statuses_mean() {
    assert_eq!(adk_output(&["check"]).status.code(), Some(2));
    assert_eq!(adk_output(&["frobnicate"]).status.code(), Some(2));
    let help = adk_output(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let help = text(&help.stdout);
    for words in ["check", "run", "serve", "Exit status: 0", "NO_COLOR"] {
        assert!(help.contains(words), "{help}");
    }
    let version = text(&adk_output(&["--version"]).stdout);
    assert_eq!(version.trim(), format!("adk {}", env!("CARGO_PKG_VERSION")));
}

/// Where scripts/setup-mcp-servers put the MCP test servers.
fn mcp_servers() -> std::path::PathBuf {
    std::env::var_os("MCP_TEST_SERVERS").map_or_else(
        || crate::support::repo_file("target/test-servers/mcp"),
        std::path::PathBuf::from,
    )
}

#[test]
fn check_connects_to_the_mcp_servers_and_lists_their_tools() {
    let servers = mcp_servers();
    let python = servers.join("venv/bin/python");
    let everything =
        servers.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    for path in [&python, &everything] {
        assert!(
            path.exists(),
            "{} is missing: run scripts/setup-mcp-servers first",
            path.display()
        );
    }
    let output = crate::support::adk()
        .args(["check", "examples/agents/mcp.yaml"])
        .env("MCP_PYTHON", &python)
        .env(
            "MCP_TOOLBOX",
            crate::support::repo_file("tests/mcp/servers/toolbox.py"),
        )
        .env("MCP_EVERYTHING", &everything)
        .output()
        .expect("adk runs");
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        text(&output.stderr)
    );
    let tools = stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("every caller: "))
        .unwrap_or_else(|| panic!("no tools listed: {stdout}"));
    let tools: Vec<&str> = tools.split(", ").collect();
    // toolbox: only the included; everything: all but the excluded.
    assert_eq!(&tools[..2], ["add", "shout"], "{stdout}");
    assert!(tools.len() > 3, "{stdout}");
    assert!(!tools.contains(&"echo"), "{stdout}");
}

#[test]
fn check_names_the_missing_variables_of_a_file() {
    let output = crate::support::adk()
        .args(["check", "examples/agents/mcp.yaml"])
        .env_remove("MCP_PYTHON")
        .env_remove("MCP_TOOLBOX")
        .env_remove("MCP_EVERYTHING")
        .output()
        .expect("adk runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error[missing_env]"), "{stderr}");
    assert!(stderr.contains("MCP_PYTHON"), "{stderr}");
}

#[test]
fn check_does_not_call_ready_a_file_whose_prompt_does_not_render() {
    let output = adk_output(&["check", "tests/cli/agents/unrendered.yaml"]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(!stdout.contains("ready"), "{stdout}");
    assert!(!stdout.contains('✓'), "{stdout}");
    assert!(stderr.contains("unrendered"), "{stderr}");
}
