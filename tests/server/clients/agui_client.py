"""Drives the server's AG-UI route with inputs built by the AG-UI SDK's models
(`ag-ui-protocol`), and validates every event it streams back with them.

    python agui_client.py BASE_URL SCENARIO

SCENARIO is `plain` (agent `greeter`, streams "Hello!"), `tools` (agent `weather`: a
tool call, then "It is sunny.") or `interrupt` (agent `bank`: a call that waits for
approval, approved through `resume`, then another one, cancelled). Prints the events
it saw; exits non-zero on the first assertion that fails.
"""

import json
import sys
import urllib.request

from ag_ui.core import Event, EventType, ResumeEntry, RunAgentInput, UserMessage
from pydantic import TypeAdapter

base_url, scenario = sys.argv[1], sys.argv[2]
EVENTS = TypeAdapter(Event)


def run(agent, run_id, text="hi", resume=None):
    """Posts a RunAgentInput and returns the validated events of its stream."""
    body = RunAgentInput(
        thread_id="thread-1",
        run_id=run_id,
        messages=[UserMessage(id=f"{run_id}-user", content=text)],
        tools=[],
        context=[],
        state={},
        forwarded_props={},
        resume=resume,
    ).model_dump_json(by_alias=True, exclude_none=True)
    request = urllib.request.Request(
        f"{base_url}/agents/{agent}/agui",
        data=body.encode(),
        headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
    )
    events = []
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response:
            line = line.decode().rstrip("\n")
            if not line.startswith("data:"):
                continue
            event = EVENTS.validate_python(json.loads(line[len("data:"):].strip()))
            # Every field we send is one the protocol defines.
            assert not event.model_extra, (event.type, event.model_extra)
            events.append(event)
    print(agent, run_id, [e.type.value for e in events])
    assert events[0].type == EventType.RUN_STARTED
    assert (events[0].thread_id, events[0].run_id) == ("thread-1", run_id)
    assert events[-1].type in (EventType.RUN_FINISHED, EventType.RUN_ERROR)
    return events


def types(events):
    return [e.type for e in events]


def text_of(events):
    return "".join(e.delta for e in events if e.type == EventType.TEXT_MESSAGE_CONTENT)


T = EventType
if scenario == "plain":
    events = run("greeter", "run-1")
    assert types(events) == [
        T.RUN_STARTED, T.TEXT_MESSAGE_START, T.TEXT_MESSAGE_CONTENT,
        T.TEXT_MESSAGE_CONTENT, T.TEXT_MESSAGE_END, T.RUN_FINISHED,
    ], types(events)
    assert len({e.message_id for e in events[1:5]}) == 1
    assert events[1].role == "assistant"
    assert text_of(events) == "Hello!"
    assert events[-1].outcome.type == "success" and events[-1].result == "Hello!"

elif scenario == "tools":
    events = run("weather", "run-1", "Weather in Oslo?")
    assert types(events) == [
        T.RUN_STARTED, T.TOOL_CALL_START, T.TOOL_CALL_ARGS, T.TOOL_CALL_END,
        T.TOOL_CALL_RESULT, T.TEXT_MESSAGE_START, T.TEXT_MESSAGE_CONTENT,
        T.TEXT_MESSAGE_CONTENT, T.TEXT_MESSAGE_END, T.RUN_FINISHED,
    ], types(events)
    start, args, end, result = events[1:5]
    assert (start.tool_call_id, start.tool_call_name) == ("c1", "weather")
    assert json.loads(args.delta) == {"city": "Oslo"}
    assert end.tool_call_id == result.tool_call_id == "c1"
    assert result.content == "sunny"
    assert text_of(events) == "It is sunny."
    assert events[-1].outcome.type == "success"

elif scenario == "interrupt":
    stopped = run("bank", "run-1", "pay")
    assert types(stopped) == [
        T.RUN_STARTED, T.TOOL_CALL_START, T.TOOL_CALL_ARGS, T.TOOL_CALL_END, T.RUN_FINISHED,
    ], types(stopped)
    outcome = stopped[-1].outcome
    assert outcome.type == "interrupt", outcome
    [interrupt] = outcome.interrupts
    print("interrupt:", interrupt)
    assert interrupt.reason == "tool_call"
    assert interrupt.tool_call_id == "c1"
    assert interrupt.message == "Pay?"
    assert interrupt.metadata["payload"] == {"question": "Pay?"}

    approved = run("bank", "run-2", resume=[
        ResumeEntry(interrupt_id=interrupt.id, status="resolved", payload={"approved": True}),
    ])
    assert types(approved)[:2] == [T.RUN_STARTED, T.TOOL_CALL_RESULT], types(approved)
    assert approved[1].tool_call_id == "c1" and approved[1].content == "paid"
    assert text_of(approved) == "Paid."
    assert approved[-1].outcome.type == "success"

    # The same interrupt again: its checkpoint is used.
    again = run("bank", "run-3", resume=[
        ResumeEntry(interrupt_id=interrupt.id, status="resolved", payload={"approved": True}),
    ])
    assert types(again) == [T.RUN_STARTED, T.RUN_ERROR], types(again)
    assert again[-1].code == "checkpoint_used", again[-1]

    # A new interrupt, cancelled: the tool does not run, the model reads why.
    stopped = run("bank", "run-4", "pay")
    [interrupt] = stopped[-1].outcome.interrupts
    cancelled = run("bank", "run-5", resume=[
        ResumeEntry(interrupt_id=interrupt.id, status="cancelled"),
    ])
    assert cancelled[1].type == T.TOOL_CALL_RESULT
    assert "cancelled" in cancelled[1].content, cancelled[1].content
    assert cancelled[-1].outcome.type == "success"

else:
    raise SystemExit(f"unknown scenario {scenario}")

print("ok")
