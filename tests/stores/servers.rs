//! Real database servers for the store tests and the checkpoint benchmark: a Redis and a
//! PostgreSQL started by the test itself, each on a free port of 127.0.0.1 with its data
//! under `target/tmp/stores/`, stopped and deleted when its guard is dropped. The outage
//! tests also freeze, kill, stop and start them again, on the same port and data.
//!
//! A server that cannot start panics, naming what failed and showing its log: run
//! `scripts/setup-stores` first. The binaries are found on `PATH` (`redis-server`) and in
//! `/usr/lib/postgresql/*/bin` (the newest; `$POSTGRES_BIN` overrides it). As root,
//! PostgreSQL runs as the `postgres` user (`runuser -u postgres --`), on a data folder it
//! owns, since it refuses to run as root; when that user may not enter `target/` (a
//! checkout under `/root`), its data goes under the system's temporary folder instead.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long a server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A folder of its own for one server (or one SQLite file), under `target/tmp/stores`.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("stores")
        .join(format!("{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("no free port on 127.0.0.1");
    listener.local_addr().expect("a bound port").port()
}

/// The command's output, or what went wrong with its output and error text.
fn run(command: &mut Command) -> Result<Output, String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(format!(
            "{command:?} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// `program` in a folder of `PATH`.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|exe| exe.is_file())
}

/// A `redis-server` process, killed (and its folder deleted) when dropped.
#[derive(Debug)]
pub(crate) struct Redis {
    child: Child,
    port: u16,
    dir: PathBuf,
    /// Whether it writes every command to its append-only file before it answers.
    persistent: bool,
}

impl Redis {
    /// Starts `redis-server` without persistence and waits until it answers `PING`.
    pub(crate) fn start() -> Redis {
        Redis::start_with(false)
    }

    /// Starts `redis-server` with an append-only file that it syncs before it answers
    /// each write (`appendfsync always`), so that a server killed and started again has
    /// every write it acknowledged.
    pub(crate) fn start_persistent() -> Redis {
        Redis::start_with(true)
    }

    fn start_with(persistent: bool) -> Redis {
        let mut last_error = String::new();
        // A port found free may be taken before the server binds it: try a few.
        for _ in 0..3 {
            let (port, dir) = (free_port(), scratch("redis"));
            let child = Redis::spawn(port, &dir, persistent);
            let mut redis = Redis {
                child,
                port,
                dir,
                persistent,
            };
            match redis.wait_ready() {
                Ok(()) => return redis,
                Err(error) => last_error = error,
            }
        }
        panic!("redis-server did not start: {last_error}");
    }

    fn spawn(port: u16, dir: &Path, persistent: bool) -> Child {
        let exe = on_path("redis-server")
            .expect("redis-server is not on PATH: run scripts/setup-stores (it installs Debian's)");
        let persistence: &[&str] = if persistent {
            &["--appendonly", "yes", "--appendfsync", "always"]
        } else {
            &["--appendonly", "no"]
        };
        Command::new(&exe)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--daemonize", "no"])
            .args(persistence)
            .arg("--dir")
            .arg(dir)
            .arg("--logfile")
            .arg(dir.join("redis.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()))
    }

    /// Sends the server `SIGSTOP`: it holds its connections open and answers nothing,
    /// until [`thaw`](Self::thaw).
    pub(crate) fn freeze(&self) {
        self.signal("-STOP");
    }

    /// Sends the server `SIGCONT`: it goes on, with what it received meanwhile.
    pub(crate) fn thaw(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        run(Command::new("kill").args([signal, &pid])).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Kills the server (`SIGKILL`) and waits until it is gone.
    pub(crate) fn kill(&mut self) {
        self.child.kill().expect("redis-server is running");
        let _ = self.child.wait();
    }

    /// Starts the server again, on the same port and folder (and append-only file), and
    /// waits until it answers `PING`.
    pub(crate) fn restart(&mut self) {
        self.child = Redis::spawn(self.port, &self.dir, self.persistent);
        if let Err(error) = self.wait_ready() {
            panic!("redis-server did not start again: {error}");
        }
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("it exited with {status}:\n{}", self.log()));
            }
            if self.ping().is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!("no PONG within {START_TIMEOUT:?}:\n{}", self.log()))
    }

    fn ping(&self) -> std::io::Result<()> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(1)))?;
        stream.write_all(b"PING\r\n")?;
        let mut reply = [0; 7];
        stream.read_exact(&mut reply)?;
        if &reply == b"+PONG\r\n" {
            Ok(())
        } else {
            Err(std::io::Error::other("not PONG"))
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default()
    }

    /// `redis://127.0.0.1:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A PostgreSQL cluster of its own (`initdb`, `pg_ctl start`), stopped (`pg_ctl stop -m
/// immediate`) and deleted when dropped.
#[derive(Debug)]
pub(crate) struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    as_root: bool,
}

