//! `model:`: where the model comes from, and the options sent with each call.

use adk::ModelOptions;
use adk::testing::Turn;

use crate::file::error::ProblemKind;
use crate::file::spec::{ModelSpec, Provider, ReasoningSpec};
use crate::file::yaml::{Node, Spanned, Walk};

const KEYS: &[&str] = &[
    "provider",
    "name",
    "base_url",
    "api_key",
    "stream",
    "temperature",
    "max_tokens",
    "top_p",
    "seed",
    "stop",
    "turns",
    "per_run",
    "thinking_budget",
    "thinking_level",
    "interleaved_thinking",
    "reasoning_effort",
    "store",
];

const PROVIDERS: &[&str] = &[
    "openai",
    "openai-responses",
    "anthropic",
    "gemini",
    "scripted",
    "registered",
];

/// A provider reached over HTTP: its name in the file, the cargo feature that brings it,
/// the variable its model name defaults to, and the reasoning settings it takes.
struct Hosted {
    provider: Provider,
    name: &'static str,
    enabled: bool,
    model_var: &'static str,
    settings: &'static [&'static str],
}

const HOSTED: &[Hosted] = &[
    Hosted {
        provider: Provider::OpenAi,
        name: "openai",
        enabled: cfg!(feature = "openai"),
        model_var: "OPENAI_MODEL",
        settings: &[],
    },
    Hosted {
        provider: Provider::OpenAiResponses,
        name: "openai-responses",
        enabled: cfg!(feature = "openai-responses"),
        model_var: "OPENAI_MODEL",
        settings: &["reasoning_effort", "store"],
    },
    Hosted {
        provider: Provider::Anthropic,
        name: "anthropic",
        enabled: cfg!(feature = "anthropic"),
        model_var: "ANTHROPIC_MODEL",
        settings: &["thinking_budget", "interleaved_thinking"],
    },
    Hosted {
        provider: Provider::Gemini,
        name: "gemini",
        enabled: cfg!(feature = "gemini"),
        model_var: "GEMINI_MODEL",
        settings: &["thinking_budget", "thinking_level"],
    },
];

/// The reasoning settings of any provider.
const REASONING: &[&str] = &[
    "thinking_budget",
    "thinking_level",
    "interleaved_thinking",
    "reasoning_effort",
    "store",
];

/// The model and its options.
pub(crate) fn model(walk: &mut Walk<'_>, node: &Node<'_>) -> (Option<ModelSpec>, ModelOptions) {
    let mut options = ModelOptions::default();
    let Some(fields) = walk.mapping(node, "`model`", KEYS) else {
        return (None, options);
    };
    if let Some(node) = fields.get("temperature") {
        #[allow(clippy::cast_possible_truncation)]
        let value = walk.number(node).map(|x| x as f32);
        options.temperature = value;
    }
    if let Some(node) = fields.get("top_p") {
        #[allow(clippy::cast_possible_truncation)]
        let value = walk.number(node).map(|x| x as f32);
        options.top_p = value;
    }
    if let Some(node) = fields.get("max_tokens") {
        options.max_tokens = walk.u32(node, 1);
    }
    if let Some(node) = fields.get("seed") {
        options.seed = walk.count(node, 0);
    }
    if let Some(node) = fields.get("stop") {
        options.stop = walk.list(node, Walk::string);
    }
    let provider = walk
        .required(&fields, "provider", "`model`")
        .and_then(|node| walk.choice(node, "model provider", PROVIDERS));
    // The keys that only some providers take; any other provider refuses them.
    let not_for = |walk: &mut Walk<'_>, keys: &[&str], provider: &str| {
        for key in keys {
            if let Some(node) = fields.get(key) {
                let message = format!("`{key}` is not a setting of the `{provider}` provider");
                walk.at(node, ProblemKind::Conflict, message);
            }
        }
    };
    let hosted = (provider.as_deref()).and_then(|name| HOSTED.iter().find(|h| h.name == name));
    let spec = match (hosted, provider.as_deref()) {
        (Some(hosted), _) => {
            let name = hosted.name;
            let refused: Vec<&str> = ["turns", "per_run"]
                .into_iter()
                .chain(REASONING.iter().copied())
                .filter(|key| !hosted.settings.contains(key))
                .collect();
            not_for(walk, &refused, name);
            if !hosted.enabled {
                let message =
                    format!("the `{name}` provider needs the `{name}` feature of tower-adk");
                walk.at(node, ProblemKind::NotEnabled, message);
            }
            if !fields.has("name") && walk.var(hosted.model_var).is_none() {
                let message = format!(
                    "the `{name}` provider needs the model's `name` (or {} in the environment)",
                    hosted.model_var
                );
                walk.at(node, ProblemKind::MissingKey, message);
            }
            Some(ModelSpec::Hosted {
                provider: hosted.provider,
                // The model's variable from the environment the file is read with.
                name: match fields.get("name") {
                    Some(node) => walk.string(node),
                    None => walk.var(hosted.model_var),
                },
                base_url: fields.get("base_url").and_then(|n| walk.string(n)),
                api_key: fields.get("api_key").and_then(|n| walk.string(n)),
                stream: fields.get("stream").and_then(|n| walk.bool(n)),
                reasoning: reasoning(walk, &fields, hosted.provider),
            })
        }
        (None, Some("scripted")) => {
            let keys = ["name", "base_url", "api_key", "stream"];
            not_for(walk, &keys, "scripted");
            not_for(walk, REASONING, "scripted");
            let mut calls = Vec::new();
            let turns = match walk.required(&fields, "turns", "a scripted model") {
                Some(node) => walk.list(node, |walk, node| turn(walk, node, &mut calls)),
                None => Vec::new(),
            };
            let per_run = fields.get("per_run").and_then(|n| walk.bool(n));
            Some(ModelSpec::Scripted {
                turns,
                per_run: per_run.unwrap_or(false),
                calls,
            })
        }
        (None, Some("registered")) => {
            let keys = ["turns", "per_run", "stream", "base_url", "api_key"];
            not_for(walk, &keys, "registered");
            not_for(walk, REASONING, "registered");
            walk.required(&fields, "name", "a registered model")
                .and_then(|n| walk.name(n))
                .map(ModelSpec::Registered)
        }
        _ => None,
    };
    (spec, options)
}

