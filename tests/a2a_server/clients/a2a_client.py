"""Drives our A2A face with the official A2A SDK's client (a2a-sdk 1.3.0, A2A v1.0).

    python a2a_client.py SCENARIO BASE_URL [TOKEN [OTHER_TOKEN]]

BASE_URL is where the card is looked for (`BASE_URL/.well-known/agent-card.json`, by the
SDK's card resolver). Each scenario prints one JSON document for the Rust test to check,
and asserts what the SDK itself can tell. The tests in tests/a2a_server run it.
"""
import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf import json_format, struct_pb2

from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import TaskNotFoundError, TaskNotCancelableError, InvalidParamsError


def as_dict(message):
    return json_format.MessageToDict(message)


def http(token):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(headers=headers, timeout=30)


async def client(base, token=None, streaming=True):
    config = ClientConfig(streaming=streaming, httpx_client=http(token))
    return await ClientFactory(config).create_from_url(base)


def text_message(text, task_id=None, context_id=None):
    message = pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)])
    if task_id:
        message.task_id = task_id
    if context_id:
        message.context_id = context_id
    return message


def decision_message(task_id, context_id, decisions):
    data = struct_pb2.Value()
    data.struct_value.update({"decisions": decisions})
    return pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, task_id=task_id, context_id=context_id,
        parts=[pb.Part(data=data)],
    )


async def events(a2a, message):
    return [as_dict(event) async for event in a2a.send_message(pb.SendMessageRequest(message=message))]


async def card(base, token=None):
    async with http(token) as h:
        from a2a.client import A2ACardResolver
        resolved = await A2ACardResolver(h, base).get_agent_card()
    return as_dict(resolved)


async def send(base, token=None):
    a2a = await client(base, token, streaming=False)
    [only] = await events(a2a, text_message("What is the weather in Oslo?"))
    task = only["task"]
    again = await a2a.get_task(pb.GetTaskRequest(id=task["id"], history_length=1))
    return {"task": task, "got": as_dict(again)}


async def stream(base, token=None):
    a2a = await client(base, token)
    return {"events": await events(a2a, text_message("What is the weather in Oslo?"))}


async def interrupted(a2a):
    first = await events(a2a, text_message("Pay Bob"))
    last = first[-1]["statusUpdate"]
    assert last["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", last
    return first, last["taskId"], last["contextId"], last["status"]["message"]


async def approve(base, token=None):
    a2a = await client(base, token)
    first, task_id, context_id, asked = await interrupted(a2a)
    interrupts = [p["data"]["interrupts"] for p in asked["parts"] if "data" in p][0]
    decisions = {i["id"]: {"type": "approve"} for i in interrupts}
    second = await events(a2a, decision_message(task_id, context_id, decisions))
    got = await a2a.get_task(pb.GetTaskRequest(id=task_id))
    return {"first": first, "second": second, "task": as_dict(got)}


async def reject(base, token=None):
    a2a = await client(base, token)
    first, task_id, context_id, asked = await interrupted(a2a)
    interrupts = [p["data"]["interrupts"] for p in asked["parts"] if "data" in p][0]
    # Decisions that do not read are refused, and the task still waits.
    try:
        await events(a2a, decision_message(task_id, context_id, {interrupts[0]["id"]: {"type": "maybe"}}))
        raise AssertionError("a decision that does not read was taken")
    except InvalidParamsError as error:
        refused = str(error)
    waiting = await a2a.get_task(pb.GetTaskRequest(id=task_id))
    assert waiting.status.state == pb.TASK_STATE_INPUT_REQUIRED, waiting
    decisions = {i["id"]: {"type": "reject", "reason": "not today"} for i in interrupts}
    second = await events(a2a, decision_message(task_id, context_id, decisions))
    return {"refused": refused, "second": second}


async def cancel(base, token=None):
    a2a = await client(base, token)
    seen = []
    canceled = {}

    async def read():
        async for event in a2a.send_message(pb.SendMessageRequest(message=text_message("Take your time"))):
            seen.append(as_dict(event))
            update = seen[-1].get("statusUpdate")
            if update and update["status"]["state"] == "TASK_STATE_WORKING" and not canceled:
                canceled["task"] = as_dict(await a2a.cancel_task(pb.CancelTaskRequest(id=update["taskId"])))

    await asyncio.wait_for(read(), 20)
    task_id = canceled["task"]["id"]
    try:
        await a2a.cancel_task(pb.CancelTaskRequest(id=task_id))
        again = "canceled twice"
    except TaskNotCancelableError:
        again = "TaskNotCancelable"
    return {"events": seen, "canceled": canceled["task"], "again": again}


async def other(base, token, other_token):
    owner = await client(base, token)
    first, task_id, context_id, asked = await interrupted(owner)
    stranger = await client(base, other_token)
    outcomes = {}
    try:
        await stranger.get_task(pb.GetTaskRequest(id=task_id))
        outcomes["get"] = "read"
    except TaskNotFoundError:
        outcomes["get"] = "TaskNotFound"
    interrupts = [p["data"]["interrupts"] for p in asked["parts"] if "data" in p][0]
    decisions = {i["id"]: {"type": "approve"} for i in interrupts}
    try:
        await events(stranger, decision_message(task_id, context_id, decisions))
        outcomes["resume"] = "resumed"
    except TaskNotFoundError:
        outcomes["resume"] = "TaskNotFound"
    try:
        await stranger.cancel_task(pb.CancelTaskRequest(id=task_id))
        outcomes["cancel"] = "canceled"
    except TaskNotFoundError:
        outcomes["cancel"] = "TaskNotFound"
    try:
        await events(stranger, text_message("Hello", context_id=context_id))
        outcomes["context"] = "ran"
    except TaskNotFoundError:
        outcomes["context"] = "TaskNotFound"
    still = await owner.get_task(pb.GetTaskRequest(id=task_id))
    outcomes["owner_sees"] = pb.TaskState.Name(still.status.state)
    return outcomes


async def decide(base, token, decider_token):
    owner = await client(base, token)
    first, task_id, context_id, asked = await interrupted(owner)
    decider = await client(base, decider_token)
    interrupts = [p["data"]["interrupts"] for p in asked["parts"] if "data" in p][0]
    decisions = {i["id"]: {"type": "approve"} for i in interrupts}
    second = await events(decider, decision_message(task_id, context_id, decisions))
    got = await owner.get_task(pb.GetTaskRequest(id=task_id))
    return {"second": second, "owner_sees": pb.TaskState.Name(got.status.state)}


SCENARIOS = {
    "card": card, "send": send, "stream": stream, "approve": approve, "reject": reject,
    "cancel": cancel, "other": other, "decide": decide,
}

if __name__ == "__main__":
    scenario, base, *tokens = sys.argv[1:]
    print(json.dumps(asyncio.run(SCENARIOS[scenario](base, *tokens))))
