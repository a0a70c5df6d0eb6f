"""LangGraph's local server peer of benches/serve.rs: the same agent (graph.py), the same
`wrk` workload (benches/serve/stream.lua), the same figures.

First runs the `stream` graph in-process (`in-process`: `graph.astream` with the same
stream modes, 1 and N tasks at a time, the baseline of the added latency); then serves the
graphs on a free port of 127.0.0.1 in two ways, one after the other (or those named:
`bench.py dev`, `bench.py direct`, `bench.py in-process`): `dev` is `langgraph dev` (langgraph-api with the
in-memory runtime, as `langgraph-cli[inmem]` installs it; N background workers instead of
its default 10); `direct` is direct.py (a Starlette app on uvicorn streaming
`graph.astream` with sse-starlette: LangGraph without langgraph-api's run queue). Then, on
each:

- 3 rounds of: 1 connection, then N connections, SECS seconds each, on `POST /runs/stream`
  (a stateless run) with `stream_mode: ["messages-tuple", "updates"]` (the model's tokens
  and each node's messages: what tower-adk's stream carries). A 2xx body without the final
  answer's message counts as an error, so do non-2xx answers and socket errors. Also the
  CPU time (user and system) of the server's processes per run (of this process, for
  `in-process`), which moves less than the wall-clock figures on a shared machine.
- memory per open stream, on a fresh server: `wrk` opens N streamed runs of the `hold`
  graph (its tool waits 60 s; `GET /bench/open` counts the runs in it) and holds them
  until all N are in the tool (then 1 s more) or 45 s passed; the figure is (the largest
  resident set of the server's processes seen with the most runs open - before) / that
  many runs; then wrk closes them, and every run must be cancelled (the runs ask for
  `on_disconnect: cancel`).

JSON lines on stdout, one per measurement; progress on stderr. `PEERS_QUICK=1`: N = 10,
1 s, one round; SERVE_CONNECTIONS, SERVE_SECS and SERVE_ROUNDS set N, SECS and the rounds.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = Path(os.environ.get("REPO_ROOT", HERE.parent.parent.parent))
PEERS_TARGET = Path(os.environ.get("PEERS_TARGET", REPO_ROOT / "target" / "peers" / "langgraph-serve"))
SCRIPT = REPO_ROOT / "benches" / "serve" / "stream.lua"
WRK = os.environ.get("WRK", "wrk")
QUICK = os.environ.get("PEERS_QUICK") == "1"
N = int(os.environ.get("SERVE_CONNECTIONS", 10 if QUICK else 1000))
SECS = int(os.environ.get("SERVE_SECS", 1 if QUICK else 10))
ROUNDS = int(os.environ.get("SERVE_ROUNDS", 1 if QUICK else 3))
# How long to wait for all N `hold` runs to be in their tool (which waits 60 s).
HOLD_WRK_S = int(os.environ.get("SERVE_HOLD_SECS", 45))
PEER = "langgraph-serve"
SERVER = "dev"
VERSION = version("langgraph-api")
INPUT = "Where is order 7?"
DONE = '"content":"Order 7 arrives tomorrow."'


def log(*args: object) -> None:
    print(f"[{PEER} {SERVER}]", *args, file=sys.stderr, flush=True)


def body(graph: str, **extra: object) -> str:
    return json.dumps(
        {
            "assistant_id": graph,
            "input": {"messages": [{"role": "user", "content": INPUT}]},
            "stream_mode": ["messages-tuple", "updates"],
            **extra,
        }
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree(pid: int) -> list[int]:
    """`pid` and every process below it."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += children.get(p, [])
    return found


