//! A run's usage, as its model reported it, on every route: the runs route's `completed`
//! event, the thread's record, AG-UI's `RUN_FINISHED` (validated by the AG-UI SDK's
//! models) with a `CUSTOM` cost, and the OpenAI-compatible route's `usage`; and a resumed
//! AG-UI run that counts only its own calls.

use serde_json::{Value, json};
use tower::service_fn;
use tower_adk::model::{ModelResponse, Price, Prices, Usage};
use tower_adk::server::Server;
use tower_adk::{Agent, BoxError, Message, ModelRequest};

use super::protocols::python;
use super::{Counter, TestServer, asking_tool};

/// What each call of the metered model uses.
fn call() -> Usage {
    Usage::new(1_000, 100, 1_100)
        .with_cache(400, 0)
        .with_reasoning(30)
}

/// 600 fresh x $2 + 400 cached x $0.5 + 100 out x $8, per million tokens.
const CALL_USD: f64 = 0.0022;

/// A model, `small`, that reports `call()` for every reply: it calls `pay` while its
/// history has no tool result, then says "Counted.".
fn metered_agent(paid: &Counter) -> Agent {
    let model = service_fn(|request: ModelRequest| async move {
        let paid = request.messages.iter().any(|m| m.tool_call_id().is_some());
        let reply = if paid {
            Message::assistant("Counted.")
        } else {
            let pay = tower_adk::ToolCall::new("c1", "pay", json!({}));
            Message::assistant_with_calls("", vec![pay])
        };
        let response = ModelResponse::message(reply).with_usage(Some("small".into()), call());
        Ok::<_, BoxError>(response)
    });
    let prices = Prices::new().with("small", Price::per_million(2.0, 8.0).with_cache(0.5, 2.5));
    Agent::builder(model)
        .name("metered")
        .tool(asking_tool(paid))
        .prices(prices)
        .build()
        .unwrap()
}

/// A model, `small`, that reports `call()` and says "Counted.".
fn counting_agent() -> Agent {
    let model = service_fn(|_: ModelRequest| async {
        let reply = ModelResponse::message(Message::assistant("Counted."));
        Ok::<_, BoxError>(reply.with_usage(Some("small".into()), call()))
    });
    let prices = Prices::new().with("small", Price::per_million(2.0, 8.0).with_cache(0.5, 2.5));
    Agent::builder(model).prices(prices).build().unwrap()
}

fn assert_usd(cost: &Value, calls: f64) {
    let usd = cost["usd"].as_f64().unwrap();
    assert!((usd - CALL_USD * calls).abs() < 1e-12, "{cost}");
}

#[tokio::test]
async fn a_runs_usage_shows_on_the_completed_event_the_thread_agui_and_openai() {
    let router = Server::new()
        .agent("metered", counting_agent())
        .into_router();
    let server = TestServer::start(router).await;

    // The runs route: the `completed` event.
    let (status, completed) = server
        .run("metered", json!({"input": "count", "thread": "t1"}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        completed["usage"],
        json!({
            "total": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100,
                      "cache_read_tokens": 400, "reasoning_tokens": 30},
            "by_model": {"small": {"prompt_tokens": 1000, "completion_tokens": 100,
                      "total_tokens": 1100, "cache_read_tokens": 400, "reasoning_tokens": 30}},
            "calls": 1,
        })
    );
    assert_usd(&completed["cost"], 1.0);

    // The thread: both its runs.
    server
        .run("metered", json!({"input": "again", "thread": "t1"}))
        .await;
    let thread: Value = reqwest::get(server.url("/agents/metered/threads/t1"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(thread["usage"]["calls"], 2);
    assert_eq!(thread["usage"]["total"]["prompt_tokens"], 2000);
    assert_eq!(
        thread["usage"]["by_model"]["small"]["completion_tokens"],
        200
    );
    assert_usd(&thread["cost"], 2.0);

    // AG-UI: `RUN_FINISHED`'s `usage` and a `CUSTOM` cost, checked by the SDK's models.
    let printed = python("agui_client.py", &[&server.url(""), "usage"]).await;
    assert!(printed.ends_with("ok\n"), "{printed}");

    // The OpenAI-compatible route, whole and streamed.
    let client = reqwest::Client::new();
    let completion: Value = client
        .post(server.url("/v1/chat/completions"))
        .json(&json!({"model": "metered", "messages": [{"role": "user", "content": "count"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let expected = json!({
        "prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100,
        "prompt_tokens_details": {"cached_tokens": 400},
        "completion_tokens_details": {"reasoning_tokens": 30},
    });
    assert_eq!(completion["usage"], expected);
    let streamed = client
        .post(server.url("/v1/chat/completions"))
        .json(
            &json!({"model": "metered", "stream": true, "stream_options": {"include_usage": true},
                      "messages": [{"role": "user", "content": "count"}]}),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let chunks = data_lines(&streamed);
    let last = chunks
        .iter()
        .rev()
        .find(|c| c != &&json!("[DONE]"))
        .unwrap();
    assert_eq!(last["usage"], expected);
}

#[tokio::test]
async fn a_resumed_agui_run_reports_only_the_calls_it_made() {
    let paid = Counter::default();
    let router = Server::new()
        .agent("metered", metered_agent(&paid))
        .into_router();
    let server = TestServer::start(router).await;
    let agui = |body: Value| {
        let url = server.url("/agents/metered/agui");
        async move {
            let response = reqwest::Client::new().post(url).json(&body).send().await;
            data_lines(&response.unwrap().text().await.unwrap())
        }
    };

    let stopped = agui(json!({"threadId": "t", "runId": "r1",
        "messages": [{"id": "m1", "role": "user", "content": "pay"}]}))
    .await;
    let finished = stopped.last().unwrap();
    assert_eq!(finished["outcome"]["type"], "interrupt");
    let interrupt = finished["outcome"]["interrupts"][0]["id"].clone();
    let resumed = agui(json!({"threadId": "t", "runId": "r2", "messages": [],
        "resume": [{"interruptId": interrupt, "status": "resolved", "payload": {"approved": true}}]}))
    .await;

    let one_call = json!([{"model": "small", "inputTokens": 1000, "outputTokens": 100,
        "totalTokens": 1100, "reasoningTokens": 30, "cachedInputTokens": 400}]);
    assert_eq!(finished["usage"], one_call);
    let (cost, finished) = (&resumed[resumed.len() - 2], &resumed[resumed.len() - 1]);
    assert_eq!(finished["outcome"]["type"], "success");
    // The resumed run made one call (its result counts both, since the run began).
    assert_eq!(finished["usage"], one_call);
    assert_eq!(
        (&cost["type"], &cost["name"]),
        (&json!("CUSTOM"), &json!("cost"))
    );
    assert_usd(&cost["value"], 1.0);
    assert_eq!(paid.get(), 1);
}

/// The JSON of each `data:` line of an SSE body (`[DONE]` as a string).
fn data_lines(body: &str) -> Vec<Value> {
    let lines = body.lines().filter_map(|line| line.strip_prefix("data:"));
    lines
        .map(|data| {
            let data = data.trim();
            serde_json::from_str(data).unwrap_or_else(|_| Value::from(data))
        })
        .collect()
}
