//! The chat page (`Server::page`) in a real headless Chromium, driven through
//! chromedriver with fantoccini: the agents listed once a token is given, tool chunks
//! shown while the tool still runs, a thread kept across turns, approvals answered
//! with the page's buttons, and a reply's reasoning (collapsed), images and files and
//! the run's usage; the run's timeline (`timeline`).
//!
//! Debian's `chromium` and `chromium-driver` come from `scripts/setup-browser`
//! (`$CHROMIUM` and `$CHROMEDRIVER` override where they are found). The test starts
//! chromedriver on a free port of 127.0.0.1, Chromium's profile goes under
//! `target/tmp/browser/`, and both are killed when the test ends, passed or failed. A
//! browser that cannot start fails the test. One browser runs at a time.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use tokio::sync::{Mutex, MutexGuard, Semaphore};
use tower::ServiceBuilder;
use tower_adk::content::{Part, Reasoning, Source};
use tower_adk::model::{ModelResponse, Price, Prices, Usage};
use tower_adk::server::{BearerTokens, ServedAgent, Server};
use tower_adk::testing::{ScriptedModel, Turn, text_tool};
use tower_adk::{
    Agent, AgentConfig, BoxError, Handler, HandlerLayer, RunContext, Tool, ToolInfo, ToolOutput,
};

use super::{Counter, TestServer, asking_tool, track_behind};

mod timeline;

/// How long the page may take to reach a state before the test fails: a guard against
/// hanging, not a measure (a slow, shared machine is fine).
const HANG_GUARD: Duration = Duration::from_secs(30);

/// One browser at a time: each is a few processes that a small machine runs slowly.
static ONE_BROWSER: Mutex<()> = Mutex::const_new(());

#[derive(Clone)]
struct Admin;

/// `support` tracks an order with a tool that streams its first chunk, then waits for
/// `gate` before the rest, and answers a second message on its thread without it;
/// `bank` pays once a person approves (counted in `paid`).
async fn agents_server(gate: &Arc<Semaphore>, paid: &Counter) -> TestServer {
    let support = Agent::builder(ScriptedModel::per_run([
        Turn::text("Let me track it.").with_call("c1", "track", json!({"order": 7})),
        Turn::stream(["Order 7 ", "arrives ", "tomorrow."]),
        Turn::text("Order 8 left today."),
    ]))
    .name("support")
    .tool(track_behind(gate))
    .tool(text_tool("refund", "refunded"))
    .build()
    .unwrap();
    let bank = Agent::builder(ScriptedModel::per_run([
        Turn::call("c1", "pay", json!({"to": "Bob"})),
        Turn::text("Paid."),
    ]))
    .name("bank")
    .tool(asking_tool(paid))
    .build()
    .unwrap();
    let server = Server::new()
        .agent("support", support)
        .agent("bank", bank)
        .identify(BearerTokens::new().token("admin-token", Admin))
        .page(true);
    TestServer::start(server.into_router()).await
}

#[tokio::test]
async fn the_page_is_off_by_default_and_served_without_identity_when_on() {
    let plain = Server::new().identify(BearerTokens::<Admin>::new());
    let plain = TestServer::start(plain.into_router()).await;
    let with_page = Server::new()
        .identify(BearerTokens::<Admin>::new())
        .page(true);
    let with_page = TestServer::start(with_page.into_router()).await;

    let missing = reqwest::get(plain.url("/")).await.unwrap();
    let page = reqwest::get(with_page.url("/")).await.unwrap();

    assert_eq!(missing.status(), 404);
    assert_eq!(page.status(), 200);
    let headers = page.headers().clone();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("connect-src 'self'"), "{policy}");
    assert!(policy.contains("img-src data: https:;"), "{policy}");
    let html = page.text().await.unwrap();
    assert!(html.contains("<label for=\"token\">Bearer token</label>"));
    let posted = reqwest::Client::new().post(with_page.url("/")).send().await;
    let posted = posted.unwrap();
    assert_eq!(posted.status(), 405);
    let body: Value = posted.json().await.unwrap();
    assert_eq!(body["error"]["code"], "method_not_allowed");
}

#[tokio::test]
async fn the_page_lists_the_agents_once_given_a_valid_token() {
    let server = agents_server(&Arc::new(Semaphore::new(0)), &Counter::default()).await;
    let browser = Browser::open(&server.url("/")).await;

    browser.wait_status("unauthorized").await;
    assert!(browser.is_hidden("#chat").await);
    browser.type_into("#token", "admin-token").await;
    browser.click("#connect button").await;

    browser.wait_status("2 agent(s) available.").await;
    let options = browser
        .eval("return Array.from(document.querySelectorAll('#agent option'), o => o.value)")
        .await;
    assert_eq!(options, json!(["bank", "support"]));
    assert!(!browser.is_hidden("#chat").await);
    browser.close().await;
}

