"""a2a-sdk's server peer of the A2A round trip in benches/serve.rs: the same scripted run
(server.py) served by a2a-sdk 1.3.0 on uvicorn, driven by the same `wrk` script
(benches/serve/stream.lua) with the same body (`SendStreamingMessage`, JSON-RPC) and the
same figures: runs per second, latency p50 and p99 (request sent to the stream's last
byte), and the CPU time (user and system) of the server's process per run.

3 rounds of 1 connection, then N connections, SECS seconds each. A 2xx body without the
task's COMPLETED status counts as an error, so do non-2xx answers and socket errors.

JSON lines on stdout, one per measurement; progress on stderr. `PEERS_QUICK=1`: N = 10,
1 s, one round; SERVE_CONNECTIONS, SERVE_SECS and SERVE_ROUNDS set N, SECS and the rounds.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = Path(os.environ.get("REPO_ROOT", HERE.parent.parent.parent))
PEERS_TARGET = Path(os.environ.get("PEERS_TARGET", REPO_ROOT / "target" / "peers" / "a2a-sdk"))
SCRIPT = REPO_ROOT / "benches" / "serve" / "stream.lua"
WRK = os.environ.get("WRK", "wrk")
QUICK = os.environ.get("PEERS_QUICK") == "1"
N = int(os.environ.get("SERVE_CONNECTIONS", 10 if QUICK else 1000))
SECS = int(os.environ.get("SERVE_SECS", 1 if QUICK else 10))
ROUNDS = int(os.environ.get("SERVE_ROUNDS", 1 if QUICK else 3))
PEER = "a2a-sdk"
VERSION = version("a2a-sdk")
# The body of every run, the same as benches/serve.rs posts to tower-adk's A2A face.
BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Where is order 7?"}]}},
    }
)
DONE = "TASK_STATE_COMPLETED"


def log(*args: object) -> None:
    print(f"[{PEER}]", *args, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_secs(pid: int) -> float:
    """The CPU time (user and system) of `pid`, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk(url: str, connections: int, secs: int) -> dict:
    threads = max(1, min(2, connections))
    env = dict(os.environ, SERVE_BODY=BODY, SERVE_DONE=DONE, SERVE_HEADER="A2A-Version: 1.0")
    done = subprocess.run(
        [WRK, f"--threads={threads}", f"--connections={connections}", f"--duration={secs}s", "--timeout=30s", f"--script={SCRIPT}", url],
        env=env, capture_output=True, text=True, check=True,
    )
    for line in reversed(done.stdout.splitlines()):
        try:
            report = json.loads(line)
        except json.JSONDecodeError:
            continue
        report["errors"] = sum(report[k] for k in ("connect", "read", "write", "status", "timeout", "incomplete"))
        report["runs_per_s"] = report["requests"] / (report["duration_us"] / 1e6)
        return report
    raise RuntimeError(f"no JSON line in wrk's output: {done.stdout}")


def wait_idle(pid: int) -> None:
    """Until the server uses under 10% of a core (at most 120 s)."""
    until = time.monotonic() + 120
    while time.monotonic() < until:
        cpu = cpu_secs(pid)
        time.sleep(0.5)
        if cpu_secs(pid) - cpu < 0.05:
            return
    log("warning: the server was still busy 120 s after a measurement")


def wait_card(url: str, server: subprocess.Popen) -> None:
    until = time.monotonic() + 60
    while time.monotonic() < until:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}: see {PEERS_TARGET / 'server.log'}")
        try:
            with urllib.request.urlopen(f"{url}.well-known/agent-card.json", timeout=5) as response:
                json.loads(response.read())
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not answer within 60 s")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    PEERS_TARGET.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with (PEERS_TARGET / "server.log").open("w") as server_log:
        server = subprocess.Popen([sys.executable, str(HERE / "server.py"), str(port)], stdout=server_log, stderr=subprocess.STDOUT)
        try:
            wait_card(url, server)
            wrk(url, 1, 1)  # warm-up
            failed = 0
            for round_ in range(1, ROUNDS + 1):
                log(f"round {round_} of {ROUNDS}, load average {load()}")
                for connections in (1, N):
                    wait_idle(server.pid)
                    cpu = cpu_secs(server.pid)
                    r = wrk(url, connections, SECS)
                    r["cpu_us_per_run"] = (cpu_secs(server.pid) - cpu) * 1e6 / max(r["requests"], 1)
                    failed |= r["errors"] > 0
                    log(f"  c={connections:<5} {r['runs_per_s']:9.0f} runs/s  p50 {r['p50_us'] / 1e3:9.3f} ms  p99 {r['p99_us'] / 1e3:9.3f} ms  {r['cpu_us_per_run']:7.0f} µs CPU/run  {r['requests']} runs, {r['errors']} errors")
                    print(json.dumps({"peer": PEER, "version": VERSION, "workload": "a2a", "connections": connections, "round": round_, "secs": SECS, "runs": r["requests"], "runs_per_s": round(r["runs_per_s"], 1), "p50_us": r["p50_us"], "p99_us": r["p99_us"], "cpu_us_per_run": round(r["cpu_us_per_run"], 1), "errors": r["errors"], "load": load()}), flush=True)
            return int(failed)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
