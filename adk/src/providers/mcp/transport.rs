//! How an MCP server is reached: a child process spoken to over its stdin and stdout, or
//! a URL that speaks streamable HTTP. Plain descriptions; the connection starts them.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

/// How the server is reached.
#[derive(Clone)]
pub(crate) enum Transport {
    Stdio(Stdio),
    Http(Http),
}

/// A server run as a child process of this one.
#[derive(Clone)]
pub(crate) struct Stdio {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) current_dir: Option<PathBuf>,
    pub(crate) quiet: bool,
}

/// A server reached over streamable HTTP.
#[derive(Clone)]
pub(crate) struct Http {
    pub(crate) url: String,
    pub(crate) bearer_token: Option<Arc<str>>,
}