/// Refuses every caller before the run starts.
struct Closed;

impl Handler for Closed {
    async fn before_agent(
        &self,
        _: &mut RunContext,
        _: AgentConfig,
    ) -> Result<AgentConfig, BoxError> {
        Err("closed for maintenance".into())
    }
}

#[tokio::test]
async fn an_agent_listed_with_an_error_for_this_caller_is_shown_as_not_available() {
    let agent = |name: &str| {
        Agent::builder(ScriptedModel::per_run([Turn::text("Hello.")]))
            .name(name)
            .build()
            .unwrap()
    };
    let server = Server::new()
        .agent(
            "closed",
            ServedAgent::new(agent("closed")).layer(HandlerLayer::new(Closed)),
        )
        .agent("open", agent("open"))
        .identify(BearerTokens::new().token("admin-token", Admin))
        .page(true);
    let server = TestServer::start(server.into_router()).await;
    let browser = Browser::open(&server.url("/")).await;
    browser.type_into("#token", "admin-token").await;
    browser.click("#connect button").await;

    // `closed` comes first and is chosen: its listing has an error in place of tools.
    browser.wait_status("2 agent(s) available.").await;
    let shown = |text: &str| {
        text.starts_with("(Not available to you: ") && text.contains("closed for maintenance")
    };
    browser.wait_until("#description", "why", shown).await;
    assert!(
        !browser.text("#thread").await.is_empty(),
        "a conversation started"
    );
    browser.choose_agent("open").await;
    browser.say("Hi").await;
    let answered = |text: &str| text.contains("Hello.");
    browser
        .wait_until("#transcript", "the answer", answered)
        .await;
    browser.close().await;
}

#[tokio::test]
async fn a_message_shows_tool_chunks_while_the_tool_runs_then_the_final_text() {
    let gate = Arc::new(Semaphore::new(0));
    let server = agents_server(&gate, &Counter::default()).await;
    let browser = Browser::open(&server.url("/#token=admin-token")).await;
    browser.wait_status("2 agent(s) available.").await;

    browser.choose_agent("support").await;
    browser.say("Where is order 7?").await;

    let tool = "#transcript .tool[data-call='c1']";
    browser
        .wait_text(&format!("{tool} .output"), "packed, ")
        .await;
    assert_eq!(browser.text(&format!("{tool} .text")).await, "running…");
    assert_eq!(
        browser.text("#transcript .assistant .text").await,
        "Let me track it."
    );
    gate.add_permits(1);
    browser
        .wait_text(&format!("{tool} .output"), "packed, shipped, in transit")
        .await;
    browser
        .wait_text(
            &format!("{tool} .text"),
            "result: packed, shipped, in transit",
        )
        .await;
    browser
        .wait_text(
            "#transcript > li.assistant:last-child .text",
            "Order 7 arrives tomorrow.",
        )
        .await;
    browser.wait_status("Run completed.").await;
    assert_eq!(
        browser.text("#transcript .user .text").await,
        "Where is order 7?"
    );
    browser.close().await;
}

#[tokio::test]
async fn the_page_keeps_one_thread_across_turns() {
    let gate = Arc::new(Semaphore::new(1));
    let server = agents_server(&gate, &Counter::default()).await;
    let browser = Browser::open(&server.url("/#token=admin-token")).await;
    browser.wait_status("2 agent(s) available.").await;
    browser.choose_agent("support").await;

    browser.say("Where is order 7?").await;
    browser.wait_status("Run completed.").await;
    browser.say("And order 8?").await;

    // The model's third turn: the run saw the first one's history.
    browser
        .wait_text(
            "#transcript > li.assistant:last-child .text",
            "Order 8 left today.",
        )
        .await;
    browser.wait_status("Run completed.").await;

    let thread = browser.text("#thread").await;
    assert!(thread.starts_with("web-"), "{thread}");
    let shown = reqwest::Client::new()
        .get(server.url(&format!("/agents/support/threads/{thread}")))
        .bearer_auth("admin-token")
        .send()
        .await
        .unwrap();
    let shown: Value = shown.json().await.unwrap();
    let said: Vec<_> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(said, [json!("Where is order 7?"), json!("And order 8?")]);
    browser.close().await;
}

