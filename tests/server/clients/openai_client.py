"""Calls the server's OpenAI-compatible routes with the official `openai` package.

    python openai_client.py BASE_URL API_KEY

Run by tests/server/protocols.rs against agents it sets up: `weather` (calls a tool,
then streams "It is sunny."), `bank` (stops at an interrupt). Prints what it saw; exits
non-zero on the first assertion that fails.
"""

import sys

import openai

base_url, api_key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=f"{base_url}/v1", api_key=api_key, max_retries=0)

models = client.models.list()
ids = sorted(model.id for model in models.data)
print("models:", ids)
assert ids == ["bank", "weather"], ids
assert all(m.object == "model" and m.owned_by == "tower-adk" for m in models.data)

messages = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "Weather in Oslo?"},
]
reply = client.chat.completions.create(model="weather", messages=messages)
print("completion:", reply.choices[0].message.content, reply.choices[0].finish_reason)
assert reply.object == "chat.completion"
assert reply.model == "weather"
assert reply.choices[0].message.role == "assistant"
assert reply.choices[0].message.content == "It is sunny."
assert reply.choices[0].finish_reason == "stop"
assert reply.usage is not None and reply.usage.total_tokens == 0

stream = client.chat.completions.create(
    model="weather", messages=messages, stream=True, stream_options={"include_usage": True}
)
chunks = list(stream)
text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
finish = [c.choices[0].finish_reason for c in chunks if c.choices]
print("streamed:", repr(text), "in", len(chunks), "chunks, finish reasons", finish)
assert all(c.object == "chat.completion.chunk" for c in chunks)
assert len({c.id for c in chunks}) == 1
assert chunks[0].choices[0].delta.role == "assistant"
assert text == "It is sunny.", text
assert finish[-1] == "stop" and all(f is None for f in finish[:-1]), finish
assert chunks[-1].choices == [] and chunks[-1].usage is not None

stopped = client.chat.completions.create(model="bank", messages=[{"role": "user", "content": "pay"}])
extension = stopped.model_extra["adk_interrupt"]
print("interrupted:", stopped.choices[0].message.content, extension)
assert stopped.choices[0].finish_reason == "stop"
assert "agent:bank/tool:c1" in stopped.choices[0].message.content
assert extension["interrupts"][0]["id"] == "agent:bank/tool:c1"
assert extension["checkpoint"]

try:
    client.chat.completions.create(model="nobody", messages=messages)
    raise AssertionError("an unknown model was answered")
except openai.NotFoundError as error:
    print("unknown model:", error.status_code, error.code)
    assert error.code == "model_not_found"

wrong = openai.OpenAI(base_url=f"{base_url}/v1", api_key="wrong-key", max_retries=0)
try:
    wrong.models.list()
    raise AssertionError("a wrong key was let in")
except openai.AuthenticationError as error:
    print("wrong key:", error.status_code, error.code, error.type)
    assert error.code == "invalid_api_key"
    assert error.type == "authentication_error"

print("ok")
