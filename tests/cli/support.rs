//! Running the built `adk`, and a terminal to run it in.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long anything may take before a test calls it hung (a slow, shared machine).
pub(crate) const PATIENCE: Duration = Duration::from_secs(120);

/// The built `adk`.
pub(crate) fn adk() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_adk"));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// A file of the repository, by its path from the root.
pub(crate) fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// `adk ARGS`, run to its end, with its output.
pub(crate) fn adk_output(args: &[&str]) -> Output {
    adk().args(args).output().expect("adk runs")
}

/// A tmux server of its own (its socket under target/) with one pane of 100 x 40
/// running a command; killed when dropped.
pub(crate) struct Terminal {
    socket: PathBuf,
}

impl Terminal {
    /// Starts `program ARGS` in a new terminal, under a shell that shows `[exit STATUS]`
    /// when the program exits (and survives the Ctrl-C sent to the program).
    pub(crate) fn start(program: &str, args: &[&str]) -> Terminal {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let socket = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "tmux-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let terminal = Terminal { socket };
        // A trap (not an ignored signal) so the program starts with Ctrl-C's default.
        let shell = r#"trap : INT; "$0" "$@"; echo "[exit $?]"; exec sleep 3600"#;
        let mut command = vec![
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "100",
            "-y",
            "40",
        ];
        command.extend(["--", "sh", "-c", shell, program]);
        command.extend(args);
        terminal.tmux(&command);
        terminal
    }

    fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("tmux runs (scripts/setup-terminal installs it)");
        assert!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Types `text` and presses Enter.
    pub(crate) fn type_line(&self, text: &str) {
        self.tmux(&["send-keys", "-l", text]);
        self.tmux(&["send-keys", "Enter"]);
    }

    /// Presses a key, in tmux's names (`C-c`, `C-d`).
    pub(crate) fn press(&self, key: &str) {
        self.tmux(&["send-keys", key]);
    }

    /// The whole screen, with the lines that scrolled off it, without colours.
    pub(crate) fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-J", "-S", "-"])
    }

    /// Waits until the screen holds `text` `times` times, and returns the screen; fails
    /// after [`PATIENCE`], showing the screen.
    pub(crate) fn wait_for_count(&self, text: &str, times: usize) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.matches(text).count() >= times {
                return screen;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "waited for {text:?} (x{times}); the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the screen holds `text`.
    pub(crate) fn wait_for(&self, text: &str) -> String {
        self.wait_for_count(text, 1)
    }

    /// Waits for the program to exit, and returns its exit status.
    pub(crate) fn wait_exit(&self) -> i32 {
        let screen = self.wait_for("[exit ");
        let (_, after) = screen.rsplit_once("[exit ").expect("waited for it");
        let status = after.split(']').next().unwrap_or_default();
        status.parse().expect("an exit status")
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
        let _ = std::fs::remove_file(&self.socket);
    }
}