#[tokio::test]
async fn approving_a_pending_call_with_its_button_resumes_the_run() {
    let paid = Counter::default();
    let server = agents_server(&Arc::new(Semaphore::new(0)), &paid).await;
    let browser = Browser::open(&server.url("/#token=admin-token")).await;
    browser.wait_status("2 agent(s) available.").await;
    browser.choose_agent("bank").await;

    browser.say("Pay Bob").await;
    browser.wait_status("Waiting for your decision.").await;
    browser
        .wait_text("#transcript .approval .text", "Pay?")
        .await;
    assert_eq!(browser.text(".approval button.approve").await, "Approve");
    assert_eq!(browser.text(".approval button.reject").await, "Reject");
    let call = "#transcript .tool[data-call='c1'] .text";
    assert_eq!(browser.text(call).await, "waiting for approval");
    assert!(browser.is_disabled("#send-button").await);
    assert_eq!(paid.get(), 0);
    browser.click(".approval button.approve").await;

    browser
        .wait_text("#transcript > li.assistant:last-child .text", "Paid.")
        .await;
    browser.wait_text(call, "result: paid").await;
    assert_eq!(browser.text(".approval .outcome").await, "Approved.");
    assert!(browser.is_disabled(".approval button.approve").await);
    browser.wait_status("Run completed.").await;
    assert!(!browser.is_disabled("#send-button").await);
    assert_eq!(paid.get(), 1);
    browser.close().await;
}

#[tokio::test]
async fn rejecting_a_pending_call_with_its_button_tells_the_model_why() {
    let paid = Counter::default();
    let server = agents_server(&Arc::new(Semaphore::new(0)), &paid).await;
    let browser = Browser::open(&server.url("/#token=admin-token")).await;
    browser.wait_status("2 agent(s) available.").await;
    browser.choose_agent("bank").await;

    browser.say("Pay Bob").await;
    browser.wait_status("Waiting for your decision.").await;
    browser.type_into(".approval input", "not today").await;
    browser.click(".approval button.reject").await;

    browser
        .wait_text(
            "#transcript .tool[data-call='c1'] .text",
            "failed (denied): a person rejected the call: not today",
        )
        .await;
    assert_eq!(
        browser.text(".approval .outcome").await,
        "Rejected: not today"
    );
    browser.wait_status("Run completed.").await;
    assert_eq!(paid.get(), 0);
    browser.close().await;
}

/// A 1x1 PNG, base64.
const DOT: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn thinking(text: &str) -> Part {
    Part::Reasoning(Reasoning::new("anthropic", text).with_data("signature", "c2ln"))
}

/// `painter`, priced: reasons (whole) and calls `draw`, which returns an image, an image
/// at an http URL and a file whose name is markup; then reasons (streamed), returns an
/// image of its own and streams "Here it is.". Each call reports 1,000 tokens in and 200
/// out, 50 of them reasoning.
async fn painter_server() -> TestServer {
    let model = ScriptedModel::per_run([
        Turn::call("c1", "draw", json!({})).with_part(thinking("I should draw.")),
        Turn::stream(["Here ", "it is."])
            .with_part(thinking("Weigh it."))
            .with_part(Part::image(Source::base64("image/png", DOT))),
    ]);
    let used = Usage::new(1_000, 200, 1_200).with_reasoning(50);
    let model = ServiceBuilder::new()
        .map_response(move |reply: ModelResponse| reply.with_usage(Some("small".into()), used))
        .service(model);
    let draw = Tool::from_fn(ToolInfo::new("draw", "Draws"), |_| async {
        let name = "<b>report</b>.pdf";
        let output = ToolOutput::new("drawn")
            .with_part(Part::image(Source::base64("image/png", DOT)))
            .with_part(Part::image(Source::url("http://127.0.0.1:9/tracker.png")))
            .with_part(Part::file(
                Source::url(format!("https://example.com/{name}")),
                Some(name.into()),
            ));
        Ok::<_, BoxError>(output)
    });
    let painter = Agent::builder(model)
        .tool(draw)
        .prices(Prices::new().with("small", Price::per_million(2.0, 8.0)))
        .build()
        .unwrap();
    let server = Server::new()
        .agent("painter", painter)
        .identify(BearerTokens::new().token("admin-token", Admin))
        .page(true);
    TestServer::start(server.into_router()).await
}

