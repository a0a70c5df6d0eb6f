//! A local HTTP server that answers each request with the next of a queue of recorded
//! replies, byte for byte (a stream of `tests/anthropic/recorded/`, a JSON body, an error
//! status with its headers), and keeps every request's body as it came.
//!
//! It runs on a thread of its own over `std::net`, on a free port of 127.0.0.1, until the
//! [`Replay`] is dropped; a request with no reply left is answered 500. A `GET` (a proxy
//! listing the backend's models) is answered with an empty list, and takes no reply.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// One recorded reply.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    /// A recorded stream from `tests/anthropic/recorded/`, as a 200 `text/event-stream`.
    pub(crate) fn stream(file: &str) -> Reply {
        Reply::events(recorded(file))
    }

    /// A stream of events, as a 200 `text/event-stream`.
    pub(crate) fn events(body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into(),
        }
    }

    /// A JSON body with this status.
    pub(crate) fn json(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
        }
    }

    /// With one more header.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// The bytes of a file of `tests/anthropic/recorded/`.
pub(crate) fn recorded(file: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/anthropic/recorded")
        .join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What the server shares with its thread.
#[derive(Debug, Default)]
struct State {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Request>>,
    stopped: AtomicBool,
}

/// One request the server received.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Request {
    /// The body as JSON.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// The body as text, as it came.
    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }

    /// A header's value.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The server; it stops when dropped.
#[derive(Debug)]
pub(crate) struct Replay {
    port: u16,
    state: Arc<State>,
}

impl Replay {
    /// A server that answers with these replies, in order.
    pub(crate) fn start(replies: impl IntoIterator<Item = Reply>) -> Replay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State::default());
        state.replies.lock().unwrap().extend(replies);
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if shared.stopped.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    let shared = Arc::clone(&shared);
                    std::thread::spawn(move || serve(stream, &shared));
                }
            }
        });
        Replay { port, state }
    }

    /// Its base URL, as Anthropic's SDKs take it (without `/v1`).
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests received so far, oldest first.
    pub(crate) fn requests(&self) -> Vec<Request> {
        self.state.requests.lock().unwrap().clone()
    }

    /// The bodies of the requests received so far, as JSON.
    pub(crate) fn bodies(&self) -> Vec<Value> {
        self.requests().iter().map(Request::json).collect()
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.state.stopped.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Reads one request and writes the next reply.
fn serve(stream: TcpStream, state: &State) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut words = line.split(' ');
    let method = words.next().unwrap_or_default().to_owned();
    let path = words.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    let mut length = 0;
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    state.requests.lock().unwrap().push(Request {
        path,
        headers,
        body,
    });
    let reply = match method.as_str() {
        "GET" => Some(Reply::json(200, "{\"object\": \"list\", \"data\": []}")),
        _ => state.replies.lock().unwrap().pop_front(),
    };
    let reply = reply.unwrap_or_else(|| Reply::json(500, "{\"error\": \"no reply left\"}"));
    let mut head = format!("HTTP/1.1 {} X\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        reply.body.len()
    ));
    let mut stream = reader.into_inner();
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&reply.body);
    let _ = stream.flush();
}
