"""Drives the server's AG-UI route with inputs built by the AG-UI SDK's models
(`ag-ui-protocol`), and validates every event it streams back with them.

    python agui_client.py BASE_URL SCENARIO

SCENARIO is `plain` (agent `greeter`, streams "Hello!"), `tools` (agent `weather`: a
tool call, then "It is sunny."), `interrupt` (agent `bank`: a call that waits for
approval, approved through `resume`, then another one, cancelled), `parts` (agent
`painter`: an image in, reasoning, a tool's image and the model's own image out; parts
the server cannot read refused) or `usage` (agent `metered`: a model that reports its
usage, priced). Prints the events it saw; exits non-zero on the first assertion that
fails.
"""

import json
import sys
import urllib.error
import urllib.request

from ag_ui.core import (
    AudioPart,
    DataSource,
    Event,
    EventType,
    FileSource,
    ImagePart,
    ResumeEntry,
    RunAgentInput,
    TextPart,
    UserMessage,
)
from pydantic import TypeAdapter

base_url, scenario = sys.argv[1], sys.argv[2]
EVENTS = TypeAdapter(Event)
# A 1x1 PNG, and the signature the model's reasoning carries: never sent to a client.
DOT = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS1wcm92aWRlcg=="


def body_of(run_id, content, resume=None):
    return RunAgentInput(
        thread_id="thread-1",
        run_id=run_id,
        messages=[UserMessage(id=f"{run_id}-user", content=content)],
        tools=[],
        context=[],
        state={},
        forwarded_props={},
        resume=resume,
    ).model_dump_json(by_alias=True, exclude_none=True)


def post(agent, body):
    request = urllib.request.Request(
        f"{base_url}/agents/{agent}/agui",
        data=body.encode(),
        headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
    )
    return urllib.request.urlopen(request, timeout=30)


def run(agent, run_id, text="hi", resume=None):
    """Posts a RunAgentInput and returns the validated events of its stream."""
    events = []
    with post(agent, body_of(run_id, text, resume)) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response:
            line = line.decode().rstrip("\n")
            if not line.startswith("data:"):
                continue
            # The reasoning's opaque data is never sent, in any field.
            assert SIGNATURE not in line, line
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

elif scenario == "parts":
    image = ImagePart(source=DataSource(value=DOT, mime_type="image/png"))
    events = run("painter", "run-1", [TextPart(text="Draw a dot like this:"), image])
    assert types(events) == [
        T.RUN_STARTED,
        # Turn 1: its reasoning came whole, before its tool call.
        T.REASONING_START, T.REASONING_MESSAGE_START, T.REASONING_MESSAGE_CONTENT,
        T.REASONING_MESSAGE_END, T.REASONING_END,
        T.TOOL_CALL_START, T.TOOL_CALL_ARGS, T.TOOL_CALL_END, T.TOOL_CALL_RESULT,
        # Turn 2: its reasoning streamed, then its text, then its image, said.
        T.REASONING_START, T.REASONING_MESSAGE_START, T.REASONING_MESSAGE_CONTENT,
        T.REASONING_MESSAGE_END, T.REASONING_END,
        T.TEXT_MESSAGE_START, T.TEXT_MESSAGE_CONTENT, T.TEXT_MESSAGE_CONTENT,
        T.TEXT_MESSAGE_CONTENT, T.TEXT_MESSAGE_END, T.RUN_FINISHED,
    ], types(events)
    span, message, content, message_end, span_end = events[1:6]
    assert span.message_id == span_end.message_id != message.message_id
    assert message.role == "reasoning"
    assert content.message_id == message_end.message_id == message.message_id
    assert content.delta == "I should draw."
    assert events[12].delta == "Weigh it."
    result = events[9]
    assert result.tool_call_id == "c1"
    text, drawn = result.content
    assert (text.type, text.text) == ("text", "drawn")
    assert drawn.type == "image" and drawn.source.type == "data"
    assert (drawn.source.value, drawn.source.mime_type) == (DOT, "image/png")
    placeholder = "[an image: image/png, 96 base64 bytes]"
    assert text_of(events) == f"Here it is.\n\n{placeholder}", text_of(events)
    assert events[-1].result == f"{placeholder}\n\nHere it is.", events[-1].result
    assert events[-1].usage is None

    # What the server cannot read is refused by name, never dropped.
    refusals = {
        "audio": AudioPart(source=DataSource(value="UklGRg==", mime_type="audio/wav")),
        "file` source": ImagePart(source=FileSource(value="file-abc", provider="openai")),
    }
    for named, part in refusals.items():
        try:
            post("painter", body_of("run-2", [TextPart(text="Hear this"), part]))
            raise AssertionError(f"{named} was not refused")
        except urllib.error.HTTPError as refused:
            error = json.loads(refused.read())["error"]
            print("refused:", refused.code, error)
            assert refused.code == 400 and error["code"] == "invalid_body", error
            assert f"`{named}" in error["message"], error

elif scenario == "usage":
    events = run("metered", "run-1")
    assert types(events) == [
        T.RUN_STARTED, T.TEXT_MESSAGE_START, T.TEXT_MESSAGE_CONTENT, T.TEXT_MESSAGE_END,
        T.CUSTOM, T.RUN_FINISHED,
    ], types(events)
    [usage] = events[-1].usage
    print("usage:", usage, "cost:", events[-2].value)
    assert usage.model == "small" and usage.provider is None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (1000, 100, 1100)
    assert (usage.cached_input_tokens, usage.reasoning_tokens) == (400, 30)
    assert usage.cache_write_input_tokens is None
    assert events[-2].name == "cost"
    # 600 fresh x $2 + 400 cached x $0.5 + 100 out x $8, per million tokens.
    assert abs(events[-2].value["usd"] - 0.0022) < 1e-12, events[-2].value

else:
    raise SystemExit(f"unknown scenario {scenario}")

print("ok")
