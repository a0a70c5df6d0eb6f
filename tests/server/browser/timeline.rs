//! The page's run timeline in Chromium: one row per model call and tool call on a time
//! axis, an agent called as a tool nested under its call, a failed call in red, an
//! approval answered on the page with who decided it (one that a sub-agent asks for
//! waits on its caller's row), a failed model call in red with why, and a bar's input
//! and output shown when it is clicked. The waterfall's screenshot is written to
//! `target/artifacts/timeline.png` on every run.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tower::ServiceBuilder;
use tower_adk::Agent;
use tower_adk::compose::AgentTool;
use tower_adk::model::{ModelResponse, Usage};
use tower_adk::server::{BearerTokens, Server};
use tower_adk::testing::{ScriptedModel, Turn, failing_tool, sleep_tool, text_tool};

use super::{Admin, Browser};
use crate::{Counter, TestServer, asking_tool};

/// How long `lookup` takes: long enough to see, short enough for a test.
const LOOKUP: Duration = Duration::from_millis(300);

/// `desk`, Alice's: its model (each call 80 ms, 1,000 tokens in and 100 out) calls
/// `lookup` (300 ms) and `ledger` (which fails) at once, then `billing`, an agent called
/// as a tool that calls its own `invoice`, then `pay`, which asks a person; then answers.
async fn desk_server(paid: &Counter) -> TestServer {
    let think = Duration::from_millis(80);
    let billing = Agent::builder(ScriptedModel::per_run([
        Turn::call("s1", "invoice", json!({"number": 7})).delay(think),
        Turn::text("Invoice 7 is paid.").delay(think),
    ]))
    .name("billing")
    .tool(text_tool("invoice", "paid on 3 May"))
    .build()
    .unwrap();
    let model = ScriptedModel::per_run([
        Turn::text("Let me look.")
            .with_call("c1", "lookup", json!({"order": 7}))
            .with_call("c2", "ledger", json!({"order": 7}))
            .delay(think),
        Turn::call("c3", "billing", json!({"request": "Is invoice 7 paid?"})).delay(think),
        Turn::call("c4", "pay", json!({"to": "Bob"})).delay(think),
        Turn::text("Order 7 is paid, and so is Bob.").delay(think),
    ]);
    let used = Usage::new(1_000, 100, 1_100);
    let model = ServiceBuilder::new()
        .map_response(move |reply: ModelResponse| reply.with_usage(Some("small".into()), used))
        .service(model);
    let desk = Agent::builder(model)
        .name("desk")
        .tool(sleep_tool("lookup", LOOKUP, "order 7: shipped"))
        .tool(failing_tool("ledger", "the ledger is offline"))
        .tool(
            AgentTool::new(billing)
                .description("Answers billing questions")
                .into_tool(),
        )
        .tool(asking_tool(paid))
        .build()
        .unwrap();
    let server = Server::new()
        .agent("desk", desk)
        .identify(BearerTokens::new().token_of("alice", "alice-token", Admin))
        .page(true);
    TestServer::start(server.into_router()).await
}

/// Each row of the waterfall, in the page's order: kind, name, depth, start and end (ms
/// from the run's first event), the bar's left and width in pixels, what the row says.
const ROWS: &str = "return Array.from(document.querySelectorAll('.waterfall li.span'), li => {
    const bar = li.querySelector(':scope > .span-row .bar').getBoundingClientRect();
    return {
        kind: li.dataset.kind, name: li.querySelector(':scope > .span-row .name').textContent,
        depth: Number(li.dataset.depth), start: Number(li.dataset.start),
        end: Number(li.dataset.end), left: bar.left, width: bar.width,
        meta: li.querySelector(':scope > .span-row .meta').textContent,
        failed: li.classList.contains('failed'),
        color: getComputedStyle(li.querySelector(':scope > .span-row .bar')).backgroundColor,
    };
})";

#[derive(Debug)]
struct Row {
    kind: String,
    name: String,
    depth: u64,
    start: f64,
    end: f64,
    left: f64,
    width: f64,
    meta: String,
    failed: bool,
    color: String,
}

