//! Agents described in a YAML file: read and checked into an [`AgentFile`] (every
//! problem at once, each with its line and column), loaded with a [`Registry`] of the
//! program's own tools and handlers into a [`LoadedAgent`], built into a [`FileAgent`].
//!
//! # Example
//!
//! ```
//! use tower::ServiceExt;
//! use tower_adk::AgentRequest;
//! use tower_adk::file::{AgentFile, Registry};
//! use tower_adk::testing::text_tool;
//!
//! let text = r#"
//! name: support
//! description: Answers questions about orders.
//! prompt: |
//!   {{ description }} Be brief.
//! model:
//!   provider: scripted          # `openai` for a real one
//!   turns:
//!     - call: {tool: lookup_order, arguments: {id: 7}}
//!     - text: Order 7 has shipped.
//! tools: [lookup_order]
//! max_iterations: 5
//! handlers:
//!   - call_limits: {tool_calls: 3}
//! "#;
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Registry::new().tool(text_tool("lookup_order", "shipped"));
//! let file = AgentFile::reader().registry(&registry).read_str(text, "support.yaml")?;
//! let loaded = file.load(&registry).await?;
//! let model = loaded.scripted_model().cloned().unwrap();
//! let agent = loaded.build()?;
//!
//! let result = agent.oneshot(AgentRequest::user("Where is order 7?")).await?.await?;
//! assert_eq!(result.final_message.content(), "Order 7 has shipped.");
//! assert_eq!(model.requests()[0].messages[0].content(), "Answers questions about orders. Be brief.");
//! # Ok::<_, Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # The file
//!
//! ```yaml
//! name: support                      # the agent's name (interrupt ids, listings); default `agent`
//! description: Answers questions.    # for listings, and `{{ description }}` in the prompt
//! model:
//!   provider: openai                 # openai | openai-responses | anthropic | gemini | scripted | registered
//!   name: gpt-4o-mini                # the model's name (default: OPENAI_MODEL, ANTHROPIC_MODEL, GEMINI_MODEL), or the registered name
//!   base_url: ${LLM_BASE_URL}        # default: OPENAI_BASE_URL (ANTHROPIC_, GEMINI_), else the provider's own
//!   api_key: {env: OPENAI_API_KEY}   # default: OPENAI_API_KEY (ANTHROPIC_API_KEY, GEMINI_API_KEY)
//!   temperature: 0.2                 # also: max_tokens, top_p, seed, stop, stream
//!   # reasoning, each only for the providers that take it:
//!   # anthropic: `thinking_budget: 2048` (at least 1,024), `interleaved_thinking: true`;
//!   # gemini: `thinking_budget: 1024` or `thinking_level: low` (minimal, low, medium, high);
//!   # openai-responses: `reasoning_effort: high` (none, minimal, low, medium, high, xhigh), `store: false`
//!   # scripted: `turns: [{text: ...}, {stream: [chunks]}, {call: {tool, arguments, id}}, {calls: [...]}, {error: ...}]`
//!   # (each may `delay: 1s`),
//!   # `per_run: true` to play every turn in each run
//! prompt: "You help with {{ description }}"   # a minijinja template; or prompt_file: PATH
//! include_date_time: true            # adds the current date and time to the prompt
//! timezone: Europe/Berlin            # of the date and time (IANA); default UTC
//! timeout: 2m                        # a deadline for each whole run
//! tool_timeout: 30s                  # a deadline for each tool call
//! mcp_connection_retries: 3          # default for each MCP server
//! filler_messages: true              # the text of a reply that also calls tools, as an event
//! max_iterations: 10                 # model calls per run
//! parallel_tool_calls: 4             # tool calls of one turn that run at the same time
//! tools: [lookup_order]              # registered tools
//! return_directly: [lookup_order]    # tools whose result ends the run
//! mcp_servers:
//!   - name: files
//!     command: [node, server.js, /data]   # stdio; or `url: http://...` (and `bearer_token`)
//!     include: [read_file]           # or `exclude: [...]`, not both
//!     env: {LOG_LEVEL: warn}         # also: connect_retries, connect_timeout, call_timeout
//! remote_agents:                     # A2A agents elsewhere (feature `a2a-client`), each a tool
//!   - name: billing                  # the tool's name
//!     url: https://billing.example.com   # its card is read at URL/.well-known/agent-card.json
//!     description: Invoices and refunds  # default: the card's description
//!     bearer_token: {env: BILLING_TOKEN}
//!     headers: {x-tenant: acme}
//!     request_timeout: 2m            # also: connect_timeout, cancel_timeout, `streaming: false`
//! handlers:                          # in the order they run; `- NAME` or `- NAME: SETTINGS`
//!   - role_filter: {roles: {admin: ["*"], viewer: [lookup_order]}, default: []}
//!   - approval: {tools: {refund: {description: "Refund?", allow: [approve, reject]}}, per_turn: false}
//!   - policy: {deny: {delete_account: "accounts are closed by the back office"}, ask: [refund]}
//!   - call_limits: {model_calls: 8, tool_calls: 10, per_tool: {refund: 1}, on_limit: end_run}
//!   - output_cap: {max_chars: 4000}  # or max_bytes
//!   - envelope: {note: "..."}        # or just `- envelope`
//!   - stop_at_tool: {on_call: [handoff]}   # or until_success
//!   - task_completed                 # general purpose agents: ends with the model's closing text
//!   - slots:                         # task specific agents
//!       slots:
//!         - {name: city, type: text, description: The city}
//!         - {name: room, type: categorical, values: [single, double]}
//!       exit_if: ["slots.city is not none and slots.room is not none"]
//!   - audit: {level: high}           # a handler the program registered
//! checkpoints:
//!   store: sqlite:agent.db           # memory | sqlite:PATH | postgres://... | redis://...
//!   durable: true                    # each run resumable after a crash
//! ```
//!
//! Strings may use `${VAR}` (`$${` for a literal `${`), and settings `{env: VAR}`: a
//! variable that is not set is a problem of the file, named. This holds for every text
//! (the prompt, descriptions, reasons, notes, scripted turns, URLs), not for names (of
//! the agent, tools, slots, slot values, scripted call ids), which are taken as written.
//!
//! # Roles
//!
//! A `role_filter` reads the caller's [`Role`] from the request's extensions: a caller
//! whose role is listed sees that role's tools (`"*"`: all), any other caller the
//! `default` list (none if left out). It filters the tools present when it runs: tools
//! that a later handler adds (`task_completed`, the slots' tools) are not filtered.
//!
//! # Remote agents
//!
//! Each of `remote_agents` is an A2A 1.0 agent elsewhere (one served by `adk serve --a2a`,
//! or by any A2A SDK), connected by [`AgentFile::load`] through its agent card, and
//! offered to the model as a tool named `name` that takes `{"message": "..."}` (see
//! `a2a::client::RemoteAgentTool`): what the remote agent streams reaches the caller as
//! the call's chunks, a task it fails is a tool error the model reads, a task that asks
//! for input interrupts the run (resume it with the decisions; give the agent a
//! `checkpoints` store), and a run dropped before the task ends cancels it. Its name
//! is checked as a tool name, its URL as an `http` or `https` URL, when the file is read;
//! an agent that cannot be reached, or has no card, fails the load
//! ([`LoadError::RemoteAgent`]).
//!
//! # Slots and `exit_if`
//!
//! Each `exit_if` condition is a Jinja expression over `slots` (each slot's value, or
//! `none` while unset), checked after each slot is set: the run ends when any holds.
//! Python's string methods may be called (`slots.city.lower() == 'paris'`).
//! Without `exit_if`, it ends when every slot is set. Conditions are compiled, and the
//! slots they name checked, when the file is read.
//!
//! # Problems
//!
//! Reading reports every problem of the file at once in [`FileErrors`], each a
//! [`Problem`] with its [`ProblemKind`], line, column, and the valid choices with the
//! closest one suggested. Names that depend on the program (tools, registered handlers
//! and models) are checked when a [`Registry`] is given to the [`FileReader`], and
//! again by [`AgentFile::load`], which also checks MCP servers' tool lists once
//! connected.
//!
//! A tab where YAML wants spaces (in an indentation, after a key's `:`) is one problem
//! at its place, and does not hide the others: the rest of the file is read with each
//! such tab as a space. A file nested too deep, or whose aliases repeat too much, is
//! refused at once (see [`FileReader`]'s limits).

mod agent;
mod agent_file;
mod check;
mod duplicates;
mod error;
#[cfg(feature = "eval")]
mod eval_set;
mod exit_if;
mod handlers;
mod limits;
mod load;
#[cfg(feature = "mcp")]
mod mcp;
mod nodes;
mod parse;
mod reader;
mod registry;
#[cfg(feature = "a2a-client")]
mod remote;
mod role;
mod spec;
mod tabs;
mod yaml;

pub use self::agent::{FileAgent, HandlersLayer, HandlersService, LoadedAgent, Preview};
pub use self::agent_file::AgentFile;
pub use self::error::{FileErrors, LoadError, Location, Problem, ProblemKind};
#[cfg(feature = "eval")]
pub use self::eval_set::EvalSetFile;
pub use self::reader::FileReader;
pub use self::registry::{HandlerSettings, Registry};
pub use self::role::Role;
