//! AG-UI events, as AG-UI 1.0 spells them.

use serde::Serialize;
use serde_json::{Value, json};

use crate::interrupt::PendingInterrupt;
use crate::model::{Usage, UsageTotals};

/// One AG-UI event: `type` in SCREAMING_SNAKE_CASE, fields in camelCase.
#[derive(Debug, Serialize)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase"
)]
pub(crate) enum AgUiEvent {
    RunStarted {
        thread_id: String,
        run_id: String,
    },
    RunFinished {
        thread_id: String,
        run_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        outcome: Outcome,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        usage: Vec<TokenUsage>,
    },
    RunError {
        message: String,
        code: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        usage: Vec<TokenUsage>,
    },
    TextMessageStart {
        message_id: String,
        role: &'static str,
    },
    TextMessageContent {
        message_id: String,
        delta: String,
    },
    TextMessageEnd {
        message_id: String,
    },
    ReasoningStart {
        message_id: String,
    },
    ReasoningMessageStart {
        message_id: String,
        role: &'static str,
    },
    ReasoningMessageContent {
        message_id: String,
        delta: String,
    },
    ReasoningMessageEnd {
        message_id: String,
    },
    ReasoningEnd {
        message_id: String,
    },
    ToolCallStart {
        tool_call_id: String,
        tool_call_name: String,
        parent_message_id: String,
    },
    ToolCallArgs {
        tool_call_id: String,
        delta: String,
    },
    ToolCallEnd {
        tool_call_id: String,
    },
    ToolCallResult {
        message_id: String,
        tool_call_id: String,
        /// Text, or a list of content parts.
        content: Value,
        role: &'static str,
    },
    Custom {
        name: &'static str,
        value: Value,
    },
}

/// Why a run ended: `{"type": "success"}` or `{"type": "interrupt", "interrupts": [...]}`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Outcome {
    Success,
    Interrupt { interrupts: Vec<Value> },
}

/// AG-UI's `TokenUsage`: one model's counts in a run. Its accounting is ours (the cache
/// and reasoning counts are parts of the input and output counts); `totalTokens` is the
/// input and output counts added, as AG-UI defines it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TokenUsage {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cached_input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_write_input_tokens: Option<u64>,
}

/// The largest count every AG-UI binding reads back as written (JSON's safe integers).
const MAX_COUNT: u64 = (1 << 53) - 1;

impl TokenUsage {
    /// One entry per model that reported usage; none when no call reported any (AG-UI
    /// reads an absent `usage` as "not reported", a zero as measured).
    pub(crate) fn of(totals: &UsageTotals) -> Vec<TokenUsage> {
        if totals.calls == 0 {
            return Vec::new();
        }
        let entries = totals.by_model.iter();
        entries
            .map(|(model, usage)| TokenUsage::new(model, usage))
            .collect()
    }

    fn new(model: &str, usage: &Usage) -> Self {
        let count = |n: u64| n.min(MAX_COUNT);
        let part = |n: u64| (n > 0).then_some(count(n));
        let (input, output) = (count(usage.prompt_tokens), count(usage.completion_tokens));
        TokenUsage {
            model: (!model.is_empty()).then(|| model.to_owned()),
            input_tokens: input,
            output_tokens: output,
            total_tokens: count(input + output),
            reasoning_tokens: part(usage.reasoning_tokens),
            cached_input_tokens: part(usage.cache_read_tokens),
            cache_write_input_tokens: part(usage.cache_write_tokens),
        }
    }
}

/// An AG-UI `Interrupt`: `reason` `tool_call` (with `toolCallId`) or `hook`, `message`
/// from the payload when it has one, and the payload itself in `metadata`.
pub(crate) fn interrupt(id: String, pending: &PendingInterrupt) -> Value {
    let payload = &pending.payload;
    let message = payload.as_str().or_else(|| {
        let text = |key| payload.get(key).and_then(Value::as_str);
        text("message").or_else(|| text("question"))
    });
    let mut interrupt = json!({
        "id": id,
        "reason": if pending.call.is_some() { "tool_call" } else { "hook" },
        "metadata": {"payload": payload, "adkInterruptId": pending.id},
    });
    if let Some(message) = message {
        interrupt["message"] = message.into();
    }
    if let Some(call) = &pending.call {
        interrupt["toolCallId"] = call.id.as_str().into();
    }
    interrupt
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn usage_is_one_entry_per_model_and_none_when_no_call_reported_any() {
        assert!(TokenUsage::of(&UsageTotals::default()).is_empty());

        let mut totals = UsageTotals::default();
        totals.add(Some("small"), Usage::new(100, 20, 120).with_cache(60, 0));
        totals.add(Some("small"), Usage::new(10, 5, 15).with_reasoning(3));
        totals.add(None, Usage::new(1, 1, 2));
        let entries = serde_json::to_value(TokenUsage::of(&totals)).unwrap();

        assert_eq!(
            entries,
            json!([
                {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                {"model": "small", "inputTokens": 110, "outputTokens": 25, "totalTokens": 135,
                 "reasoningTokens": 3, "cachedInputTokens": 60},
            ])
        );
    }
}