/// The waterfall's rows, as the page shows them.
async fn rows(browser: &Browser) -> Vec<Row> {
    match browser.eval(ROWS).await {
        Value::Array(rows) => rows.iter().map(Row::read).collect(),
        other => panic!("no rows: {other}"),
    }
}

impl Row {
    fn read(value: &Value) -> Row {
        let number = |key: &str| value[key].as_f64().unwrap();
        let text = |key: &str| value[key].as_str().unwrap().to_owned();
        Row {
            kind: text("kind"),
            name: text("name"),
            depth: value["depth"].as_u64().unwrap(),
            start: number("start"),
            end: number("end"),
            left: number("left"),
            width: number("width"),
            meta: text("meta"),
            failed: value["failed"].as_bool().unwrap(),
            color: text("color"),
        }
    }

    fn right(&self) -> f64 {
        self.left + self.width
    }
}

#[tokio::test]
async fn the_timeline_draws_a_runs_calls_nests_a_sub_agent_and_says_who_approved() {
    let paid = Counter::default();
    let server = desk_server(&paid).await;
    let browser = Browser::open(&server.url("/#token=alice-token")).await;
    browser.wait_status("1 agent(s) available.").await;

    browser.say("Is order 7 paid?").await;
    browser.wait_status("Waiting for your decision.").await;
    let waiting = "return document.querySelector('.waterfall li.interrupt .meta').textContent";
    assert!(
        browser
            .eval(waiting)
            .await
            .as_str()
            .unwrap()
            .contains("waiting")
    );
    browser.click(".approval button.approve").await;
    browser.wait_status("Run completed.").await;
    assert_eq!(paid.get(), 1);

    let rows = rows(&browser).await;
    let names: Vec<(&str, &str, u64)> = rows
        .iter()
        .map(|r| (r.kind.as_str(), r.name.as_str(), r.depth))
        .collect();
    assert_eq!(
        names,
        [
            ("model", "model call 1", 0),
            ("tool", "lookup (c1)", 0),
            ("tool", "ledger (c2)", 0),
            ("model", "model call 2", 0),
            ("tool", "billing (c3)", 0),
            ("model", "billing: model call 1", 1),
            ("tool", "invoice (s1)", 1),
            ("model", "billing: model call 2", 1),
            ("model", "model call 3", 0),
            ("tool", "pay (c4)", 0),
            ("interrupt", "approval: pay (c4)", 0),
            ("tool", "pay (c4), resumed", 0),
            ("model", "model call 4", 0),
        ],
        "{rows:#?}"
    );
    let row = |i: usize| &rows[i];

    // Every bar is drawn, and bars that start later sit further right, in time order.
    for r in &rows {
        assert!(r.width >= 2.0 && r.end >= r.start, "{r:?}");
    }
    for pair in rows.windows(2) {
        if pair[1].start > pair[0].start + 10.0 {
            assert!(pair[1].left > pair[0].left, "{pair:?}");
        }
    }
    // The model's turns and the tools take turns: each starts as the one before ends
    // (a bar is at least 3 px wide, so a short one may reach past its end).
    let turns = [(0, 1), (1, 3), (3, 4), (4, 8), (8, 9), (11, 12)];
    for (before, after) in turns {
        let (before, after) = (row(before), row(after));
        assert!(after.start >= before.end - 1.0, "{before:?} then {after:?}");
        assert!(
            after.left >= before.right() - 4.0,
            "{before:?} then {after:?}"
        );
    }
    // `lookup` and `ledger` start together; `lookup` takes its 300 ms, `ledger` fails at
    // once, in red, and the model waits for `lookup`.
    let (lookup, ledger) = (row(1), row(2));
    assert!(
        (ledger.start - lookup.start).abs() < 50.0,
        "{lookup:?} {ledger:?}"
    );
    assert!(lookup.end - lookup.start >= 290.0, "{lookup:?}");
    assert!(lookup.width > 3.0 * ledger.width, "{lookup:?} {ledger:?}");
    assert!(row(3).start >= lookup.end - 1.0);
    assert!(ledger.failed && !lookup.failed);
    assert_eq!(ledger.color, "rgb(220, 38, 38)");
    assert!(ledger.meta.contains("failed: "), "{ledger:?}");
    assert!(
        lookup.meta.ends_with(" ms") || lookup.meta.ends_with(" s"),
        "{lookup:?}"
    );
    // Model calls say their tokens and take their 80 ms.
    for model in [row(0), row(3), row(8), row(12)] {
        assert!(model.meta.ends_with("1,100 tokens"), "{model:?}");
        assert!(model.end - model.start >= 70.0, "{model:?}");
    }
    // The sub-agent's calls sit within its call, indented.
    let billing = row(4);
    for nested in &rows[5..8] {
        assert!(nested.start >= billing.start - 1.0 && nested.end <= billing.end + 1.0);
        assert!(nested.left >= billing.left - 1.0 && nested.right() <= billing.right() + 1.0);
    }
    assert!(row(6).start >= row(5).end - 1.0 && row(7).start >= row(6).end - 1.0);
    // The approval waits from the interrupt to the decision, and says who decided.
    let (asked, approval, resumed) = (row(9), row(10), row(11));
    assert!(asked.meta.contains("interrupted"), "{asked:?}");
    assert!(approval.start >= asked.end - 1.0 && resumed.start >= approval.end - 1.0);
    assert!(approval.meta.ends_with("approved by alice"), "{approval:?}");

    // A bar is a button: clicked, it shows its call's input and output.
    let detail = ".waterfall .span-detail";
    assert!(browser.is_hidden(detail).await);
    let bars = ".waterfall li.span > .span-row .bar";
    browser.click_nth(bars, 1).await;
    assert!(!browser.is_hidden(detail).await);
    assert_eq!(
        browser.text(&format!("{detail} .detail-input")).await,
        "{\n  \"order\": 7\n}"
    );
    assert_eq!(
        browser.text(&format!("{detail} .detail-output")).await,
        "order 7: shipped"
    );
    let expanded = "return Array.from(document.querySelectorAll(arguments[0]), \
                    b => b.getAttribute('aria-expanded'))";
    let expanded = browser
        .client
        .execute(expanded, vec![json!(bars)])
        .await
        .unwrap();
    assert_eq!(expanded[1], "true");
    assert_eq!(expanded[0], "false");

    browser.click_nth(bars, 2).await;
    let output = browser.text(&format!("{detail} .detail-output")).await;
    assert!(output.ends_with("the ledger is offline"), "{output}");
    browser.click_nth(bars, 6).await;
    assert_eq!(
        browser.text(&format!("{detail} .detail-output")).await,
        "paid on 3 May"
    );
    browser.click_nth(bars, 0).await;
    assert_eq!(
        browser.text(&format!("{detail} .detail-input")).await,
        "the user: Is order 7 paid?"
    );
    let reply = browser.text(&format!("{detail} .detail-output")).await;
    assert!(
        reply.starts_with("Let me look.\n\nCalls:\nlookup (c1)"),
        "{reply}"
    );
    assert!(
        reply.ends_with("Usage (small): 1,000 in, 100 out"),
        "{reply}"
    );
    browser.click_nth(bars, 10).await;
    let decided = browser.text(&format!("{detail} .detail-output")).await;
    assert!(decided.starts_with("approved by alice\nat "), "{decided}");

    // The screenshot, with `lookup`'s input and output open, in a larger window.
    browser.click_nth(bars, 1).await;
    browser.client.set_window_size(1280, 1100).await.unwrap();
    browser
        .eval("document.querySelector('.waterfall').scrollIntoView({block: 'start'})")
        .await;
    let shot = browser.screenshot(".waterfall").await;
    assert!(shot.starts_with(b"\x89PNG"), "a PNG");
    let artifact = artifacts().join("timeline.png");
    std::fs::write(&artifact, &shot).unwrap();
    browser.close().await;
}

