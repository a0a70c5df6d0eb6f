//! `model:`: where the model comes from, and the options sent with each call.

use adk::ModelOptions;
use adk::testing::Turn;

use crate::file::error::ProblemKind;
use crate::file::spec::ModelSpec;
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
];

const PROVIDERS: &[&str] = &["openai", "scripted", "registered"];

/// The model and its options.
pub(super) fn model(walk: &mut Walk<'_>, node: &Node<'_>) -> (Option<ModelSpec>, ModelOptions) {
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
    let spec = match provider.as_deref() {
        Some("openai") => {
            not_for(walk, &["turns", "per_run"], "openai");
            if !cfg!(feature = "openai") {
                let message = "the `openai` provider needs the `openai` feature of tower-adk";
                walk.at(node, ProblemKind::NotEnabled, message);
            }
            if !fields.has("name") && walk.var("OPENAI_MODEL").is_none() {
                let message = "the `openai` provider needs the model's `name` (or OPENAI_MODEL in the environment)";
                walk.at(node, ProblemKind::MissingKey, message);
            }
            Some(ModelSpec::OpenAi {
                // OPENAI_MODEL from the environment the file is read with.
                name: match fields.get("name") {
                    Some(node) => walk.string(node),
                    None => walk.var("OPENAI_MODEL"),
                },
                base_url: fields.get("base_url").and_then(|n| walk.string(n)),
                api_key: fields.get("api_key").and_then(|n| walk.string(n)),
                stream: fields.get("stream").and_then(|n| walk.bool(n)),
            })
        }
        Some("scripted") => {
            not_for(walk, &["name", "base_url", "api_key", "stream"], "scripted");
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
        Some("registered") => {
            let keys = ["turns", "per_run", "stream", "base_url", "api_key"];
            not_for(walk, &keys, "registered");
            walk.required(&fields, "name", "a registered model")
                .and_then(|n| walk.name(n))
                .map(ModelSpec::Registered)
        }
        _ => None,
    };
    (spec, options)
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
