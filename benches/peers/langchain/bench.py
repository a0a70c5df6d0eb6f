"""LangChain v1 peer: the W1 and W4 workloads of benches/peers/README.md on `create_agent`.

Without arguments, runs every measurement, each in a fresh child process (this script
again, with `--one <workload> <handlers>`) so one measurement's memory does not hide or
inflate another's, and prints one JSON line per measurement on stdout. Progress goes to
stderr. `PEERS_QUICK=1` makes every measurement tiny (a smoke test).
"""

from __future__ import annotations

import os

# No tracing: a stray LangSmith variable would add network calls to the timed loop.
for _var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
    os.environ.pop(_var, None)

import asyncio
import json
import resource
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    before_model,
    dynamic_prompt,
    wrap_model_call,
    wrap_tool_call,
)
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool

QUICK = os.environ.get("PEERS_QUICK") == "1"
PEER = "langchain"
VERSION = version("langchain")
SYSTEM = "You are a bench."
SLEEP_S = 0.05

# ---------------------------------------------------------------------------------------
# The scripted model: the same three turns on every run. The turn is picked from how many
# AI messages the input already holds, so the model is stateless and safe to share
# between concurrent runs.
# ---------------------------------------------------------------------------------------


def _turn(messages: list[BaseMessage]) -> AIMessage:
    done = sum(1 for m in messages if isinstance(m, AIMessage))
    if done == 0:
        return AIMessage(
            content="",
            tool_calls=[
                {"name": "tool_0", "args": {"q": "a"}, "id": "c1", "type": "tool_call"},
                {"name": "tool_1", "args": {"q": "b"}, "id": "c2", "type": "tool_call"},
            ],
        )
    if done == 1:
        return AIMessage(
            content="",
            tool_calls=[{"name": "tool_2", "args": {"q": "c"}, "id": "c3", "type": "tool_call"}],
        )
    return AIMessage(content="done")


class ScriptedChatModel(BaseChatModel):
    """A fake chat model with `bind_tools`, returning the W1 script."""

    @property
    def _llm_type(self) -> str:
        return "scripted-bench"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        # As a provider model does: the tools travel with the bound model's calls.
        return self.bind(tools=tools, **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=_turn(messages))])

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        # Overridden: the default would run `_generate` on a thread pool.
        return self._generate(messages)


# ---------------------------------------------------------------------------------------
# Tools: tool_0..tool_7, each takes {"q": string} and returns "ok <q>".
# ---------------------------------------------------------------------------------------


def sync_tools() -> list[StructuredTool]:
    def make(i: int) -> StructuredTool:
        def run(q: str) -> str:
            return f"ok {q}"

        return StructuredTool.from_function(func=run, name=f"tool_{i}", description="a tool")

    return [make(i) for i in range(8)]


def sleeping_tools() -> list[StructuredTool]:
    def make(i: int) -> StructuredTool:
        async def run(q: str) -> str:
            await asyncio.sleep(SLEEP_S)
            return f"ok {q}"

        return StructuredTool.from_function(coroutine=run, name=f"tool_{i}", description="a tool")

    return [make(i) for i in range(8)]


# ---------------------------------------------------------------------------------------
# The four W1 middlewares.
# ---------------------------------------------------------------------------------------


@dataclass
class BenchContext:
    """The per-request runtime context: the caller's role."""

    role: str


TOOL_CALLS = 0


@wrap_model_call
def role_filter(request, handler):
    # Keep a tool only for the admin (who therefore keeps all 8).
    admin = request.runtime.context.role == "admin"
    return handler(request.override(tools=[t for t in request.tools if admin]))


@dynamic_prompt
def instruction_append(request) -> str:
    return f"{request.system_prompt} Be brief."


@before_model
def keep_history(state, runtime):
    # Sees the messages before each model call and keeps them as they are.
    _ = state["messages"]
    return None


@wrap_tool_call
def count_tool_calls(request, handler):
    global TOOL_CALLS
    TOOL_CALLS += 1
    return handler(request)


def four_middlewares() -> list[Any]:
    return [role_filter, instruction_append, keep_history, count_tool_calls]


# ---------------------------------------------------------------------------------------
# Checks and measurement helpers.
# ---------------------------------------------------------------------------------------

INPUT = {"messages": [HumanMessage(content="go")]}
CONTEXT = BenchContext(role="admin")


def check_result(result: dict[str, Any]) -> None:
    messages = result["messages"]
    final = messages[-1]
    assert isinstance(final, AIMessage) and final.content == "done", final
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    assert [m.content for m in tool_messages] == ["ok a", "ok b", "ok c"], tool_messages
    assert sum(1 for m in messages if isinstance(m, AIMessage)) == 3, messages


def vm_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def log(msg: str) -> None:
    print(f"[langchain] {msg}", file=sys.stderr, flush=True)


def emit(obj: dict[str, Any]) -> None:
    print(json.dumps(obj), flush=True)