def rss_kib(pid: int) -> int:
    """The resident set of `pid` and every process below it, in KiB."""
    total = 0
    for p in tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def cpu_secs(pid: int) -> float:
    """The CPU time (user and system) of `pid` and every process below it, in seconds."""
    ticks = 0
    for p in tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def wrk(url: str, connections: int, secs: int, payload: str) -> dict:
    threads = max(1, min(2, connections))
    env = dict(os.environ, SERVE_BODY=payload, SERVE_DONE=DONE)
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
    """Until the server's processes use under 10% of a core (at most 120 s): runs that a
    measurement's clients left behind must not run into the next one."""
    until = time.monotonic() + 120
    while time.monotonic() < until:
        cpu = cpu_secs(pid)
        time.sleep(0.5)
        if cpu_secs(pid) - cpu < 0.05:
            return
    log("warning: the server was still busy 120 s after a measurement")


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# The servers measured: `langgraph dev`, and the same graphs on a plain Starlette app.
SERVERS = {
    "in-process": "graph.astream in this process, no HTTP",
    "dev": "langgraph dev (langgraph-api, in-memory runtime)",
    "direct": "uvicorn + sse-starlette, graph.astream in the request",
}


def percentile(sorted_us: list[int], p: float) -> int:
    return sorted_us[round(p / 100 * (len(sorted_us) - 1))] if sorted_us else 0


async def callers(concurrency: int, secs: int) -> dict:
    """`concurrency` tasks streaming the `stream` graph in-process for `secs`, each run
    read to its end (the same stream modes as over HTTP)."""
    sys.path.insert(0, str(HERE))
    import graph  # noqa: PLC0415 (only this mode needs the graphs in this process)

    payload = json.loads(body("stream"))
    until = time.monotonic() + secs
    latencies: list[int] = []
    errors = 0

    async def caller() -> None:
        nonlocal errors
        while time.monotonic() < until:
            begun = time.monotonic()
            last = None
            async for _mode, chunk in graph.stream.astream(payload["input"], stream_mode=["messages", "updates"]):
                last = chunk
            if not (isinstance(last, dict) and last.get("agent", {}).get("messages", [None])[-1].content == "Order 7 arrives tomorrow."):
                errors += 1
            latencies.append(round((time.monotonic() - begun) * 1e6))

    start = time.monotonic()
    await asyncio.gather(*(caller() for _ in range(concurrency)))
    elapsed = time.monotonic() - start
    latencies.sort()
    return {"requests": len(latencies), "runs_per_s": len(latencies) / elapsed, "p50_us": percentile(latencies, 50), "p99_us": percentile(latencies, 99), "errors": errors}


def in_process() -> int:
    asyncio.run(callers(1, 1))  # warm-up
    failed = 0
    for round_ in range(1, ROUNDS + 1):
        log(f"round {round_} of {ROUNDS}, load average {load()}")
        for connections in (1, N):
            cpu = cpu_secs(os.getpid())
            r = asyncio.run(callers(connections, SECS))
            r["cpu_us_per_run"] = (cpu_secs(os.getpid()) - cpu) * 1e6 / max(r["requests"], 1)
            failed |= r["errors"] > 0
            log(f"  c={connections:<5} {r['runs_per_s']:9.0f} runs/s  p50 {r['p50_us'] / 1e3:9.3f} ms  p99 {r['p99_us'] / 1e3:9.3f} ms  {r['cpu_us_per_run']:7.0f} µs CPU/run  {r['requests']} runs, {r['errors']} errors")
            print(json.dumps({"peer": PEER, "version": VERSION, "server": SERVER, "workload": "serve", "connections": connections, "round": round_, "secs": SECS, "runs": r["requests"], "runs_per_s": round(r["runs_per_s"], 1), "p50_us": r["p50_us"], "p99_us": r["p99_us"], "cpu_us_per_run": round(r["cpu_us_per_run"], 1), "errors": r["errors"], "load": load()}), flush=True)
    return int(failed)


