"""The served agent of benches/serve.rs, as LangGraph graphs for `langgraph dev`.

`stream`: a scripted fake chat model (no network) whose first turn says `Let me track it.`
and calls `track` with `{"order": 7}`, and whose second turn streams `Order 7 `,
`arrives `, `tomorrow.`; `track` answers `in transit` at once. `hold`: the same, but
`track` waits HOLD_S (60) seconds first (to hold streams open while memory is measured), and
`GET /bench/open` (a custom route of the server) says how many runs are waiting in it
(held.py).
The graph is the model/tools loop that `create_agent` builds: a model node, a `ToolNode`,
`tools_condition` between them.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

# `held` (the counter) is imported by name from this folder, so both loads share it.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import held  # noqa: E402

HOLD_S = 60.0
ANSWER = ["Order 7 ", "arrives ", "tomorrow."]
CALL = {"name": "track", "args": {"order": 7}, "id": "c1", "type": "tool_call"}


def _first_turn(messages: list[BaseMessage]) -> bool:
    return not any(isinstance(m, AIMessage) for m in messages)


class ScriptedChatModel(BaseChatModel):
    """The script, picked by how many AI messages the input holds: stateless, shared."""

    @property
    def _llm_type(self) -> str:
        return "scripted-serve-bench"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        if _first_turn(messages):
            message = AIMessage(content="Let me track it.", tool_calls=[CALL])
        else:
            message = AIMessage(content="".join(ANSWER))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _chunks(self, messages: list[BaseMessage]) -> Iterator[ChatGenerationChunk]:
        if _first_turn(messages):
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content="Let me track it.",
                    tool_call_chunks=[{"name": "track", "args": '{"order": 7}', "id": "c1", "index": 0, "type": "tool_call_chunk"}],
                )
            )
        else:
            for piece in ANSWER:
                yield ChatGenerationChunk(message=AIMessageChunk(content=piece))

    def _stream(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            if run_manager:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk


MODEL = ScriptedChatModel()


@tool("track")
async def track(order: int) -> str:
    """Tracks an order."""
    return "in transit"


@tool("track")
async def track_slowly(order: int) -> str:
    """Tracks an order."""
    held.OPEN += 1
    try:
        await asyncio.sleep(HOLD_S)
    finally:
        held.OPEN -= 1
    return "in transit"


def _graph(track_tool: Any) -> Any:
    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await MODEL.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([track_tool]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


stream = _graph(track)
hold = _graph(track_slowly)


async def _open(_request: Any) -> JSONResponse:
    return JSONResponse({"open": held.OPEN})


app = Starlette(routes=[Route("/bench/open", _open)])
