//! A support agent whose `refund` tool waits for a person: `HumanApproval` interrupts
//! the run at the call, the person answers on stdin, and the run resumes from its
//! checkpoint.
//!
//! ```sh
//! cargo run --example approval                  # answer at the prompt
//! echo approve | cargo run --example approval   # or pipe the answer in
//! echo 'edit {"order": 7, "amount": 100}' | cargo run --example approval
//! echo 'reject refunds over 200 go to finance' | cargo run --example approval
//! echo 'respond refunded by hand' | cargo run --example approval
//! ```
//!
//! One answer per line: `approve`, `edit {json}`, `reject REASON`, `respond TEXT`. No
//! answer (end of input) rejects the call; an answer that is not one of these, or edited
//! arguments the tool refuses (`edit {"order": "seven"}`), is shown and asked again. With a checkpoint database the run can stop
//! in one process (`--ask-later` prints its checkpoint id) and be resumed in another
//! (`--resume ID`, which says first whether the checkpoint still waits: one resumed
//! already is not asked about again):
//!
//! ```sh
//! cargo run --example approval --features sqlite -- --checkpoint-db target/approval.db --ask-later
//! echo approve | cargo run --example approval --features sqlite -- --checkpoint-db target/approval.db --resume 'ID'
//! ```

use std::error::Error;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;
use tower_adk::agent::{CheckpointStatus, ResumeError};
use tower_adk::checkpoint::{CheckpointId, CheckpointStore, MemoryStore};
use tower_adk::handlers::{ApprovalRule, DecisionKind, HumanApproval};
use tower_adk::interrupt::{Decision, PendingInterrupt};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{
    Agent, AgentError, AgentRequest, AgentResult, RunStatus, Tool, ToolInfo, ToolOutput,
};

/// What the command line asks for.
#[derive(Debug, Default)]
pub(crate) struct Args {
    /// Where checkpoints are kept across processes (`--checkpoint-db PATH`).
    pub(crate) checkpoint_db: Option<PathBuf>,
    /// Stop at the interrupt and print the checkpoint id (`--ask-later`).
    pub(crate) ask_later: bool,
    /// Resume this checkpoint instead of starting a run (`--resume ID`).
    pub(crate) resume: Option<String>,
}

impl Args {
    pub(crate) fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut parsed = Args::default();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--checkpoint-db" => {
                    let path = args.next().ok_or("--checkpoint-db needs a path")?;
                    parsed.checkpoint_db = Some(path.into());
                }
                "--ask-later" => parsed.ask_later = true,
                "--resume" => parsed.resume = Some(args.next().ok_or("--resume needs an id")?),
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        Ok(parsed)
    }
}

/// The checkpoint store: in memory, or a SQLite file that a second process can resume
/// from (feature `sqlite`: `cargo run --example approval --features sqlite --
/// --checkpoint-db PATH`).
async fn store(args: &Args) -> Result<Arc<dyn CheckpointStore>, Box<dyn Error>> {
    match &args.checkpoint_db {
        None => Ok(Arc::new(MemoryStore::new())),
        #[cfg(feature = "sqlite")]
        Some(path) => Ok(Arc::new(
            tower_adk::checkpoint::SqliteStore::open(path).await?,
        )),
        #[cfg(not(feature = "sqlite"))]
        Some(path) => Err(format!(
            "--checkpoint-db {}: build the example with `--features sqlite`",
            path.display()
        )
        .into()),
    }
}

/// The refund tool: it would move money; here it says what it did.
fn refund() -> Tool {
    let info = ToolInfo::new("refund", "Refunds an amount on an order").parameters(json!({
        "type": "object",
        "properties": {"order": {"type": "integer"}, "amount": {"type": "integer"}},
        "required": ["order", "amount"],
    }));
    Tool::from_fn(info, |request: tower_adk::ToolRequest| async move {
        let (order, amount) = (&request.arguments["order"], &request.arguments["amount"]);
        Ok::<_, tower_adk::BoxError>(ToolOutput::new(format!(
            "refunded {amount} on order {order}"
        )))
    })
}

/// Refunds wait for a person, who may approve, edit, reject or answer in their place.
fn approval() -> HumanApproval {
    let rule = ApprovalRule::new()
        .allow(DecisionKind::ALL)
        .describe(|args| format!("Refund {} on order {}?", args["amount"], args["order"]));
    HumanApproval::new().tool("refund", rule)
}

/// The agent, on the scripted model: a run calls `refund`, then answers; a resumed
/// run (in a second process) only answers.
async fn agent(args: &Args) -> Result<Agent, Box<dyn Error>> {
    let answer = Turn::text("I have taken care of order 7.");
    let model = if args.resume.is_some() {
        ScriptedModel::new([answer])
    } else {
        let call = Turn::call("c1", "refund", json!({"order": 7, "amount": 250}));
        ScriptedModel::new([call, answer])
    };
    let agent = Agent::builder(model)
        .name("support")
        .instruction("You help customers with their orders.")
        .tool(refund())
        .checkpoints(store(args).await?)
        .build()?;
    Ok(agent)
}