#[tokio::test]
async fn a_model_call_that_fails_is_drawn_in_red_and_says_why() {
    let model = ScriptedModel::per_run([
        Turn::call("c1", "lookup", json!({"order": 7})),
        Turn::error("the model is down"),
    ]);
    let lookup = sleep_tool("lookup", Duration::from_millis(50), "order 7: shipped");
    let flaky = Agent::builder(model).tool(lookup).build().unwrap();
    let server = Server::new()
        .agent("flaky", flaky)
        .identify(BearerTokens::new().token_of("alice", "alice-token", Admin))
        .page(true);
    let server = TestServer::start(server.into_router()).await;
    let browser = Browser::open(&server.url("/#token=alice-token")).await;
    browser.wait_status("1 agent(s) available.").await;

    browser.say("Where is order 7?").await;
    browser.wait_status("The run failed.").await;

    let rows = rows(&browser).await;
    let names: Vec<_> = rows
        .iter()
        .map(|r| (r.kind.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("model", "model call 1"),
            ("tool", "lookup (c1)"),
            ("model", "model call 2")
        ]
    );
    let failed = &rows[2];
    assert!(
        failed.failed && !rows[0].failed && !rows[1].failed,
        "{rows:#?}"
    );
    assert_eq!(failed.color, "rgb(220, 38, 38)");
    assert!(failed.meta.ends_with("failed: model_failed"), "{failed:?}");
    assert!(
        failed.start >= rows[1].end - 1.0,
        "it waited for the tool: {rows:#?}"
    );
    browser.click_nth(".waterfall .bar", 2).await;
    let why = browser.text(".waterfall .detail-output").await;
    assert!(
        why.starts_with("model_failed: ") && why.contains("the model is down"),
        "{why}"
    );
    browser.close().await;
}