# ---------------------------------------------------------------------------------------
# W1: synchronous invoke, median of 5 samples.
# ---------------------------------------------------------------------------------------


def w1(handlers: int) -> None:
    global TOOL_CALLS
    middleware = four_middlewares() if handlers == 4 else []
    agent = create_agent(
        ScriptedChatModel(),
        tools=sync_tools(),
        system_prompt=SYSTEM,
        middleware=middleware,
        context_schema=BenchContext,
    )

    def run_once() -> dict[str, Any]:
        return agent.invoke(INPUT, context=CONTEXT)

    # The agent really runs the three turns (and the middlewares really run).
    TOOL_CALLS = 0
    check_result(run_once())
    if handlers == 4:
        assert TOOL_CALLS == 3, TOOL_CALLS
        seen: dict[str, Any] = {}

        @wrap_model_call
        def spy(request, handler):
            seen["system"] = request.system_prompt
            seen["tools"] = len(request.tools)
            return handler(request)

        spied = create_agent(
            ScriptedChatModel(),
            tools=sync_tools(),
            system_prompt=SYSTEM,
            middleware=[*middleware, spy],
            context_schema=BenchContext,
        )
        check_result(spied.invoke(INPUT, context=CONTEXT))
        assert seen == {"system": "You are a bench. Be brief.", "tools": 8}, seen

    warmup = 3 if QUICK else 20
    for _ in range(warmup):
        run_once()

    # Pick N so a sample takes about 1.5 s.
    probe = 2 if QUICK else 20
    t0 = time.perf_counter()
    for _ in range(probe):
        run_once()
    per_run = (time.perf_counter() - t0) / probe
    n = 3 if QUICK else max(20, int(1.5 / per_run))

    samples = []
    for s in range(5):
        TOOL_CALLS = 0
        t0 = time.perf_counter()
        for _ in range(n):
            run_once()
        samples.append((time.perf_counter() - t0) / n)
        if handlers == 4:
            assert TOOL_CALLS == 3 * n, (TOOL_CALLS, n)
        log(f"W1 handlers={handlers} sample {s + 1}/5: {samples[-1] * 1e6:.0f} us/run (N={n})")

    emit(
        {
            "peer": PEER,
            "version": VERSION,
            "workload": "W1",
            "handlers": handlers,
            "runs": n,
            "us_per_run": round(statistics.median(samples) * 1e6, 1),
            "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        }
    )


# ---------------------------------------------------------------------------------------
# W4: concurrent ainvoke on one shared agent, tools sleep 50 ms.
# ---------------------------------------------------------------------------------------


def w4(runs: int) -> None:
    agent = create_agent(
        ScriptedChatModel(),
        tools=sleeping_tools(),
        system_prompt=SYSTEM,
    )

    async def one() -> dict[str, Any]:
        return await agent.ainvoke(INPUT)

    async def main() -> tuple[float, int, int, list[dict[str, Any]]]:
        # Warm up (imports, lazy compiles) before the baseline.
        for r in await asyncio.gather(*(one() for _ in range(5))):
            check_result(r)

        peak = 0
        stop = threading.Event()

        def sampler() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, vm_kib("VmRSS"))
                time.sleep(0.005)

        before = vm_kib("VmRSS")
        hwm_before = vm_kib("VmHWM")
        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
        t0 = time.perf_counter()
        results = await asyncio.gather(*(one() for _ in range(runs)))
        wall = time.perf_counter() - t0
        stop.set()
        thread.join()
        # The kernel's own high-water mark catches a peak between two samples.
        hwm = vm_kib("VmHWM")
        if hwm > hwm_before:
            peak = max(peak, hwm)
        return wall, before, peak, results

    wall, before, peak, results = asyncio.run(main())
    for r in results:
        check_result(r)
    log(f"W4 {runs} runs: {wall * 1000:.0f} ms, RSS {before} -> peak {peak} KiB")
    emit(
        {
            "peer": PEER,
            "version": VERSION,
            "workload": "W4",
            "handlers": 0,
            "runs": runs,
            "wall_ms": round(wall * 1000, 1),
            "kib_per_run": round((peak - before) / runs, 1),
        }
    )


# ---------------------------------------------------------------------------------------


def w4_runs() -> int:
    if QUICK:
        return 50
    return int(os.environ.get("PEERS_LANGCHAIN_W4_RUNS", "10000"))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        workload, arg = sys.argv[2], int(sys.argv[3])
        if workload == "W1":
            w1(arg)
        elif workload == "W4":
            w4(arg)
        else:
            raise SystemExit(f"unknown workload {workload}")
        return

    log(f"langchain {VERSION}, langchain-core {version('langchain-core')}, "
        f"langgraph {version('langgraph')}{' (quick)' if QUICK else ''}")
    for workload, arg in (("W1", 0), ("W1", 4), ("W4", w4_runs())):
        log(f"running {workload} {arg}")
        subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--one", workload, str(arg)],
            check=True,
        )


if __name__ == "__main__":
    main()
