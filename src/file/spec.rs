//! What an agent file says, typed: the walk's output and the load's input. Names that
//! are checked against the registry or the connected tools keep their place in the file.

use std::time::Duration;

use adk::ModelOptions;
use adk::testing::Turn;
use serde_json::Value;

use super::exit_if::ExitIf;
use super::yaml::Spanned;

/// The whole file.
#[derive(Debug, Default)]
pub(crate) struct Spec {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) model: Option<ModelSpec>,
    pub(crate) options: ModelOptions,
    pub(crate) prompt: Option<String>,
    pub(crate) include_date_time: bool,
    pub(crate) timezone: Option<String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) tool_timeout: Option<Duration>,
    pub(crate) mcp_connection_retries: Option<u32>,
    pub(crate) filler_messages: Option<bool>,
    pub(crate) max_iterations: Option<usize>,
    pub(crate) parallel_tool_calls: Option<usize>,
    pub(crate) tools: Vec<Spanned<String>>,
    pub(crate) return_directly: Vec<Spanned<String>>,
    pub(crate) mcp_servers: Vec<McpSpec>,
    pub(crate) remote_agents: Vec<RemoteSpec>,
    pub(crate) handlers: Vec<HandlerSpec>,
    pub(crate) checkpoints: Option<Spanned<StoreSpec>>,
    pub(crate) durable: bool,
}

/// Where the model comes from.
#[derive(Debug)]
#[cfg_attr(
    not(any(feature = "openai", feature = "anthropic", feature = "gemini")),
    allow(dead_code)
)]
pub(crate) enum ModelSpec {
    /// A provider's API over HTTP.
    Hosted {
        provider: Provider,
        name: Option<String>,
        base_url: Option<String>,
        api_key: Option<String>,
        stream: Option<bool>,
        reasoning: ReasoningSpec,
    },
    /// Scripted turns, for tests and examples; `calls` are the tools they call, checked
    /// against the agent's.
    Scripted {
        turns: Vec<Turn>,
        per_run: bool,
        calls: Vec<Spanned<String>>,
    },
    /// A model the program registered under a name.
    Registered(Spanned<String>),
}

/// A provider the file can name besides `scripted` and `registered`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provider {
    /// `openai`: an OpenAI-compatible chat completion server.
    OpenAi,
    /// `openai-responses`: OpenAI's Responses API.
    OpenAiResponses,
    /// `anthropic`: Anthropic's Messages API.
    Anthropic,
    /// `gemini`: Google's Gemini API.
    Gemini,
}

/// The reasoning settings a provider takes; the parser refuses those of other providers.
#[derive(Debug, Default)]
#[cfg_attr(
    not(any(feature = "openai", feature = "anthropic", feature = "gemini")),
    allow(dead_code)
)]
pub(crate) struct ReasoningSpec {
    /// `thinking_budget` (anthropic, gemini): tokens the model may think with.
    pub(crate) thinking_budget: Option<u32>,
    /// `thinking_level` (gemini): minimal, low, medium, high.
    pub(crate) thinking_level: Option<String>,
    /// `interleaved_thinking` (anthropic): thinking between tool calls.
    pub(crate) interleaved_thinking: Option<bool>,
    /// `reasoning_effort` (openai-responses): none ... xhigh.
    pub(crate) reasoning_effort: Option<String>,
    /// `store` (openai-responses): whether OpenAI keeps the response.
    pub(crate) store: Option<bool>,
}

/// How to reach an MCP server.
#[derive(Debug)]
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) enum McpTransport {
    Stdio {
        command: Vec<String>,
    },
    Http {
        url: String,
        bearer_token: Option<String>,
    },
}

/// One MCP server.
#[derive(Debug)]
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) struct McpSpec {
    pub(crate) name: String,
    pub(crate) transport: McpTransport,
    pub(crate) include: Option<Vec<Spanned<String>>>,
    pub(crate) exclude: Option<Vec<Spanned<String>>>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) connect_retries: Option<u32>,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) call_timeout: Option<Duration>,
}

/// One remote A2A agent, a tool of the agent.
#[derive(Debug)]
#[cfg_attr(not(feature = "a2a-client"), allow(dead_code))]
pub(crate) struct RemoteSpec {
    pub(crate) name: Spanned<String>,
    pub(crate) url: String,
    pub(crate) description: Option<String>,
    pub(crate) bearer_token: Option<String>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) connect_timeout: Option<Duration>,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) cancel_timeout: Option<Duration>,
    pub(crate) streaming: Option<bool>,
}

/// The checkpoint store.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StoreSpec {
    Memory,
    Sqlite(String),
    Postgres(String),
    Redis(String),
}

/// One entry of `handlers:`.
#[derive(Debug)]
pub(crate) struct HandlerSpec {
    pub(crate) name: Spanned<String>,
    pub(crate) kind: HandlerKind,
}

/// A built-in handler with its settings, or a registered one with its settings as JSON.
#[derive(Debug)]
pub(crate) enum HandlerKind {
    RoleFilter {
        roles: Vec<(String, Vec<Spanned<String>>)>,
        default: Vec<Spanned<String>>,
    },
    Approval {
        tools: Vec<ApprovalSpec>,
        per_turn: bool,
    },
    Policy {
        deny: Vec<(Spanned<String>, String)>,
        ask: Vec<Spanned<String>>,
    },
    CallLimits {
        model_calls: Option<usize>,
        tool_calls: Option<usize>,
        per_tool: Vec<(Spanned<String>, usize)>,
        on_limit: adk_handlers::OnLimit,
    },
    OutputCap {
        max_chars: Option<usize>,
        max_bytes: Option<usize>,
    },
    Envelope {
        note: Option<String>,
    },
    StopAtTool {
        on_call: Vec<Spanned<String>>,
        until_success: Vec<Spanned<String>>,
    },
    TaskCompleted {
        description: Option<String>,
        closing_prompt: Option<String>,
    },
    Slots {
        slots: Vec<adk_handlers::Slot>,
        exit_if: Option<ExitIf>,
    },
    Registered(Value),
    /// A handler whose settings had problems (already recorded).
    Invalid,
}

/// One tool that needs approval.
#[derive(Debug)]
pub(crate) struct ApprovalSpec {
    pub(crate) tool: Spanned<String>,
    pub(crate) description: Option<String>,
    pub(crate) allow: Option<Vec<adk_handlers::DecisionKind>>,
}
