//! Sends an image to a model and prints its answer.
//!
//! By default the model is scripted (no key needed): it answers from its script, and the
//! example prints what the model was sent, the image as a part of the user's message:
//!
//! ```text
//! cargo run --example vision
//! cargo run --example vision -- photo.jpg "How many people are there?"
//! ```
//!
//! With a provider's key in the environment (and its feature), a real model looks at it:
//!
//! ```text
//! ANTHROPIC_API_KEY=sk-ant-... ANTHROPIC_MODEL=claude-sonnet-4-5 \
//!     cargo run --features anthropic --example vision
//! GEMINI_API_KEY=... GEMINI_MODEL=gemini-2.5-flash cargo run --features gemini --example vision
//! OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-5-mini \
//!     cargo run --features openai-responses --example vision
//! ```

use std::path::Path;

use tower::ServiceExt;
use tower_adk::content::{Part, Source};
use tower_adk::model::BoxModel;
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, AgentResult, BoxError, Message};

/// The image sent when none is named: a red square on white, 32 by 32 pixels.
pub(crate) const DEFAULT_IMAGE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/examples/red-square.png");

/// The question asked when none is given.
pub(crate) const DEFAULT_QUESTION: &str = "What is in this image? Answer in one sentence.";

/// The image's media type, from its file name; `None` for a kind models do not take.
pub(crate) fn media_type(path: &Path) -> Option<&'static str> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// Asks `model` the question about the image, in one run.
pub(crate) async fn ask(
    model: BoxModel,
    image: Source,
    question: &str,
) -> Result<AgentResult, BoxError> {
    let agent = Agent::builder(model)
        .name("vision")
        .instruction("You describe images plainly.")
        .build()?;
    let message = Message::user(vec![Part::text(question), Part::image(image)]);
    let run = agent.oneshot(AgentRequest::new(vec![message])).await?;
    Ok(run.await?)
}

/// The model of the first provider whose key is set (and whose feature is on), with its
/// name; `None` when there is none.
fn provider_from_env() -> Result<Option<(&'static str, BoxModel)>, BoxError> {
    let set = |name: &str| std::env::var(name).is_ok_and(|value| !value.trim().is_empty());
    #[cfg(feature = "anthropic")]
    if set("ANTHROPIC_API_KEY") {
        let model = tower_adk::providers::anthropic::AnthropicModel::from_env()?;
        return Ok(Some((
            "anthropic",
            BoxModel::new(model.map_err(Into::into)),
        )));
    }
    #[cfg(feature = "gemini")]
    if set("GEMINI_API_KEY") || set("GOOGLE_API_KEY") {
        let model = tower_adk::providers::gemini::GeminiModel::from_env()?;
        return Ok(Some(("gemini", BoxModel::new(model.map_err(Into::into)))));
    }
    #[cfg(feature = "openai-responses")]
    if set("OPENAI_API_KEY") {
        let model = tower_adk::providers::openai::responses::ResponsesModel::from_env()?;
        return Ok(Some((
            "openai-responses",
            BoxModel::new(model.map_err(Into::into)),
        )));
    }
    let _ = set;
    Ok(None)
}

/// The scripted model the example runs on without a key.
pub(crate) fn scripted() -> ScriptedModel {
    ScriptedModel::new([Turn::text(
        "A red square in the middle of a white background.",
    )])
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| DEFAULT_IMAGE.to_owned());
    let question = args.next().unwrap_or_else(|| DEFAULT_QUESTION.to_owned());
    let path = Path::new(&path);
    let Some(media_type) = media_type(path) else {
        return Err(format!("{}: not a PNG, JPEG, GIF or WebP image", path.display()).into());
    };
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let image = Source::from_bytes(media_type, &bytes);

    let (name, model, script) = match provider_from_env()? {
        Some((name, model)) => (name, model, None),
        None => {
            let script = scripted();
            let model = BoxModel::new(script.clone().map_err(Into::into));
            ("scripted", model, Some(script))
        }
    };
    println!(
        "{} ({media_type}, {} bytes) -> {name}",
        path.display(),
        bytes.len()
    );
    println!("> {question}");
    let result = ask(model, image, &question).await?;
    println!("{}", result.final_message.content());
    if let Some(script) = script {
        // What the scripted model was sent: the question and the image, as parts.
        let request = &script.requests()[0];
        let user = request
            .messages
            .last()
            .ok_or("the model was sent nothing")?;
        let parts: Vec<String> = (user.parts().iter())
            .map(|part| part.placeholder().unwrap_or_else(|| "[text]".to_owned()))
            .collect();
        println!("  (the scripted model was sent: {})", parts.join(" "));
    }
    let usage = &result.usage.total;
    if result.usage.calls > 0 {
        println!(
            "  ({} tokens in, {} out)",
            usage.prompt_tokens, usage.completion_tokens
        );
    }
    Ok(())
}
