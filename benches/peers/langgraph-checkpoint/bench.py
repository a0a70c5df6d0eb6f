"""LangGraph checkpointers peer: the cost of one checkpoint write and one read.

The record: the 20-message chat history of `history.json` (user, assistant with tool
calls, tool results; 6,181 bytes as compact JSON in tower-adk's `Message` format), turned
into langchain-core messages (each with an id, as LangGraph's `add_messages` gives them)
and kept as the `messages` channel value of a LangGraph checkpoint, as a `create_agent`
graph keeps its history.

For each saver (SqliteSaver, AsyncSqliteSaver, PostgresSaver, AsyncPostgresSaver), in a
fresh child process and on fresh tables, after a warm-up, every operation timed on its own:

- `put`: one `put` of the next checkpoint of a thread (the full history: the `messages`
  channel gets a new version at every step, so PostgresSaver writes its blob again);
- `step`: what LangGraph writes per superstep: `put_writes` of the task's write (one new
  assistant message to `messages`) on the thread's current checkpoint, then `put` of the
  next checkpoint; timed together;
- `get_tuple`: one read of a thread's latest checkpoint (what a run on the thread starts
  with), the messages deserialised.

Operations go round-robin over 100 threads. Without arguments, runs every saver and prints
one JSON line per (saver, operation) on stdout, and a small table on stderr.
`PEERS_QUICK=1` makes every measurement tiny (a smoke test). Needs `LGC_PG_DSN` (the
`run` script starts a private PostgreSQL and sets it) for the Postgres savers.
"""

from __future__ import annotations

import os

for _var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
    os.environ.pop(_var, None)

import asyncio
import json
import random
import statistics
import subprocess
import sys
import time
import uuid
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import LATEST_VERSION, Checkpoint
from langgraph.checkpoint.base.id import uuid6

QUICK = os.environ.get("PEERS_QUICK") == "1"
PEER = "langgraph-checkpoint"
HERE = Path(__file__).resolve().parent
TARGET = Path(os.environ.get("PEERS_TARGET", HERE.parent.parent.parent / "target" / "peers" / PEER))
HISTORY = HERE / "history.json"
THREADS = 10 if QUICK else 100
WARMUP = 20 if QUICK else 300
OPS = 50 if QUICK else 2000

# saver name -> (store, api, package whose version is reported)
SAVERS = {
    "SqliteSaver": ("sqlite", "sync", "langgraph-checkpoint-sqlite"),
    "AsyncSqliteSaver": ("sqlite", "async", "langgraph-checkpoint-sqlite"),
    "PostgresSaver": ("postgres", "sync", "langgraph-checkpoint-postgres"),
    "AsyncPostgresSaver": ("postgres", "async", "langgraph-checkpoint-postgres"),
}