/// Reads the person's decision: one line; end of input rejects. A line that is not a
/// decision is an error, for the caller to show before asking again.
pub(crate) fn read_decision(input: &mut impl BufRead) -> Result<Decision, Box<dyn Error>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(Decision::Reject {
            reason: "no one answered".to_owned(),
        });
    }
    let line = line.trim();
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    Ok(match word {
        "approve" => Decision::Approve,
        "edit" => Decision::Edit {
            arguments: serde_json::from_str(rest)
                .map_err(|error| format!("`{rest}` is not JSON: {error}"))?,
        },
        "reject" => Decision::Reject {
            reason: rest.to_owned(),
        },
        "respond" => Decision::Respond {
            answer: rest.into(),
        },
        other => return Err(format!("`{other}`: answer approve, edit, reject or respond").into()),
    })
}

/// The interrupt that the checkpoint `id` waits at, read from the store before anything
/// is asked: a checkpoint that was used already (or whose run ended, or that does not
/// exist) is said so at once, as the resume would refuse it.
async fn waiting_at(agent: &Agent, id: &CheckpointId) -> Result<PendingInterrupt, Box<dyn Error>> {
    let Some((head, checkpoint)) = agent.last_checkpoint(&id.thread).await? else {
        return Err(ResumeError::Unknown(id.clone()).into());
    };
    if head.version != id.version {
        return Err(ResumeError::Used(id.clone(), head.version).into());
    }
    if checkpoint.status != CheckpointStatus::Interrupted {
        return Err(ResumeError::Ended(id.clone()).into());
    }
    let waiting = checkpoint.interrupts.into_iter().next();
    waiting.ok_or_else(|| ResumeError::Ended(id.clone()).into())
}

/// One session: run (or resume) to the interrupt, ask, resume; the final result, or
/// `None` when the run was left for later. An answer that is not a decision, or edited
/// arguments the tool refuses, is shown and asked again.
pub(crate) async fn session(
    args: &Args,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Result<Option<AgentResult>, Box<dyn Error>> {
    let agent = agent(args).await?;
    let (checkpoint, asked) = match &args.resume {
        Some(id) => {
            let checkpoint: CheckpointId = id.parse()?;
            let asked = waiting_at(&agent, &checkpoint).await?;
            (checkpoint, asked)
        }
        None => {
            let request = AgentRequest::user("Please refund order 7, it arrived broken.");
            let stopped = agent.run(request.with_handler(approval())).await?;
            if stopped.status != RunStatus::Interrupted {
                return Ok(Some(stopped));
            }
            let checkpoint = stopped.checkpoint.clone().ok_or("no checkpoint")?;
            let asked = stopped.interrupts[0].clone();
            if args.ask_later {
                show(out, &asked)?;
                writeln!(out, "resume with: --resume {checkpoint}")?;
                return Ok(None);
            }
            (checkpoint, asked)
        }
    };
    show(out, &asked)?;
    let done = loop {
        write!(
            out,
            "approve / edit {{json}} / reject REASON / respond TEXT > "
        )?;
        out.flush()?;
        let decision = match read_decision(input) {
            Ok(decision) => decision,
            Err(unreadable) => {
                writeln!(out, "\n{unreadable}")?;
                continue;
            }
        };
        writeln!(out)?;
        let resume = AgentRequest::resume(checkpoint.clone(), [(asked.id.clone(), decision)]);
        match agent.run(resume.with_handler(approval())).await {
            Ok(done) => break done,
            // Refused before anything ran: the checkpoint waits as it did.
            Err(AgentError::Resume(refused))
                if matches!(*refused, ResumeError::InvalidEdit { .. }) =>
            {
                writeln!(out, "{refused}")?;
            }
            Err(other) => return Err(other.into()),
        }
    };
    for record in &done.tool_records {
        match &record.error {
            None => writeln!(out, "  {}: {}", record.name, record.content)?,
            Some(error) => writeln!(out, "  {}: not run: {}", record.name, error.message())?,
        }
    }
    writeln!(out, "{}", done.final_message.content())?;
    Ok(Some(done))
}

/// The question the run waits at, and its payload.
fn show(out: &mut impl Write, asked: &PendingInterrupt) -> std::io::Result<()> {
    let question = asked.payload["description"].as_str().unwrap_or("?");
    writeln!(out, "{question}")?;
    writeln!(out, "  payload: {}", asked.payload)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(usage) => {
            eprintln!("error: {usage}");
            return ExitCode::from(2);
        }
    };
    let stdin = std::io::stdin();
    match session(&args, &mut stdin.lock(), &mut std::io::stdout()).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            // In words (`Display`), as a person reads it.
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
