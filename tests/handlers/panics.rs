//! A handler that panics ends its own run with a typed error naming the hook and the
//! handler; other runs polled by the same task go on.

use serde_json::json;
use tower::BoxError;
use tower_adk::handlers::map_output_chunks;
use tower_adk::testing::{ScriptedModel, Turn, chunk_tool, text_tool};
use tower_adk::{Agent, AgentConfig, AgentError, AgentRequest, Handler, Hook, Hooks, ModelRequest};
use tower_adk::{History, ModelNext, ModelResponse, RunContext, StreamNext, ToolNext};
use tower_adk::{ToolOutput, ToolRequest, ToolStream};

/// Panics in one hook, while making its future or while it is polled; passes through
/// the others.
struct PanicsIn(Hook, When);

/// When a [`PanicsIn`] hook panics.
#[derive(Clone, Copy, PartialEq)]
enum When {
    /// Before there is a future to poll (a hook written as a plain `fn` that returns one).
    Making,
    /// When its future is polled (an `async fn` hook).
    Polled,
}

impl PanicsIn {
    fn check(&self, hook: Hook, when: When) {
        if self.0 == hook && self.1 == when {
            match when {
                When::Making => panic!("making {hook} went wrong"),
                When::Polled => panic!("{hook} went wrong"),
            }
        }
    }
}