def start(kind: str, port: int, server_log: Any) -> subprocess.Popen:
    env = dict(os.environ, LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false", LOG_LEVEL="WARNING")
    for var in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGCHAIN_TRACING_V2"):
        env.pop(var, None)
    bin_dir = Path(sys.executable).parent
    # The working directory is under target/: `langgraph dev` keeps its in-memory state in
    # `.langgraph_api` there. Its config is langgraph.json with the paths made absolute
    # (the custom app's path is taken from the working directory).
    cwd = PEERS_TARGET / kind
    cwd.mkdir(parents=True, exist_ok=True)
    config = json.loads((HERE / "langgraph.json").read_text())
    config["dependencies"] = [str(HERE)]
    config["graphs"] = {name: str(HERE / spec) for name, spec in config["graphs"].items()}
    config["http"]["app"] = str(HERE / config["http"]["app"])
    (cwd / "langgraph.json").write_text(json.dumps(config, indent=2))
    if kind == "dev":
        cmd = [
            str(bin_dir / "langgraph"), "dev", "--no-browser", "--no-reload",
            "--host", "127.0.0.1", "--port", str(port), "--n-jobs-per-worker", str(N),
            "--config", str(cwd / "langgraph.json"), "--server-log-level", "warning",
        ]
    else:
        cmd = [
            str(bin_dir / "uvicorn"), "direct:app", "--app-dir", str(HERE), "--host", "127.0.0.1",
            "--port", str(port), "--log-level", "warning", "--no-access-log", "--backlog", "4096",
        ]
    return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=server_log, stderr=subprocess.STDOUT, start_new_session=True)


def main() -> int:
    kinds = sys.argv[1:] or list(SERVERS)
    unknown = [k for k in kinds if k not in SERVERS]
    if unknown:
        raise SystemExit(f"unknown server {unknown}: pick from {list(SERVERS)}")
    PEERS_TARGET.mkdir(parents=True, exist_ok=True)
    failed = 0
    for kind in kinds:
        global SERVER
        SERVER = kind
        if kind == "in-process":
            failed |= in_process()
            continue
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server_log = (PEERS_TARGET / f"server-{kind}.log").open("w")
        log(f"starting {SERVERS[kind]} on {base} (log: {server_log.name})")
        server = start(kind, port, server_log)
        try:
            failed |= measure(base, server)
        finally:
            stop(server)
        # The memory on a server of its own: what the rounds left (a grown heap, a queue
        # still draining) would blur it.
        log(f"starting {SERVERS[kind]} again for the memory probe")
        server = start(kind, port, server_log)
        try:
            wait_ok(base, server)
            failed |= measure_memory(base, server.pid)
        finally:
            stop(server)
    return failed