def log(msg: str) -> None:
    print(f"[{PEER}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------
# The record.
# ---------------------------------------------------------------------------------------


def history_json_bytes() -> int:
    """The history as compact JSON in tower-adk's format (what our record holds)."""
    raw = json.loads(HISTORY.read_text())
    return len(json.dumps(raw, ensure_ascii=False, separators=(",", ":")).encode())


def load_history() -> list[BaseMessage]:
    rng = random.Random(20)

    def msg_id() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    out: list[BaseMessage] = []
    for m in json.loads(HISTORY.read_text()):
        if m["role"] == "user":
            out.append(HumanMessage(content=m["content"], id=msg_id()))
        elif m["role"] == "assistant":
            calls = [
                {"name": c["name"], "args": json.loads(c["arguments"]), "id": c["id"], "type": "tool_call"}
                for c in m.get("tool_calls", [])
            ]
            out.append(AIMessage(content=m["content"], tool_calls=calls, id=msg_id()))
        elif m["role"] == "tool":
            out.append(ToolMessage(content=m["content"], tool_call_id=m["call_id"], name=m["name"], id=msg_id()))
        else:
            raise ValueError(f"unexpected role {m['role']!r}")
    assert len(out) == 20, len(out)
    return out


MESSAGES = load_history()
NEW_MESSAGE = AIMessage(content="You're welcome, Mary. Enjoy the dinner on Saturday!", id=str(uuid.UUID(int=7, version=4)))


class Thread:
    """One conversation thread: its latest checkpoint config and channel versions, and
    the next checkpoint for it, built the way LangGraph's loop builds them."""

    def __init__(self, saver: Any, name: str) -> None:
        self.saver = saver
        self.name = name
        self.config: dict[str, Any] = {"configurable": {"thread_id": name, "checkpoint_ns": ""}}
        self.step = -1
        self.versions: dict[str, Any] = {}

    def next_checkpoint(self) -> tuple[Checkpoint, dict[str, Any], dict[str, Any]]:
        self.step += 1
        nxt = self.saver.get_next_version
        new_versions = {"messages": nxt(self.versions.get("messages"), None)}
        branch = "branch:to:model" if self.step % 2 == 0 else "branch:to:tools"
        new_versions[branch] = nxt(self.versions.get(branch), None)
        if "__start__" not in self.versions:
            new_versions["__start__"] = nxt(None, None)
        self.versions.update(new_versions)
        checkpoint = Checkpoint(
            v=LATEST_VERSION,
            id=str(uuid6(clock_seq=self.step)),
            ts=datetime.now(timezone.utc).isoformat(),
            channel_values={"messages": MESSAGES},
            channel_versions=dict(self.versions),
            versions_seen={
                "__input__": {},
                "__start__": {"__start__": self.versions["__start__"]},
                "model": {"branch:to:model": self.versions["branch:to:model"]},
                "tools": {"branch:to:tools": self.versions.get("branch:to:tools", self.versions["__start__"])},
            },
            updated_channels=["messages", branch],
        )
        metadata = {"source": "loop", "step": self.step, "parents": {}}
        return checkpoint, metadata, new_versions

    def task_writes(self) -> tuple[list[tuple[str, Any]], str]:
        return [("messages", [NEW_MESSAGE])], str(uuid.UUID(int=self.step + 1, version=4))


def check_read(tup: Any) -> None:
    assert tup is not None
    got = tup.checkpoint["channel_values"]["messages"]
    assert got == MESSAGES, "the messages read back differ from the ones written"
    assert all(type(a) is type(b) for a, b in zip(got, MESSAGES))


# ---------------------------------------------------------------------------------------
# Measurement.
# ---------------------------------------------------------------------------------------


def summary(name: str, op: str, samples_ns: list[int], extra: dict[str, Any]) -> dict[str, Any]:
    store, api, package = SAVERS[name]
    us = sorted(s / 1000 for s in samples_ns)
    p90 = statistics.quantiles(us, n=10, method="inclusive")[8]
    return {
        "peer": PEER,
        "version": version(package),
        "workload": "checkpoint",
        "store": store,
        "api": api,
        "saver": name,
        "op": op,
        "ops": len(us),
        "us_median": round(statistics.median(us), 1),
        "us_p90": round(p90, 1),
        **extra,
    }


def run_sync(saver: Any) -> tuple[list[int], list[int], list[int]]:
    threads = [Thread(saver, f"thread-{i}") for i in range(THREADS)]
    clock = time.perf_counter_ns

    def step(t: Thread) -> tuple[int, int]:
        writes, task_id = t.task_writes()
        t0 = clock()
        if t.step >= 0:  # the first step of a thread has no checkpoint to attach writes to
            saver.put_writes(t.config, writes, task_id)
        t1 = clock()
        cp, md, nv = t.next_checkpoint()
        t.config = saver.put(t.config, cp, md, nv)
        return t1 - t0, clock() - t1

    for i in range(WARMUP):
        step(threads[i % THREADS])
    for t in threads:  # every thread has a checkpoint, so writes below are never firsts
        if t.step < 0:
            step(t)
    check_read(saver.get_tuple({"configurable": {"thread_id": threads[0].name}}))

    puts, steps = [], []
    for i in range(OPS):
        w, p = step(threads[i % THREADS])
        puts.append(p)
        steps.append(w + p)

    reads = []
    read_configs = [{"configurable": {"thread_id": t.name}} for t in threads]
    for i in range(WARMUP):
        saver.get_tuple(read_configs[i % THREADS])
    for i in range(OPS):
        cfg = read_configs[i % THREADS]
        t0 = clock()
        tup = saver.get_tuple(cfg)
        reads.append(clock() - t0)
        assert tup is not None
    check_read(saver.get_tuple(read_configs[-1]))
    return puts, steps, reads


async def run_async(saver: Any) -> tuple[list[int], list[int], list[int]]:
    threads = [Thread(saver, f"thread-{i}") for i in range(THREADS)]
    clock = time.perf_counter_ns

    async def step(t: Thread) -> tuple[int, int]:
        writes, task_id = t.task_writes()
        t0 = clock()
        if t.step >= 0:
            await saver.aput_writes(t.config, writes, task_id)
        t1 = clock()
        cp, md, nv = t.next_checkpoint()
        t.config = await saver.aput(t.config, cp, md, nv)
        return t1 - t0, clock() - t1

    for i in range(WARMUP):
        await step(threads[i % THREADS])
    for t in threads:
        if t.step < 0:
            await step(t)
    check_read(await saver.aget_tuple({"configurable": {"thread_id": threads[0].name}}))

    puts, steps = [], []
    for i in range(OPS):
        w, p = await step(threads[i % THREADS])
        puts.append(p)
        steps.append(w + p)

    reads = []
    read_configs = [{"configurable": {"thread_id": t.name}} for t in threads]
    for i in range(WARMUP):
        await saver.aget_tuple(read_configs[i % THREADS])
    for i in range(OPS):
        cfg = read_configs[i % THREADS]
        t0 = clock()
        tup = await saver.aget_tuple(cfg)
        reads.append(clock() - t0)
        assert tup is not None
    check_read(await saver.aget_tuple(read_configs[-1]))
    return puts, steps, reads


# ---------------------------------------------------------------------------------------
# The savers, each on fresh tables.
# ---------------------------------------------------------------------------------------


def sqlite_path(name: str) -> Path:
    folder = TARGET / "sqlite"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    return path


def sqlite_stored_bytes(path: Path) -> dict[str, Any]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        (cp_bytes,) = conn.execute("SELECT avg(length(checkpoint) + length(metadata)) FROM checkpoints").fetchone()
        (mode,) = conn.execute("PRAGMA journal_mode").fetchone()
    return {"stored_bytes_per_checkpoint": round(cp_bytes), "journal_mode": mode}


def pg_dsn() -> str:
    dsn = os.environ.get("LGC_PG_DSN")
    if not dsn:
        raise SystemExit("LGC_PG_DSN is not set: run this through ./run, which starts PostgreSQL")
    return dsn


def pg_fresh_database(name: str) -> str:
    """A new, empty database for one saver; returns its DSN."""
    import psycopg

    db = name.lower()
    with psycopg.connect(pg_dsn(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}"')
        conn.execute(f'CREATE DATABASE "{db}"')
    return f"{pg_dsn()} dbname={db}"


def pg_stored_bytes(dsn: str) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        (blob,) = conn.execute(
            "SELECT avg(octet_length(blob)) FROM checkpoint_blobs WHERE channel = 'messages'"
        ).fetchone()
        (row,) = conn.execute(
            "SELECT avg(pg_column_size(checkpoint) + pg_column_size(metadata)) FROM checkpoints"
        ).fetchone()
        (server,) = conn.execute("SHOW server_version").fetchone()
        (sync_commit,) = conn.execute("SHOW synchronous_commit").fetchone()
    return {
        "stored_bytes_per_checkpoint": round(float(blob) + float(row)),
        "postgres": server,
        "synchronous_commit": sync_commit,
    }


def fsync_probe_us() -> float:
    """The median time of one fdatasync after an 8 KiB append, in the target folder: what
    a durable commit waits for at least. On a shared or virtual disk it varies a lot
    (here from 0.2 to 4 ms with other work on the machine), and the write figures with it."""
    path = TARGET / "fsync-probe.tmp"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        samples = []
        for _ in range(20 if QUICK else 200):
            os.write(fd, b"x" * 8192)
            t0 = time.perf_counter_ns()
            os.fdatasync(fd)
            samples.append(time.perf_counter_ns() - t0)
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    return round(statistics.median(samples) / 1000, 1)


def measure(name: str) -> None:
    extra: dict[str, Any] = {"history_messages": len(MESSAGES), "history_json_bytes": history_json_bytes()}
    fsync_before = fsync_probe_us()
    if name == "SqliteSaver":
        from langgraph.checkpoint.sqlite import SqliteSaver

        path = sqlite_path(name)
        with SqliteSaver.from_conn_string(str(path)) as saver:
            saver.setup()
            extra["messages_blob_bytes"] = len(saver.serde.dumps_typed(MESSAGES)[1])
            puts, steps, reads = run_sync(saver)
        extra.update(sqlite_stored_bytes(path))
    elif name == "AsyncSqliteSaver":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = sqlite_path(name)

        async def go() -> tuple[list[int], list[int], list[int]]:
            async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
                await saver.setup()
                extra["messages_blob_bytes"] = len(saver.serde.dumps_typed(MESSAGES)[1])
                return await run_async(saver)

        puts, steps, reads = asyncio.run(go())
        extra.update(sqlite_stored_bytes(path))
    elif name == "PostgresSaver":
        from langgraph.checkpoint.postgres import PostgresSaver

        dsn = pg_fresh_database(name)
        with PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
            extra["messages_blob_bytes"] = len(saver.serde.dumps_typed(MESSAGES)[1])
            puts, steps, reads = run_sync(saver)
        extra.update(pg_stored_bytes(dsn))
    elif name == "AsyncPostgresSaver":
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        dsn = pg_fresh_database(name)

        async def go() -> tuple[list[int], list[int], list[int]]:
            async with AsyncPostgresSaver.from_conn_string(dsn) as saver:
                await saver.setup()
                extra["messages_blob_bytes"] = len(saver.serde.dumps_typed(MESSAGES)[1])
                return await run_async(saver)

        puts, steps, reads = asyncio.run(go())
        extra.update(pg_stored_bytes(dsn))
    else:
        raise SystemExit(f"unknown saver {name}")

    # Before and after: a disk that got slower (or faster) meanwhile shows here.
    extra["fsync_us"] = [fsync_before, fsync_probe_us()]
    for op, samples in (("put", puts), ("step", steps), ("get_tuple", reads)):
        row = summary(name, op, samples, extra)
        log(f"{name} {op}: median {row['us_median']} us, p90 {row['us_p90']} us over {row['ops']} ops")
        print(json.dumps(row), flush=True)


# ---------------------------------------------------------------------------------------


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        "| saver | version | op | median | p90 | ops | stored bytes per checkpoint | fdatasync before, after |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        before, after = r["fsync_us"]
        out.append(
            f"| {r['saver']} | {r['version']} | {r['op']} | {r['us_median']:,.1f} µs | {r['us_p90']:,.1f} µs "
            f"| {r['ops']:,} | {r['stored_bytes_per_checkpoint']:,} | {before:,.0f} µs, {after:,.0f} µs |"
        )
    return "\n".join(out)


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        measure(sys.argv[2])
        return 0

    wanted = sys.argv[1:] or list(SAVERS)
    unknown = [w for w in wanted if w not in SAVERS]
    if unknown:
        raise SystemExit(f"unknown saver(s) {unknown}; known: {', '.join(SAVERS)}")
    log(
        f"langgraph-checkpoint {version('langgraph-checkpoint')}, "
        f"-sqlite {version('langgraph-checkpoint-sqlite')}, -postgres {version('langgraph-checkpoint-postgres')}, "
        f"psycopg {version('psycopg')}, aiosqlite {version('aiosqlite')}, langchain-core {version('langchain-core')}; "
        f"{len(MESSAGES)} messages, {history_json_bytes()} bytes as JSON; "
        f"{OPS} ops after {WARMUP} warm-up, {THREADS} threads{' (quick)' if QUICK else ''}"
    )
    rows: list[dict[str, Any]] = []
    failed = []
    for name in wanted:
        log(f"running {name}")
        done = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--one", name], stdout=subprocess.PIPE, text=True
        )
        for line in done.stdout.splitlines():
            print(line, flush=True)
            rows.append(json.loads(line))
        if done.returncode != 0:
            failed.append(name)
    if rows:
        print("\n" + table(rows), file=sys.stderr, flush=True)
    if failed:
        log(f"failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