impl Handler for PanicsIn {
    fn before_agent(
        &self,
        _: &mut RunContext,
        c: AgentConfig,
    ) -> impl Future<Output = Result<AgentConfig, BoxError>> + Send {
        self.check(Hook::BeforeAgent, When::Making);
        async move {
            self.check(Hook::BeforeAgent, When::Polled);
            Ok(c)
        }
    }
    fn before_model(
        &self,
        _: &mut RunContext,
        _: &mut History,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        self.check(Hook::BeforeModel, When::Making);
        async move {
            self.check(Hook::BeforeModel, When::Polled);
            Ok(())
        }
    }
    fn wrap_model(
        &self,
        r: ModelRequest,
        next: ModelNext,
    ) -> impl Future<Output = Result<ModelResponse, BoxError>> + Send {
        self.check(Hook::WrapModel, When::Making);
        async move {
            self.check(Hook::WrapModel, When::Polled);
            next.run(r).await
        }
    }
    fn after_model(
        &self,
        _: &mut RunContext,
        _: &mut History,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        self.check(Hook::AfterModel, When::Making);
        async move {
            self.check(Hook::AfterModel, When::Polled);
            Ok(())
        }
    }
    fn wrap_tool_invoke(
        &self,
        r: ToolRequest,
        next: ToolNext,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send {
        self.check(Hook::WrapToolInvoke, When::Making);
        async move {
            self.check(Hook::WrapToolInvoke, When::Polled);
            next.run(r).await
        }
    }
    fn wrap_tool_stream(
        &self,
        r: ToolRequest,
        next: StreamNext,
    ) -> impl Future<Output = Result<ToolStream, BoxError>> + Send {
        self.check(Hook::WrapToolStream, When::Making);
        async move {
            self.check(Hook::WrapToolStream, When::Polled);
            next.run(r).await
        }
    }
    fn after_agent(
        &self,
        _: &mut RunContext,
        _: &mut History,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        self.check(Hook::AfterAgent, When::Making);
        async move {
            self.check(Hook::AfterAgent, When::Polled);
            Ok(())
        }
    }
}

/// An agent whose every run calls a whole tool and a streamed one, then answers.
fn agent() -> Agent {
    let model = ScriptedModel::per_run([
        Turn::call("c1", "whole", json!({})),
        Turn::call("c2", "streamed", json!({})),
        Turn::text("done"),
    ]);
    Agent::builder(model)
        .tool(text_tool("whole", "w"))
        .tool(chunk_tool("streamed", &["s"], std::time::Duration::ZERO))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_panicking_hook_ends_its_run_with_an_error_naming_hook_and_handler() {
    let agent = agent();
    for hook in Hooks::ALL.iter() {
        let error = agent
            .run(AgentRequest::user("go").with_handler(PanicsIn(hook, When::Polled)))
            .await
            .unwrap_err();

        let AgentError::Handler(failed) = &error else {
            panic!("{hook}: {error:?}");
        };
        assert_eq!(failed.hook(), hook);
        assert!(
            failed.handler().ends_with("PanicsIn"),
            "{}",
            failed.handler()
        );
        assert!(failed.is_panic(), "{hook}");
        assert!(error.to_string().contains("went wrong"), "{error}");
    }
}

#[tokio::test]
async fn a_hook_that_panics_making_its_future_ends_its_run_with_an_error_naming_it() {
    let agent = agent();
    for hook in Hooks::ALL.iter() {
        let (failed, fine) = futures::join!(
            agent
                .run(AgentRequest::user("go").with_handler(PanicsIn(hook, When::Making)))
                .result(),
            agent.run(AgentRequest::user("go")).result(),
        );

        let error = failed.unwrap_err();
        let AgentError::Handler(failed) = &error else {
            panic!("{hook}: {error:?}");
        };
        assert_eq!(failed.hook(), hook);
        assert!(
            failed.handler().ends_with("PanicsIn"),
            "{}",
            failed.handler()
        );
        assert!(failed.is_panic(), "{hook}");
        assert!(
            error
                .to_string()
                .contains(&format!("making {hook} went wrong")),
            "{error}"
        );
        assert_eq!(fine.unwrap().final_message.content(), "done");
    }
}

#[tokio::test]
async fn runs_polled_together_survive_one_that_panics() {
    let agent = agent();
    let runs = Hooks::ALL.iter().flat_map(|hook| {
        [
            agent.run(AgentRequest::user("go")),
            agent.run(AgentRequest::user("go").with_handler(PanicsIn(hook, When::Polled))),
        ]
    });

    let results = futures::future::join_all(runs.map(|run| run.result())).await;

    for pair in results.chunks(2) {
        assert_eq!(pair[0].as_ref().unwrap().final_message.content(), "done");
        assert!(
            pair[1]
                .as_ref()
                .unwrap_err()
                .as_handler()
                .unwrap()
                .is_panic()
        );
    }
}

#[tokio::test]
async fn a_panic_in_a_stream_wrappers_closure_ends_only_its_run() {
    let model =
        ScriptedModel::per_run([Turn::call("c1", "streamed", json!({})), Turn::text("done")]);
    let agent = Agent::builder(model)
        .tool(chunk_tool("streamed", &["s"], std::time::Duration::ZERO))
        .build()
        .unwrap();
    let panicking = map_output_chunks(|_: String| -> String { panic!("chunk mapper went wrong") });

    let (failed, fine) = futures::join!(
        agent
            .run(AgentRequest::user("go").with_handler(panicking))
            .result(),
        agent.run(AgentRequest::user("go")).result(),
    );

    let error = failed.unwrap_err();
    let AgentError::Panicked(panic) = &error else {
        panic!("{error:?}");
    };
    assert_eq!(panic.message(), "chunk mapper went wrong");
    assert_eq!(fine.unwrap().final_message.content(), "done");
}

#[tokio::test]
async fn a_panicking_model_is_a_model_error() {
    let model = tower::service_fn(|_: ModelRequest| async {
        panic!("model went wrong");
        #[allow(unreachable_code)]
        Ok::<ModelResponse, BoxError>(ModelResponse::message(tower_adk::Message::assistant("")))
    });
    let agent = Agent::builder(model).build().unwrap();

    let error = agent.run(AgentRequest::user("go")).await.unwrap_err();

    let AgentError::Model(source) = &error else {
        panic!("{error:?}");
    };
    assert!(source.is::<tower_adk::Panicked>(), "{source}");
}