def stop(server: subprocess.Popen) -> None:
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def measure_memory(base: str, pid: int) -> int:
    """Memory per open stream: N held runs (the `hold` graph's tool waits 60 s), on a
    server that has served nothing else but a warm-up."""
    hold_url = f"{base}/runs/stream"
    hold = body("hold", on_disconnect="cancel")

    def open_now() -> int:
        try:
            return get_json(f"{base}/bench/open")["open"]
        except OSError:
            return 0

    def wait_closed() -> bool:
        until = time.monotonic() + 120
        while open_now() > 0:
            if time.monotonic() > until:
                return False
            time.sleep(0.1)
        return True

    def hold_streams(connections: int, at_most_s: float) -> dict:
        """wrk holds `connections` streams until all are in the tool (and 1 s more) or
        `at_most_s` passed; the largest resident set seen with the most runs open."""
        env = dict(os.environ, SERVE_BODY=hold, SERVE_DONE=DONE)
        threads = max(1, min(2, connections))
        client = subprocess.Popen(
            [WRK, f"--threads={threads}", f"--connections={connections}", "--duration=120s", "--timeout=120s", f"--script={SCRIPT}", hold_url],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        best = {"open": 0, "kib": 0}
        begun = time.monotonic()
        all_open_at = None
        try:
            while time.monotonic() - begun < at_most_s:
                now, kib = open_now(), rss_kib(pid)
                if now > best["open"] or (now == best["open"] and kib > best["kib"]):
                    best.update(open=now, kib=kib)
                if now >= connections and all_open_at is None:
                    all_open_at = time.monotonic()
                if all_open_at is not None and time.monotonic() - all_open_at > 1.0:
                    break
                time.sleep(0.05)
        finally:
            client.terminate()
            client.wait()
        best["secs_to_open"] = round(all_open_at - begun, 1) if all_open_at else None
        return best

    hold_streams(min(10, N), 10)  # warm-up
    if not wait_closed():
        raise RuntimeError("warm-up runs still in their tool 120 s after their clients went away")
    time.sleep(0.5)
    idle = rss_kib(pid)
    best = hold_streams(N, HOLD_WRK_S)
    per_stream = (best["kib"] - idle) * 1024 / max(best["open"], 1)
    cancelled = wait_closed()
    after = "" if best["secs_to_open"] is None else f" after {best['secs_to_open']} s"
    ended = "every held run cancelled when its client went away" if cancelled else "held runs still in their tool 120 s after their clients went away"
    log(f"memory per open stream {per_stream / 1024:.1f} KiB ({best['open']} of {N} open{after}: {best['kib'] / 1024:.1f} MiB, {idle / 1024:.1f} MiB before); {ended}")
    print(json.dumps({"peer": PEER, "version": VERSION, "server": SERVER, "workload": "serve-memory", "streams": N, "open": best["open"], "secs_to_open": best["secs_to_open"], "idle_kib": idle, "open_kib": best["kib"], "bytes_per_stream": round(per_stream), "cancelled": cancelled}), flush=True)
    return 0 if cancelled and best["open"] == N else 1


def wait_ok(base: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"{SERVERS[SERVER]} exited ({server.returncode}); see its log in {PEERS_TARGET}")
        try:
            if get_json(f"{base}/ok").get("ok"):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{SERVERS[SERVER]} did not answer /ok within 120 s")
        time.sleep(0.5)


def measure(base: str, server: subprocess.Popen) -> int:
    """One checked run, then the rounds of throughput and latency."""
    pid = server.pid
    wait_ok(base, server)
    log(f"load average {load()}")

    # One run, checked.
    request = urllib.request.Request(f"{base}/runs/stream", data=body("stream").encode(), headers={"content-type": "application/json", "accept": "text/event-stream"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    events = sum(1 for line in text.splitlines() if line.startswith("event: "))
    assert DONE in text, text
    log(f"one streamed run is {events} SSE events, {len(text.encode())} bytes")

    # Throughput and latency.
    url = f"{base}/runs/stream"
    # As tower-adk's server does, a run whose client went away is cancelled.
    payload = body("stream", on_disconnect="cancel")
    wrk(url, min(10, N), 1, payload)  # warm-up
    rows: dict[int, list[dict]] = {1: [], N: []}
    for round_ in range(1, ROUNDS + 1):
        log(f"round {round_} of {ROUNDS}, load average {load()}")
        for connections in (1, N):
            wait_idle(pid)
            cpu = cpu_secs(pid)
            r = wrk(url, connections, SECS, payload)
            r["cpu_us_per_run"] = (cpu_secs(pid) - cpu) * 1e6 / max(r["requests"], 1)
            rows[connections].append(r)
            log(f"  c={connections:<5} {r['runs_per_s']:9.0f} runs/s  p50 {r['p50_us'] / 1e3:9.3f} ms  p99 {r['p99_us'] / 1e3:9.3f} ms  {r['cpu_us_per_run']:7.0f} µs CPU/run  {r['requests']} runs, {r['errors']} errors {'' if not r['errors'] else r}")
            print(json.dumps({"peer": PEER, "version": VERSION, "server": SERVER, "workload": "serve", "connections": connections, "round": round_, "secs": SECS, "runs": r["requests"], "runs_per_s": round(r["runs_per_s"], 1), "p50_us": r["p50_us"], "p99_us": r["p99_us"], "cpu_us_per_run": round(r["cpu_us_per_run"], 1), "errors": r["errors"], "error_kinds": {k: r[k] for k in ("connect", "read", "write", "status", "timeout", "incomplete")}, "load": load()}), flush=True)
    log(f"load average {load()} after")
    for connections, rs in rows.items():
        log(
            f"median c={connections}: {statistics.median(r['runs_per_s'] for r in rs):.0f} runs/s, "
            f"p50 {statistics.median(r['p50_us'] for r in rs) / 1e3:.3f} ms, p99 {statistics.median(r['p99_us'] for r in rs) / 1e3:.3f} ms, "
            f"errors {sum(r['errors'] for r in rs)}"
        )
    return 1 if any(r["errors"] for rs in rows.values() for r in rs) else 0


if __name__ == "__main__":
    sys.exit(main())