#[tokio::test]
async fn an_approval_a_sub_agent_asks_for_waits_on_its_callers_row() {
    let paid = Counter::default();
    let billing = Agent::builder(ScriptedModel::per_run([
        Turn::call("s1", "pay", json!({"to": "Bob"})),
        Turn::text("Paid Bob."),
    ]))
    .name("billing")
    .tool(asking_tool(&paid))
    .build()
    .unwrap();
    let desk = Agent::builder(ScriptedModel::per_run([
        Turn::call("c1", "billing", json!({"request": "Pay Bob"})),
        Turn::text("Bob is paid."),
    ]))
    .tool(AgentTool::new(billing).description("Pays").into_tool())
    .build()
    .unwrap();
    let server = Server::new()
        .agent("desk", desk)
        .identify(BearerTokens::new().token_of("alice", "alice-token", Admin))
        .page(true);
    let server = TestServer::start(server.into_router()).await;
    let browser = Browser::open(&server.url("/#token=alice-token")).await;
    browser.wait_status("1 agent(s) available.").await;

    browser.say("Pay Bob").await;
    browser.wait_status("Waiting for your decision.").await;
    browser.click(".approval button.approve").await;
    browser.wait_status("Run completed.").await;
    assert_eq!(paid.get(), 1);

    let rows = rows(&browser).await;
    let names: Vec<_> = (rows.iter())
        .map(|r| {
            (
                r.name.as_str(),
                r.depth,
                r.meta.split(" · ").nth(1).unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("model call 1", 0, ""),
            ("billing (c1)", 0, "interrupted"),
            ("billing: model call 1", 1, ""),
            ("pay (s1)", 1, "interrupted"),
            ("approval: billing (c1)", 0, "approved by alice"),
            ("billing (c1), resumed", 0, ""),
            ("pay (s1), resumed", 1, ""),
            ("billing: model call 2", 1, ""),
            ("model call 2", 0, ""),
        ],
        "{rows:#?}"
    );
    // The approval shows the question the sub-agent's tool asked.
    browser.click_nth(".waterfall .bar", 4).await;
    let input = browser.text(".waterfall .detail-input").await;
    assert!(input.contains("Pay?"), "{input}");
    browser.close().await;
}

/// The folder of the test's artifacts, `artifacts/` in the target folder.
fn artifacts() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.parent().unwrap_or(&tmp).join("artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
