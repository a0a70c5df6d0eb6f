//! Request bodies checked by Google's own Python SDK, `google-genai` (installed by
//! `scripts/setup-gemini-sdk` into `target/test-servers/gemini`): its published types
//! parse each piece, and its request serialiser must build the same body (see
//! `validate_request.py`). A missing SDK fails the test.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

fn python() -> PathBuf {
    let venv = std::env::var_os("GEMINI_SDK_VENV").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-servers/gemini"),
        PathBuf::from,
    );
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "google-genai is not installed at {}: run scripts/setup-gemini-sdk",
        venv.display()
    );
    python
}

/// Panics unless the SDK accepts every body, naming the first it refuses and why.
pub(crate) fn validate(bodies: &[Value]) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/gemini/validate_request.py");
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for body in bodies {
            writeln!(stdin, "{body}").unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    let verdicts = String::from_utf8(output.stdout).unwrap();
    let verdicts: Vec<&str> = verdicts.lines().collect();
    assert_eq!(
        verdicts.len(),
        bodies.len(),
        "one verdict per body: {verdicts:?}"
    );
    for (body, verdict) in bodies.iter().zip(&verdicts) {
        assert_eq!(*verdict, "ok", "google-genai refuses {body}");
    }
    assert!(output.status.success());
}

/// Panics unless the SDK refuses the body (the check can fail).
pub(crate) fn refuses(body: &Value) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/gemini/validate_request.py");
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{body}").unwrap();
    let output = child.wait_with_output().unwrap();
    let verdict = String::from_utf8(output.stdout).unwrap();
    assert!(
        verdict.starts_with("error: "),
        "google-genai accepted {body}"
    );
    verdict
}
