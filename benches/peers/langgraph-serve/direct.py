"""The same graphs (graph.py) served without langgraph-api: a Starlette app on uvicorn
whose `POST /runs/stream` takes langgraph-api's body and streams the run straight from
`graph.astream` with sse-starlette, in the request's task (no run queue, no thread
store). The events are langgraph-api's: `metadata`, then `messages` (the model's tokens
and the tool's message, each with its metadata) and `updates` (each node's messages).

    uvicorn direct:app --host 127.0.0.1 --port 8000
"""

from __future__ import annotations

import uuid
from typing import Any, AsyncIterator

import orjson
from pydantic import BaseModel
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import graph

GRAPHS = {"stream": graph.stream, "hold": graph.hold}


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _json(value: Any) -> str:
    return orjson.dumps(value, default=_default).decode()


async def _events(compiled: Any, payload: dict[str, Any]) -> AsyncIterator[dict[str, str]]:
    run_id = str(uuid.uuid4())
    yield {"event": "metadata", "data": _json({"run_id": run_id, "attempt": 1})}
    modes = ["messages" if m == "messages-tuple" else m for m in payload.get("stream_mode", ["values"])]
    async for mode, chunk in compiled.astream(payload["input"], stream_mode=modes, config={"run_id": run_id}):
        yield {"event": "messages" if mode == "messages" else mode, "data": _json(chunk)}


async def runs_stream(request: Request) -> Any:
    payload = orjson.loads(await request.body())
    compiled = GRAPHS.get(payload.get("assistant_id"))
    if compiled is None:
        return JSONResponse({"detail": "no such graph"}, status_code=404)
    return EventSourceResponse(_events(compiled, payload), ping=15)


async def ok(_request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


app = Starlette(
    routes=[
        Route("/runs/stream", runs_stream, methods=["POST"]),
        Route("/ok", ok),
        *graph.app.routes,
    ]
)
