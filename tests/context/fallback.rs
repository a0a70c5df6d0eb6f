//! The model fallback chain: the next model answers when one fails, before its first
//! streamed delta too; not when the first succeeds, or after a delta, or when the
//! predicate says no.

use futures::StreamExt;
use tower::{ServiceBuilder, ServiceExt};
use tower_adk::handlers::{Fallback, FallbackLayer};
use tower_adk::testing::{ScriptedModel, Turn};
use tower_adk::{Agent, AgentRequest, Message, ModelRequest};

fn request() -> ModelRequest {
    ModelRequest::new(vec![Message::user("hi")].into())
}

#[tokio::test]
async fn the_second_model_answers_when_the_first_fails() {
    let first = ScriptedModel::new([Turn::error("503 overloaded")]);
    let second = ScriptedModel::new([Turn::error("timeout")]);
    let third = ScriptedModel::new([Turn::text("third")]);
    let model = Fallback::new(first.clone())
        .or(second.clone())
        .or(third.clone());
    let agent = Agent::builder(model).build().unwrap();

    let result = agent.run(AgentRequest::user("hi")).await.unwrap();

    assert_eq!(result.final_message.content(), "third");
    assert_eq!((first.calls(), second.calls(), third.calls()), (1, 1, 1));
    assert_eq!(third.requests()[0].messages[0].content(), "hi");
}

#[tokio::test]
async fn no_fallback_when_the_first_succeeds() {
    let first = ScriptedModel::new([Turn::text("first")]);
    let second = ScriptedModel::new([Turn::text("second")]);
    let model = ServiceBuilder::new()
        .layer(FallbackLayer::new(second.clone()))
        .service(first.clone());

    let reply = model
        .oneshot(request())
        .await
        .unwrap()
        .into_message()
        .await
        .unwrap();

    assert_eq!(reply.content(), "first");
    assert_eq!((first.calls(), second.calls()), (1, 0));
}

#[tokio::test]
async fn a_stream_that_fails_before_its_first_delta_falls_back_and_one_after_does_not() {
    let first = ScriptedModel::new([
        Turn::stream(Vec::<String>::new()).then_error("reset before any token"),
        Turn::stream(["Hel", "lo"]).then_error("reset mid-reply"),
    ]);
    let second = ScriptedModel::new([Turn::stream(["from ", "second"])]);
    let model = Fallback::new(first.clone()).or(second.clone());

    let reply = model.clone().oneshot(request()).await.unwrap();
    assert!(reply.is_streamed());
    assert_eq!(reply.into_message().await.unwrap().content(), "from second");

    let reply = model.oneshot(request()).await.unwrap();
    let deltas: Vec<_> = reply.into_stream().collect().await;
    assert!(deltas[0].is_ok());
    assert!(
        deltas
            .last()
            .unwrap()
            .as_ref()
            .is_err_and(|e| e.to_string().contains("mid-reply"))
    );
    assert_eq!((first.calls(), second.calls()), (2, 1));
}

#[tokio::test]
async fn the_predicate_decides_which_errors_fall_back() {
    let first = ScriptedModel::new([Turn::error("400 bad request"), Turn::error("503")]);
    let second = ScriptedModel::new([Turn::text("second")]);
    let model = Fallback::new(first.clone())
        .or(second.clone())
        .when(|error| !error.to_string().contains("400"));

    let error = model.clone().oneshot(request()).await.unwrap_err();
    assert!(error.to_string().contains("400"), "{error}");
    assert_eq!(second.calls(), 0);

    let reply = model
        .oneshot(request())
        .await
        .unwrap()
        .into_message()
        .await
        .unwrap();
    assert_eq!(reply.content(), "second");
}
