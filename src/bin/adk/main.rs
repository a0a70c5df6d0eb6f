//! `adk`: check, chat with and serve agents described in YAML files (see
//! [`tower_adk::file`]), without writing Rust.
//!
//! ```text
//! adk check examples/agents/booking.yaml
//! adk run examples/agents/booking.yaml
//! adk serve examples/agents/booking.yaml --addr 127.0.0.1:3000
//! adk mcp examples/agents/booking.yaml --http 127.0.0.1:3001
//! adk eval examples/agents/booking.yaml examples/evals/booking.yaml --html report.html
//! ```
//!
//! One module per command (`check`, `chat`, `serve`, `mcp`, `eval`), `load` for what they share (reading
//! and loading files, with every problem shown), `screen` for how runs look in the
//! terminal.

mod chat;
mod check;
mod eval;
mod load;
mod mcp;
mod screen;
mod serve;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Check, chat with, serve and evaluate agents described in YAML agent files.
#[derive(Debug, Parser)]
#[command(
    name = "adk",
    version,
    after_help = "Exit status: 0 on success (and when standard output's reader goes away, \
                  as with `| head -1`), 1 when a run, an MCP server or a store fails, or \
                  when an `adk eval` case scores under its threshold, 2 when the command \
                  line, an agent file, an eval set or a baseline is wrong.\n\
                  Colours follow the terminal; set NO_COLOR to turn them off."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check agent files, and list the tools the model sees for each role
    ///
    /// Reads each file (showing every problem at its line and column), connects to its
    /// MCP servers, and lists the tools the model sees for each role of the file's role
    /// filter and for any other caller.
    Check {
        /// The agent files.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Chat with an agent in the terminal
    ///
    /// Replies stream as they come, tool calls show as they run, approvals are asked at
    /// the prompt. Ctrl-C cancels the reply under way; Ctrl-D or /exit leaves.
    Run {
        /// The agent file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Chat as a caller with this role (for the file's role filter).
        #[arg(long, value_name = "ROLE")]
        role: Option<String>,
        /// The conversation's thread: its history is kept across turns in the file's
        /// checkpoint store (memory by default), so a persistent store continues it in a
        /// later `adk run`. Default: a new thread.
        #[arg(long, value_name = "ID")]
        thread: Option<String>,
        /// Send this message, print the reply, and exit, without a prompt (approvals are
        /// still asked, from stdin).
        #[arg(long, short, value_name = "TEXT")]
        message: Option<String>,
        /// With --message: print the run's events in their versioned JSON form (the
        /// server's, `tower_adk::wire`), one per line, instead of as text. A run that
        /// stops for a decision ends there (its `completed` event has the checkpoint).
        #[arg(long, requires = "message")]
        json: bool,
    },
    /// Serve agent files over HTTP until Ctrl-C
    ///
    /// The server of `tower_adk::server`: runs as JSON or streamed, threads, resumes;
    /// `GET /agents` lists the agents.
    Serve {
        /// The agent files; each agent is served under its name.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1:3000", value_name = "ADDR")]
        addr: SocketAddr,
        /// Let in only callers that send `Authorization: Bearer TOKEN`, with ROLE as
        /// their role (for the files' role filters). Repeat it for more tokens, or set
        /// ADK_TOKENS (comma-separated) to keep tokens out of the process list. Without
        /// tokens everyone is let in, with no role.
        #[arg(
            long = "token",
            value_name = "TOKEN=ROLE",
            value_parser = serve::parse_token,
            env = "ADK_TOKENS",
            value_delimiter = ',',
            hide_env_values = true
        )]
        tokens: Vec<(String, String)>,
        /// Serve `GET /metrics`: the runs, model calls, tokens, tool calls and checkpoint
        /// writes of the process, in Prometheus's text format; with tokens, only to
        /// their holders.
        #[arg(long)]
        metrics: bool,
        /// Serve the agents over A2A too (A2A v1.0, JSON-RPC): each agent's card at
        /// `/agents/NAME/.well-known/agent-card.json` and its endpoint at
        /// `/agents/NAME/a2a`; with one file, its agent at the root as well
        /// (`/.well-known/agent-card.json`, `/a2a`).
        #[arg(long)]
        a2a: bool,
    },
    /// Serve an agent file to MCP clients, over stdio or streamable HTTP
    ///
    /// Over stdio (the default) a desktop client or an IDE starts the command and talks
    /// on its stdin and stdout; with --http, clients connect to http://ADDR/mcp until
    /// Ctrl-C. The agent is one tool named after it ({"message", "thread"?} in, its reply
    /// out); --expose tools serves its tools instead, through the file's handlers. A call
    /// that stops for an approval answers with how to go on through the `resume` tool.
    Mcp {
        /// The agent file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// What the clients call: the agent, its tools, or both.
        #[arg(long, value_enum, default_value = "agent")]
        expose: mcp::Expose,
        /// Serve streamable HTTP on this address (at /mcp; 127.0.0.1:3001 when none is
        /// given) instead of stdio.
        #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:3001")]
        http: Option<SocketAddr>,
        /// With --http: let in only callers that send `Authorization: Bearer TOKEN`, with
        /// ROLE as their role (for the file's role filter), as `adk serve` does; or set
        /// ADK_TOKENS (comma-separated).
        #[arg(
            long = "token",
            value_name = "TOKEN=ROLE",
            value_parser = serve::parse_token,
            env = "ADK_TOKENS",
            value_delimiter = ',',
            hide_env_values = true
        )]
        tokens: Vec<(String, String)>,
        /// Over stdio: the client's role (for the file's role filter).
        #[arg(long, value_name = "ROLE", conflicts_with = "http")]
        role: Option<String>,
    },
    /// Run an eval set against an agent file and score it
    ///
    /// Each case runs on a new thread of its own, several at once; a scripted model plays
    /// its script from the start in each case. Prints a table of the scores (the share
    /// of turns whose tool calls matched, the mean score of the response matchers),
    /// latency and tokens per case; writes the report as JSON and as HTML with plots.
    ///
    /// Exit status: 0 when every case's scores meet their thresholds, 1 when one falls
    /// under (or a run fails), 2 when a file is wrong.
    Eval {
        /// The agent file.
        #[arg(value_name = "AGENT_FILE")]
        agent: PathBuf,
        /// The eval set (YAML; see `tower_adk::file::EvalSetFile`).
        #[arg(value_name = "EVAL_SET")]
        set: PathBuf,
        /// Write the report as JSON here (a baseline for a later run).
        #[arg(long, value_name = "OUT")]
        json: Option<PathBuf>,
        /// Write the report as a self-contained HTML page with plots here.
        #[arg(long, value_name = "OUT")]
        html: Option<PathBuf>,
        /// Compare with a previous run's JSON report: the table shows each score's
        /// change, the HTML plots both runs.
        #[arg(long, value_name = "PREVIOUS.json")]
        baseline: Option<PathBuf>,
        /// How many cases run at once.
        #[arg(long, default_value = "4", value_name = "N",
              value_parser = clap::value_parser!(u16).range(1..))]
        concurrency: u16,
        /// Recorded traffic: each case's model calls go through the cassette
        /// DIR/CASE_ID.json, replayed when the file exists and recorded when it does not
        /// (ADK_CASSETTE_MODE=record or replay forces one); a request that differs from
        /// the recording fails its case with a diff.
        #[arg(long, value_name = "DIR")]
        cassettes: Option<PathBuf>,
        /// The time the agent's prompt gives the model (`include_date_time`), fixed for
        /// every case, e.g. 2026-03-29T09:30:00Z: prompts that read the clock are then the
        /// same on every run, as replayed cassettes need.
        #[arg(long, value_name = "TIME")]
        clock: Option<jiff::Timestamp>,
    },
}

