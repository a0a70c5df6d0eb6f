//! The Rust tools that examples/agents/support.yaml names (`lookup_order`, `refund`),
//! registered under those names: shared by the `agent_file` and `a2a` examples.

use schemars::JsonSchema;
use serde::Deserialize;
use tower_adk::file::Registry;
use tower_adk::{Tool, ToolContext};

#[derive(Deserialize, JsonSchema)]
struct Order {
    /// The order's number.
    id: u32,
}

#[derive(Deserialize, JsonSchema)]
struct Refund {
    /// The order's number.
    id: u32,
    /// How much, in EUR.
    amount: u32,
}

/// A registry with the support agent's two tools.
pub(crate) fn registry() -> Registry {
    Registry::new()
        .tool(Tool::typed(
            "lookup_order",
            "Looks an order up by its number",
            |_: ToolContext, order: Order| async move {
                Ok(format!("order {}: delivered on Monday, 25 EUR", order.id))
            },
        ))
        .tool(Tool::typed(
            "refund",
            "Refunds an order",
            |_: ToolContext, refund: Refund| async move {
                Ok(format!(
                    "refunded {} EUR on order {}",
                    refund.amount, refund.id
                ))
            },
        ))
}