#[tokio::test]
async fn the_page_shows_reasoning_collapsed_images_files_and_the_runs_usage() {
    let server = painter_server().await;
    let browser = Browser::open(&server.url("/#token=admin-token")).await;
    browser.wait_status("1 agent(s) available.").await;

    browser.say("Draw a dot").await;
    browser.wait_status("Run completed.").await;

    // Each turn's reasoning in a block of its own, apart from the answer, collapsed.
    let reasoning = "#transcript .assistant details.reasoning";
    assert_eq!(
        browser.text(&format!("{reasoning} .reasoning-text")).await,
        "I should draw.\nWeigh it."
    );
    let opened = "return Array.from(document.querySelectorAll('details.reasoning'), \
                  d => [d.open, d.querySelector('.reasoning-text').checkVisibility()])";
    assert_eq!(
        browser.eval(opened).await,
        json!([[false, false], [false, false]])
    );
    assert_eq!(
        browser.text("#transcript .assistant .text").await,
        "\nHere it is."
    );
    // Its toggle shows it.
    browser
        .click_nth(&format!("{reasoning} > summary"), 1)
        .await;
    assert_eq!(
        browser.eval(opened).await,
        json!([[false, false], [true, true]])
    );

    // The tool's image and the model's, loaded; the http one named, not loaded.
    let images = "return Array.from(document.querySelectorAll('#transcript img'), i => \
                  [i.closest('li').className, i.src.slice(0, 22), i.complete && i.naturalWidth, \
                  i.referrerPolicy])";
    browser
        .wait_for(images, |shown| {
            *shown
                == json!([
                    ["tool", "data:image/png;base64,", 1, "no-referrer"],
                    ["assistant", "data:image/png;base64,", 1, "no-referrer"],
                ])
        })
        .await;
    assert_eq!(
        browser.text("#transcript .tool .chip").await,
        "[an image: http://127.0.0.1:9/tracker.png] (not shown: only https and inline images \
         are)\n[a file: <b>report</b>.pdf, https://example.com/<b>report</b>.pdf]"
    );
    // The file's name is text, not markup.
    let bold = "return document.querySelectorAll('#transcript b').length";
    assert_eq!(browser.eval(bold).await, json!(0));

    // What the run used, last: two calls.
    browser
        .wait_text(
            "#transcript > li.usage:last-child .text",
            "2,400 tokens: 2,000 in, 400 out (100 reasoning); 2 model call(s); $0.0072",
        )
        .await;
    browser.close().await;
}

/// A headless Chromium on a page, through a chromedriver of its own.
struct Browser {
    client: Client,
    _driver: Chromedriver,
    _turn: MutexGuard<'static, ()>,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium, and opens `url`.
    async fn open(url: &str) -> Browser {
        let turn = ONE_BROWSER.lock().await;
        let driver = Chromedriver::start().await;
        let profile = driver.dir.join("profile");
        let capabilities = json!({
            "goog:chromeOptions": {
                "binary": program("CHROMIUM", "/usr/bin/chromium"),
                "args": [
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-dev-shm-usage",
                    "--window-size=1024,768",
                    format!("--user-data-dir={}", profile.display()),
                ],
            }
        });
        let capabilities = capabilities.as_object().cloned().unwrap();
        let mut builder = ClientBuilder::rustls().expect("a WebDriver client");
        let client = builder
            .capabilities(capabilities)
            .connect(&driver.url)
            .await;
        let client = client.unwrap_or_else(|e| {
            panic!(
                "Chromium did not start through chromedriver: {e}\n{}",
                driver.log()
            )
        });
        client.goto(url).await.unwrap();
        Browser {
            client,
            _driver: driver,
            _turn: turn,
        }
    }

    /// Ends the browser session (the driver is killed after it in any case).
    async fn close(self) {
        let Browser {
            client,
            _driver,
            _turn,
        } = self;
        client.close().await.unwrap();
    }

    /// Runs `script` in the page and returns its value.
    async fn eval(&self, script: &str) -> Value {
        self.client.execute(script, Vec::new()).await.unwrap()
    }

    /// The text of the elements that `css` selects, one per line.
    async fn text(&self, css: &str) -> String {
        let script = "return Array.from(document.querySelectorAll(arguments[0]), \
                      e => e.textContent).join('\\n')";
        let text = self.client.execute(script, vec![json!(css)]).await.unwrap();
        text.as_str().unwrap_or_default().to_owned()
    }

    /// Waits until the elements that `css` selects show `wanted`.
    async fn wait_text(&self, css: &str, wanted: &str) {
        self.wait_until(css, wanted, |text| text == wanted).await;
    }

    /// Waits until the page's status line says `wanted`, among other things.
    async fn wait_status(&self, wanted: &str) {
        self.wait_until("#status", wanted, |text| text.contains(wanted))
            .await;
    }

