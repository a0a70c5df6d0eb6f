"""Calls the server's OpenAI-compatible route with the official `openai` package for a
reply that holds more than text.

    python openai_parts.py BASE_URL

Run by tests/server/protocols.rs against agent `painter`, whose model reasons ("I should
draw.", whole, with an opaque signature) and calls a tool that returns an image, then
reasons again ("Weigh it.", streamed), returns a PNG image itself and streams "Here it
is.". Prints what it saw; exits non-zero on the first assertion that fails.
"""

import sys

import openai

base_url = sys.argv[1]
client = openai.OpenAI(base_url=f"{base_url}/v1", api_key="unused", max_retries=0)
messages = [{"role": "user", "content": "Draw a dot."}]
SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS1wcm92aWRlcg=="
IMAGE = "[an image: image/png, 96 base64 bytes]"

reply = client.chat.completions.create(model="painter", messages=messages)
message = reply.choices[0].message
print("completion:", repr(message.content), message.model_extra)
# The image is said, not dropped; the reasoning is shown apart, as text only.
assert message.content == f"{IMAGE}\n\nHere it is.", message.content
assert message.model_extra["reasoning_content"] == "Weigh it.", message.model_extra
assert SIGNATURE not in reply.model_dump_json()

stream = client.chat.completions.create(model="painter", messages=messages, stream=True)
chunks = list(stream)
text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
reasoning = "".join(
    (c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
    for c in chunks
    if c.choices
)
print("streamed:", repr(text), "reasoning:", repr(reasoning))
assert text == f"Here it is.\n\n{IMAGE}", text
# Both turns' reasoning, a blank line apart: the first did not stream, the second did.
assert reasoning == "I should draw.\n\nWeigh it.", reasoning
assert all(SIGNATURE not in c.model_dump_json() for c in chunks)

print("ok")