impl Postgres {
    /// Creates a cluster (user `postgres`, trust authentication, TCP on 127.0.0.1 only)
    /// and starts it.
    pub(crate) fn start() -> Postgres {
        let bin = postgres_bin();
        let as_root = run(Command::new("id").arg("-u"))
            .map(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
            .unwrap_or(false);
        let mut last_error = String::new();
        for _ in 0..3 {
            let dir = scratch("postgres");
            let dir = if as_root && !postgres_can_enter(&dir) {
                // A checkout under a folder only root may enter (such as /root).
                let _ = std::fs::remove_dir_all(&dir);
                let name = dir.file_name().expect("a scratch folder has a name");
                std::env::temp_dir().join("tower-adk-stores").join(name)
            } else {
                dir
            };
            let postgres = Postgres {
                bin: bin.clone(),
                data: dir.join("data"),
                port: free_port(),
                as_root,
            };
            match postgres.init().and_then(|()| postgres.run_server()) {
                Ok(()) => return postgres,
                Err(error) => last_error = error,
            }
        }
        panic!("PostgreSQL did not start: {last_error}\n(run scripts/setup-stores)");
    }

    /// `bin/program`, run as the `postgres` user when we are root.
    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        if self.as_root {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(exe);
            command
        } else {
            Command::new(exe)
        }
    }

    fn init(&self) -> Result<(), String> {
        std::fs::create_dir_all(&self.data).map_err(|e| e.to_string())?;
        if self.as_root {
            run(Command::new("chown")
                .arg("postgres:postgres")
                .arg(&self.data))?;
        }
        run(self
            .command("initdb")
            .arg("-D")
            .arg(&self.data)
            .args(["-U", "postgres", "--auth=trust", "--encoding=UTF8"])
            .args(["--no-locale", "--no-sync"]))?;
        Ok(())
    }

    fn run_server(&self) -> Result<(), String> {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={}",
            self.port,
            self.data.display()
        );
        let timeout = START_TIMEOUT.as_secs().to_string();
        let started = run(self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .arg("-l")
            .arg(self.data.join("server.log"))
            .args(["-w", "-t", &timeout, "-o", &options, "start"]));
        started.map_err(|error| format!("{error}\n{}", self.log()))?;
        // pg_ctl waited until the server accepted connections; check it is ours.
        TcpStream::connect(("127.0.0.1", self.port))
            .map(drop)
            .map_err(|e| {
                format!(
                    "started, but port {} refuses: {e}\n{}",
                    self.port,
                    self.log()
                )
            })
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.data.join("server.log")).unwrap_or_default()
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub(crate) fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`: no checkpoint, its
    /// connections cut) and waits until it is down.
    pub(crate) fn stop_immediately(&self) {
        let stopped = run(self.command("pg_ctl").arg("-D").arg(&self.data).args([
            "-m",
            "immediate",
            "-w",
            "stop",
        ]));
        stopped.unwrap_or_else(|e| panic!("{e}\n{}", self.log()));
    }

    /// Starts the server again on its data and port (it recovers from its log), and waits
    /// until it accepts connections.
    pub(crate) fn start_again(&self) {
        self.run_server()
            .unwrap_or_else(|e| panic!("PostgreSQL did not start again: {e}"));
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = run(self.command("pg_ctl").arg("-D").arg(&self.data).args([
            "-m",
            "immediate",
            "-w",
            "stop",
        ]));
        if let Some(dir) = self.data.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Whether the `postgres` user may enter `dir` (and so every folder above it).
fn postgres_can_enter(dir: &Path) -> bool {
    let mut command = Command::new("runuser");
    command
        .args(["-u", "postgres", "--", "test", "-x"])
        .arg(dir);
    run(&mut command).is_ok()
}

/// The folder of `initdb` and `pg_ctl`: `$POSTGRES_BIN`, else the newest
/// `/usr/lib/postgresql/*/bin`, else the folder of `initdb` on `PATH`.
fn postgres_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("POSTGRES_BIN") {
        return PathBuf::from(bin);
    }
    let newest = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .max_by_key(|(version, _)| *version)
        .map(|(_, bin)| bin);
    newest
        .or_else(|| on_path("initdb").and_then(|exe| Some(exe.parent()?.to_path_buf())))
        .expect(
            "PostgreSQL's initdb is neither in /usr/lib/postgresql/*/bin nor on PATH: \
             run scripts/setup-stores (or set POSTGRES_BIN)",
        )
}
