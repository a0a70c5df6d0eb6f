"""A scripted A2A agent on the official Python SDK (a2a-sdk 1.x, A2A v1.0), for the
tests of tower-adk's A2A client (tests/a2a).

    python scripted_agent.py --port PORT [--no-streaming] [--token TOKEN]

It serves its agent card at /.well-known/agent-card.json and JSON-RPC at /a2a on
127.0.0.1:PORT. What it does is chosen by the text of the message that starts a task:

    stream ...   the answer as several artifact chunks, a little apart
    ask ...      TASK_STATE_INPUT_REQUIRED with a question and a data part; the next
                 message on the task completes it, echoing what that message held
    slow ...     works for a minute, unless CancelTask arrives (recorded, see below)
    fail ...     TASK_STATE_FAILED with a reason
    reject ...   TASK_STATE_REJECTED with a reason
    message ...  a plain Message, no task
    anything     a completed task whose artifact echoes the text and counts the turns of
                 its context ("Echo: hi (turn 2)")

GET /_test/record answers what the server saw: the ids of the tasks it was asked to
cancel, and each JSON-RPC request's method and Authorization header. With --token, a
JSON-RPC request without `Authorization: Bearer TOKEN` gets 401 (the card stays public).
"""

import argparse
import asyncio
import json

import uvicorn
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a.helpers.proto_helpers import new_data_part, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Role,
    TaskState,
)

RECORD = {"cancelled": [], "requests": []}
CHUNKS = ["Invoice 7 ", "is paid ", "in full."]


def first_word(text: str) -> str:
    words = text.strip().split()
    return words[0].lower() if words else ""


class ScriptedExecutor(AgentExecutor):
    def __init__(self) -> None:
        self.turns: dict[str, int] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if first_word(text) == "message" and task is None:
            reply = Message(
                role=Role.ROLE_AGENT,
                message_id=f"m-{context.task_id}",
                context_id=context.context_id,
                parts=[new_text_part("Hello from a message.")],
            )
            await event_queue.enqueue_event(reply)
            return
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if task is None:
            submitted = new_task(
                context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED,
                history=[context.message],
            )
            await event_queue.enqueue_event(submitted)
        if task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await self.answered(context, updater)
            return
        await updater.start_work()
        word = first_word(text)
        if word == "stream":
            for i, chunk in enumerate(CHUNKS):
                await asyncio.sleep(0.05)
                await updater.add_artifact(
                    [new_text_part(chunk)],
                    artifact_id="answer",
                    name="answer",
                    append=i > 0,
                    last_chunk=i == len(CHUNKS) - 1,
                )
            await updater.complete()
        elif word == "ask":
            question = updater.new_agent_message(
                [
                    new_text_part("Refund 40 EUR to order 7?"),
                    new_data_part({"action": "refund", "order": 7, "amount": 40}),
                ]
            )
            await updater.requires_input(question)
        elif word == "slow":
            note = updater.new_agent_message([new_text_part("Counting the ledger...")])
            await updater.update_status(TaskState.TASK_STATE_WORKING, note)
            await asyncio.sleep(60)
            await updater.add_artifact([new_text_part("Counted.")])
            await updater.complete()
        elif word == "fail":
            reason = updater.new_agent_message([new_text_part("the ledger is closed")])
            await updater.failed(reason)
        elif word == "reject":
            reason = updater.new_agent_message([new_text_part("I only do billing")])
            await updater.reject(reason)
        else:
            turn = self.turns.get(context.context_id, 0) + 1
            self.turns[context.context_id] = turn
            await updater.add_artifact([new_text_part(f"Echo: {text} (turn {turn})")])
            await updater.complete()

    async def answered(self, context: RequestContext, updater: TaskUpdater) -> None:
        """The next message on an input-required task: complete it, echoing what it held."""
        await updater.start_work()
        parts = [MessageToDict(part) for part in context.message.parts]
        received = json.dumps(parts, sort_keys=True)
        await updater.add_artifact([new_text_part(f"Refunded. Got: {received}")])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        RECORD["cancelled"].append(context.task_id)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def card(port: int, streaming: bool) -> AgentCard:
    return AgentCard(
        name="ledger",
        description="Answers questions about invoices and refunds.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/a2a",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            )
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="invoices",
                name="Invoices",
                description="Looks up invoices and refunds them",
                tags=["billing"],
            )
        ],
    )


async def record(_: Request) -> JSONResponse:
    return JSONResponse(RECORD)


class Recording:
    """Records each JSON-RPC request's method and Authorization header; with a token,
    answers 401 to a request without it. Plain ASGI, so streamed answers pass through."""

    def __init__(self, app, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["path"] != "/a2a":
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        authorization = headers.get("authorization")
        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            method = None
        RECORD["requests"].append({"method": method, "authorization": authorization})
        if self.token and authorization != f"Bearer {self.token}":
            await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
            return
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--no-streaming", action="store_true")
    parser.add_argument("--token")
    args = parser.parse_args()

    agent_card = card(args.port, not args.no_streaming)
    handler = DefaultRequestHandler(
        agent_executor=ScriptedExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=agent_card,
    )
    routes = create_agent_card_routes(agent_card) + create_jsonrpc_routes(handler, "/a2a")
    routes.append(Route("/_test/record", record, methods=["GET"]))
    app = Recording(Starlette(routes=routes), args.token)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