    /// Looks at the text of `css` until `seen` says yes; fails the test, with what the
    /// page shows, once [`HANG_GUARD`] is over.
    async fn wait_until(&self, css: &str, wanted: &str, seen: impl Fn(&str) -> bool) {
        let started = Instant::now();
        loop {
            let text = self.text(css).await;
            if seen(&text) {
                return;
            }
            if started.elapsed() > HANG_GUARD {
                let page = self.text("#status, #transcript > li").await;
                panic!(
                    "waited {HANG_GUARD:?} for `{css}` to show {wanted:?}, not {text:?}; \
                     the page shows:\n{page}"
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn is_hidden(&self, css: &str) -> bool {
        self.property(css, "hidden").await == json!(true)
    }

    async fn is_disabled(&self, css: &str) -> bool {
        self.property(css, "disabled").await == json!(true)
    }

    /// A DOM property of the first element that `css` selects.
    async fn property(&self, css: &str, name: &str) -> Value {
        let script = "return document.querySelector(arguments[0])[arguments[1]]";
        let args = vec![json!(css), json!(name)];
        self.client.execute(script, args).await.unwrap()
    }

    async fn type_into(&self, css: &str, text: &str) {
        let field = self.client.find(Locator::Css(css)).await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    /// Runs `script` until `seen` says yes of its value; fails the test, with the last
    /// value, once [`HANG_GUARD`] is over.
    async fn wait_for(&self, script: &str, seen: impl Fn(&Value) -> bool) {
        let started = Instant::now();
        loop {
            let value = self.eval(script).await;
            if seen(&value) {
                return;
            }
            assert!(
                started.elapsed() < HANG_GUARD,
                "waited {HANG_GUARD:?} for `{script}`; it returns {value}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A PNG of the first element that `css` selects.
    async fn screenshot(&self, css: &str) -> Vec<u8> {
        let found = self.client.find(Locator::Css(css)).await.unwrap();
        found.screenshot().await.unwrap()
    }

    /// Clicks the `n`th (from 0) element that `css` selects.
    async fn click_nth(&self, css: &str, n: usize) {
        let found = self.client.find_all(Locator::Css(css)).await.unwrap();
        found[n].click().await.unwrap();
    }

    async fn click(&self, css: &str) {
        let button = self.client.find(Locator::Css(css)).await.unwrap();
        button.click().await.unwrap();
    }

    async fn choose_agent(&self, name: &str) {
        let select = self.client.find(Locator::Css("#agent")).await.unwrap();
        select.select_by_value(name).await.unwrap();
    }

    /// Types a message and sends it.
    async fn say(&self, message: &str) {
        self.type_into("#message", message).await;
        self.click("#send-button").await;
    }
}

/// A chromedriver process in a process group of its own, which is killed with the
/// browsers it started (and its folder deleted) when dropped.
struct Chromedriver {
    child: Child,
    url: String,
    dir: PathBuf,
}

impl Chromedriver {
    /// Starts chromedriver on a free port and waits until it says it is ready.
    async fn start() -> Chromedriver {
        let exe = program("CHROMEDRIVER", "/usr/bin/chromedriver");
        assert!(
            Path::new(&exe).is_file(),
            "{exe} is missing: run scripts/setup-browser (it installs Debian's chromium-driver)"
        );
        let mut last_error = String::new();
        // A port found free may be taken before chromedriver binds it: try a few.
        for _ in 0..3 {
            let port = free_port();
            let dir = scratch();
            let child = Command::new(&exe)
                .arg(format!("--port={port}"))
                .arg(format!(
                    "--log-path={}",
                    dir.join("chromedriver.log").display()
                ))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {exe}: {e}"));
            let url = format!("http://127.0.0.1:{port}");
            let mut driver = Chromedriver { child, url, dir };
            match driver.wait_ready().await {
                Ok(()) => return driver,
                Err(error) => last_error = error,
            }
        }
        panic!("chromedriver did not start: {last_error}");
    }

    async fn wait_ready(&mut self) -> Result<(), String> {
        let started = Instant::now();
        let status = format!("{}/status", self.url);
        while started.elapsed() < HANG_GUARD {
            if let Ok(Some(exit)) = self.child.try_wait() {
                return Err(format!("it exited with {exit}:\n{}", self.log()));
            }
            if let Ok(response) = reqwest::get(&status).await {
                let body: Value = response.json().await.unwrap_or_default();
                if body["value"]["ready"] == json!(true) {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(format!("not ready within {HANG_GUARD:?}:\n{}", self.log()))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("chromedriver.log")).unwrap_or_default()
    }
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        // The whole group: chromedriver and the Chromium processes it started.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The program named by `$variable`, else `default`.
fn program(variable: &str, default: &str) -> String {
    std::env::var(variable).unwrap_or_else(|_| default.to_owned())
}

/// A folder of its own for one browser, under `target/tmp/browser`.
fn scratch() -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("browser")
        .join(format!("{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
