//! [`A2a`]: how a server speaks A2A; [`Face`]: that and the tasks, shared by the A2A
//! routes (held by the server's state, so it imports nothing of the routes).

use super::tasks::Tasks;

/// How the server speaks A2A: which agent is the root one, the base URL and version its
/// cards give, how many tasks it keeps. See the [module docs](super).
///
/// ```
/// use tower_adk::server::a2a::A2a;
///
/// let a2a = A2a::new().root("support").version("2.1.0").tasks(1_000);
/// # let _ = a2a;
/// ```
#[derive(Debug, Clone)]
pub struct A2a {
    pub(super) root: Option<String>,
    pub(super) base_url: Option<String>,
    pub(super) version: String,
    tasks: usize,
}

impl A2a {
    /// Every agent at `/agents/{name}/a2a`, its card beside it; no root agent; the base
    /// URL from each request; version `1.0.0`; 10,000 tasks kept.
    pub fn new() -> Self {
        A2a {
            root: None,
            base_url: None,
            version: "1.0.0".into(),
            tasks: 10_000,
        }
    }

    /// Serves the agent `name` at the root too: its card at
    /// `/.well-known/agent-card.json`, its endpoint at `/a2a` (an unknown name serves
    /// 404 there).
    pub fn root(mut self, name: impl Into<String>) -> Self {
        self.root = Some(name.into());
        self
    }

    /// The public URL the server is reached at (`https://agents.example.com`, or with a
    /// path prefix where the router is nested), which the cards' endpoint URLs start
    /// with. Without it, each card is built from the request's `Host`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The version the cards give (default `1.0.0`).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// How many tasks are kept (default 10,000): past it, the oldest that has ended is
    /// forgotten (`GetTask` on it is `TaskNotFound`).
    pub fn tasks(mut self, most: usize) -> Self {
        self.tasks = most;
        self
    }
}

impl Default for A2a {
    fn default() -> Self {
        A2a::new()
    }
}

/// What the A2A routes share: the configuration and the tasks.
#[derive(Debug)]
pub(crate) struct Face {
    pub(super) config: A2a,
    pub(super) tasks: Tasks,
}

impl Face {
    pub(crate) fn new(config: A2a) -> Self {
        let tasks = Tasks::new(config.tasks);
        Face { config, tasks }
    }
}
