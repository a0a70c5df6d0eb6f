"""The scripted agent of benches/serve.rs, served by a2a-sdk's own server: the peer of
tower-adk's A2A face in the A2A round-trip benchmark (BENCHMARKS.md, "Serving over A2A").

The same run as tower-adk's `stream` agent, in A2A's terms: the model's first turn says
`Let me track it.` and calls `track` (which answers `in transit` at once); the second
streams `Order 7 `, `arrives `, `tomorrow.`. On the wire that is the task, a WORKING
status, one artifact chunk per piece of text (appended), and the COMPLETED status: what
a2a-sdk's `TaskUpdater` publishes, on `DefaultRequestHandler` with the in-memory task
store, served by uvicorn (uvloop, httptools) as a2a-sdk's examples serve it.

    python server.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from starlette.applications import Starlette

from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

ANSWER = ["Order 7 ", "arrives ", "tomorrow."]


async def track(order: int) -> str:
    """The tool: answers at once, as the Rust bench's `track` does."""
    return "in transit"


class Scripted(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        await updater.add_artifact([new_text_part("Let me track it.")], artifact_id="filler")
        await track(7)
        for i, chunk in enumerate(ANSWER):
            await updater.add_artifact(
                [new_text_part(chunk)],
                artifact_id="answer",
                append=i > 0,
                last_chunk=i == len(ANSWER) - 1,
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def app(port: int) -> Starlette:
    card = AgentCard(
        name="stream",
        description="Tracks orders (the benchmark's scripted agent).",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="track", name="track", description="Tracks an order", tags=["orders"])],
    )
    handler = DefaultRequestHandler(agent_executor=Scripted(), task_store=InMemoryTaskStore(), agent_card=card)
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/")
    return Starlette(routes=routes)


if __name__ == "__main__":
    port = int(sys.argv[1])
    uvicorn.run(app(port), host="127.0.0.1", port=port, log_level="warning", loop="uvloop", http="httptools", access_log=False)