/// How a command failed, as the process's exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Failure {
    /// Standard output's reader went away (`adk run ... | head -1`): the command stops
    /// there, quietly, with 0 (the reader had what it wanted).
    Closed,
    /// A run, an MCP server, a store or the terminal failed: 1.
    Run,
    /// An agent file is wrong: 2 (the code clap gives to a wrong command line).
    File,
}

impl From<Failure> for ExitCode {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Closed => ExitCode::SUCCESS,
            Failure::Run => ExitCode::from(1),
            Failure::File => ExitCode::from(2),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            screen::error(format_args!("cannot start the async runtime: {error}"));
            return Failure::Run.into();
        }
    };
    // With the `otel` feature, runs are exported when the environment names a collector
    // (OTEL_EXPORTER_OTLP_ENDPOINT); the guard sends what is left when the command ends.
    #[cfg(feature = "otel")]
    let _exporter = match tower_adk::telemetry::otlp::install_from_env() {
        Ok(guard) => guard,
        Err(error) => {
            screen::error(format_args!("cannot export traces: {error}"));
            return Failure::Run.into();
        }
    };
    let outcome = match cli.command {
        Command::Check { files } => runtime.block_on(check::check(&files)),
        Command::Run {
            file,
            role,
            thread,
            message,
            json,
        } => chat::Options {
            file,
            role,
            thread,
            message,
            json,
        }
        .run(&runtime),
        Command::Serve {
            files,
            addr,
            tokens,
            metrics,
            a2a,
        } => runtime.block_on(serve::serve(&files, addr, tokens, metrics, a2a)),
        Command::Mcp {
            file,
            expose,
            http,
            tokens,
            role,
        } => runtime.block_on(
            mcp::Options {
                file: &file,
                expose,
                http,
                tokens,
                role,
            }
            .serve(),
        ),
        Command::Eval {
            agent,
            set,
            json,
            html,
            baseline,
            concurrency,
            cassettes,
            clock,
        } => runtime.block_on(
            eval::Options {
                agent,
                set,
                json,
                html,
                baseline,
                concurrency: usize::from(concurrency),
                cassettes,
                clock: clock.map(std::time::SystemTime::from),
            }
            .run(),
        ),
    };
    // Whatever is left (a connection closing, a store's pool) is not waited for.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.into(),
    }
}
