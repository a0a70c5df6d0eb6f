"""Makes the files of this folder from Google's js-genai recordings (see README.md).

    python3 make_recorded.py /path/to/js-genai/test/system/recordings
"""

import json
import sys

RECORDINGS = sys.argv[1] if len(sys.argv) > 1 else "recordings"


def load(name):
    with open(f"{RECORDINGS}/{name}.json") as f:
        return json.load(f)["interactions"]


def sse(path, segments):
    with open(path, "wb") as f:
        for segment in segments:
            f.write(b"data: " + json.dumps(segment, ensure_ascii=False).encode() + b"\r\n\r\n")


loop = load("AFC_Streaming_Tests_chat_stream_AFC_enabled_AFC_max_calls_exceeded_Google_AI_"
            "can_continue_after_max_calls_exceeded")
for turn, interaction in enumerate(loop, start=1):
    sse(f"tool-loop-{turn}.sse", interaction["response"]["bodySegments"])
with open("tool-loop-requests.jsonl", "w") as f:
    for interaction in loop:
        f.write(json.dumps(interaction["request"]["bodySegments"][0], ensure_ascii=False) + "\n")
image = load("Client_Tests_generateContentStream_ML_Dev_should_stream_generate_content_with_image_output")
sse("image-answer.sse", image[0]["response"]["bodySegments"])
thinking = load("Client_Tests_test_thinking_generate_content_should_return_thought_field")
with open("thought-summary.json", "w") as f:
    json.dump(thinking[0]["response"]["bodySegments"][0], f, ensure_ascii=False)
error = load("Chats_Tests_sendMessage_Send_message_stream_with_error")
with open("not-found.json", "w") as f:
    json.dump(error[0]["response"]["bodySegments"][0], f, ensure_ascii=False)

# The composed thinking stream (see README.md).
thought = thinking[0]["response"]["bodySegments"][0]["candidates"][0]["content"]["parts"][0]["text"]
signature = loop[2]["response"]["bodySegments"][0]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
cut = thought.rfind(" ", 0, len(thought) // 2)
reply = "zi77aPQDsqLV7w_tk62YBQ"


def chunk(parts, usage, finish=None):
    candidate = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash",
            "responseId": reply}


details = [{"modality": "TEXT", "tokenCount": 17}]
early = {"promptTokenCount": 17, "promptTokensDetails": details, "thoughtsTokenCount": 19,
         "totalTokenCount": 36}
final = {"promptTokenCount": 17, "cachedContentTokenCount": 8, "candidatesTokenCount": 14,
         "promptTokensDetails": details, "thoughtsTokenCount": 19, "totalTokenCount": 50}
sse("thought-stream.sse", [
    chunk([{"text": thought[:cut], "thought": True}], early),
    chunk([{"text": thought[cut:], "thought": True}], early),
    chunk([{"text": "The sum of the natural numbers from 1 to 100 is "}], early),
    chunk([{"text": "5050."}], early),
    chunk([{"text": "", "thoughtSignature": signature}], final, "STOP"),
])