/// The reasoning settings (those of other providers were refused before).
fn reasoning(
    walk: &mut Walk<'_>,
    fields: &crate::file::yaml::Fields<'_, '_>,
    provider: Provider,
) -> ReasoningSpec {
    // Anthropic asks for at least 1,024 tokens; Gemini takes 0 (no thinking, where the
    // model allows it).
    let least = if provider == Provider::Anthropic {
        1024
    } else {
        0
    };
    ReasoningSpec {
        thinking_budget: fields
            .get("thinking_budget")
            .and_then(|n| walk.u32(n, least)),
        thinking_level: (fields.get("thinking_level"))
            .and_then(|n| walk.choice(n, "thinking level", &["minimal", "low", "medium", "high"])),
        interleaved_thinking: fields
            .get("interleaved_thinking")
            .and_then(|n| walk.bool(n)),
        reasoning_effort: fields.get("reasoning_effort").and_then(|n| {
            let efforts = ["none", "minimal", "low", "medium", "high", "xhigh"];
            walk.choice(n, "reasoning effort", &efforts)
        }),
        store: fields.get("store").and_then(|n| walk.bool(n)),
    }
}

/// One scripted turn: `{text}` (or `{stream: [chunks]}`, text that streams in those
/// chunks), `{call: {tool, arguments, id}}` (with an optional `text` or `stream` before
/// it), `{calls: [...]}`, or `{error}`; `delay` waits before answering (before each
/// chunk of a streamed turn). The tools it calls are added to `called`, with their
/// places.
fn turn(walk: &mut Walk<'_>, node: &Node<'_>, called: &mut Vec<Spanned<String>>) -> Option<Turn> {
    let keys = &["text", "stream", "call", "calls", "error", "delay"];
    let fields = walk.mapping(node, "a scripted turn", keys)?;
    let delay = fields.get("delay").and_then(|n| walk.duration(n));
    let turn = scripted_turn(walk, node, &fields, called)?;
    Some(match delay {
        Some(delay) => turn.delay(delay),
        None => turn,
    })
}

fn scripted_turn(
    walk: &mut Walk<'_>,
    node: &Node<'_>,
    fields: &crate::file::yaml::Fields<'_, '_>,
    called: &mut Vec<Spanned<String>>,
) -> Option<Turn> {
    if let Some(node) = fields.get("error") {
        return walk.string(node).map(Turn::error);
    }
    let text = fields.get("text").and_then(|n| walk.string(n));
    let stream = fields
        .get("stream")
        .map(|node| walk.list(node, Walk::string));
    if (fields.has("text") && text.is_none()) || (fields.has("stream") && stream.is_none()) {
        // Its problem is reported (e.g. a variable that is not set).
        return None;
    }
    if let (Some(_), Some(node)) = (&text, fields.get("stream")) {
        let message = "a scripted turn has `text` or `stream`, not both";
        walk.at(node, ProblemKind::Conflict, message);
        return None;
    }
    let mut calls = Vec::new();
    if let Some(node) = fields.get("call") {
        calls.extend(call(walk, node, 1));
    }
    if let Some(node) = fields.get("calls") {
        let mut n = 0;
        calls.extend(walk.list(node, |walk, node| {
            n += 1;
            call(walk, node, n)
        }));
    }
    if text.is_none() && stream.is_none() && calls.is_empty() {
        let message = "a scripted turn needs `text`, `stream`, `call`, `calls` or `error`";
        walk.at(node, ProblemKind::MissingKey, message);
        return None;
    }
    let mut turn = match stream {
        Some(chunks) => Turn::stream(chunks),
        None => Turn::text(text.unwrap_or_default()),
    };
    for (id, tool, arguments) in calls {
        turn = turn.with_call(id, tool.value.clone(), arguments);
        called.push(tool);
    }
    Some(turn)
}

/// `{tool, arguments, id}`; the id defaults to `call_N`.
fn call(
    walk: &mut Walk<'_>,
    node: &Node<'_>,
    n: usize,
) -> Option<(String, Spanned<String>, serde_json::Value)> {
    let fields = walk.mapping(node, "a scripted call", &["tool", "arguments", "id"])?;
    let tool = walk
        .required(&fields, "tool", "a scripted call")
        .and_then(|n| walk.name(n));
    let arguments = match fields.get("arguments") {
        Some(node) => walk.json(node)?,
        None => serde_json::json!({}),
    };
    let id = match fields.get("id") {
        Some(node) => walk.plain_string(node)?,
        None => format!("call_{n}"),
    };
    Some((id, tool?, arguments))
}
