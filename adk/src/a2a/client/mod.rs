//! The A2A client (feature `a2a-client`): remote agents that speak A2A 1.0 over JSON-RPC,
//! as tools and as agents of a composition.
//!
//! A [`RemoteAgent`] is connected by its base URL: [`RemoteAgent::connect`] reads its
//! card at `/.well-known/agent-card.json`, picks its JSON-RPC interface of A2A 1.0, and
//! sends each message with `SendStreamingMessage` when the card says it streams, else
//! with `SendMessage`. Then:
//!
//! - [`RemoteAgentTool`] (or [`RemoteAgent::as_tool`]) makes it a streaming tool, like
//!   [`AgentTool`](crate::compose::AgentTool) for a local agent: its chunks stream to the
//!   caller, its input-required tasks are the caller's interrupts, resumed through the
//!   caller's resume, and a dropped call cancels its task.
//! - As a `tower::Service<AgentRequest>`, it is an agent of a composition, e.g. a
//!   [`Handoffs`](crate::compose::Handoffs) target that takes the conversation over (see
//!   [`RemoteAgent`]'s `Service` impl).
//!
//! Every failure is an [`A2aError`]: the agent not reached, no card or a card without
//! JSON-RPC, an HTTP error status, a JSON-RPC error (its code kept), an answer that is
//! not A2A, a timeout.
//!
//! # Example
//!
//! ```no_run
//! use tower_adk::a2a::client::RemoteAgent;
//! use tower_adk::testing::{ScriptedModel, Turn};
//! use tower_adk::{Agent, AgentRequest};
//! use serde_json::json;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let billing = RemoteAgent::builder("https://billing.example.com")
//!     .name("billing")
//!     .bearer_token(std::env::var("BILLING_TOKEN")?)
//!     .connect()
//!     .await?;
//! let model = ScriptedModel::new([
//!     Turn::call("c1", "billing", json!({"message": "Is invoice 7 paid?"})),
//!     Turn::text("Invoice 7 is paid."),
//! ]);
//! let support = Agent::builder(model).tool(billing.as_tool()).build()?;
//! let result = support.run(AgentRequest::user("Is invoice 7 paid?")).await?;
//! assert_eq!(result.final_message.content(), "Invoice 7 is paid.");
//! # Ok(())
//! # }
//! ```
//!
//! # Versions
//!
//! The client speaks A2A 1.0 (`SendMessage`, `SendStreamingMessage`, `GetTask`,
//! `CancelTask`, with the `A2A-Version: 1.0` header). An agent whose card offers only
//! A2A 0.3 (a card with `url` and no `supportedInterfaces`) is refused when connecting,
//! with an [`A2aError::Card`] that says so.

mod agent;
mod cancel;
mod card;
mod endpoint;
mod error;
mod progress;
mod remote;
mod tool;
mod waiting;

pub use self::error::A2aError;
pub use self::remote::{
    DEFAULT_CANCEL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, RemoteAgent,
    RemoteAgentBuilder, TaskEvents,
};
pub use self::tool::RemoteAgentTool;
