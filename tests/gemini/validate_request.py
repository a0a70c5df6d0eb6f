"""Validates generateContent request bodies against Google's own SDK, `google-genai`.

Reads JSON lines on stdin, one request body each (the REST form `GeminiModel` sends:
`contents`, `systemInstruction`, `tools`, `toolConfig`, `generationConfig`), and for each:

1. parses every piece with the SDK's published pydantic types, which forbid unknown
   fields (`types.Content` for each content and the system instruction, `types.Tool`,
   `types.ToolConfig`, `types.GenerationConfig`), so a misspelt or misplaced field fails;
2. gives the parsed values to the SDK's own request serialiser for the Gemini API
   (`models._GenerateContentParameters_to_mldev`, what `client.models.generate_content`
   sends) and compares its body with ours: the same fields, the same values. Bytes
   (`data`, `thoughtSignature`) are compared decoded: the SDK writes URL-safe base64, the
   API reads either alphabet, and we send back exactly the string the API gave us; keys
   are compared in camelCase, as the API reads both.

Prints one line per body, `ok` or `error: ...`, and exits 1 if any body failed.
"""

import base64
import json
import sys

from google.genai import _api_client, _common, models, types

TOP_LEVEL = {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
BYTES_KEYS = {"data", "thoughtSignature"}


def camel(key):
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def normalise(value, key=None):
    """Key order dropped, keys in camelCase (the SDK writes some nested objects in
    snake_case, which the API reads as well), base64 decoded, an empty
    `generationConfig` dropped: two equivalent bodies compare equal."""
    if isinstance(value, dict):
        value = {camel(k): normalise(v, camel(k)) for k, v in value.items()}
        if key is None and value.get("generationConfig") == {}:
            del value["generationConfig"]
        return value
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if key in BYTES_KEYS and isinstance(value, str):
        padded = value + "=" * (-len(value) % 4)
        return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    return value


def sdk_body(body):
    """The body the SDK itself builds from our body's pieces, parsed by its types."""
    unknown = set(body) - TOP_LEVEL
    if unknown:
        raise ValueError(f"fields a generateContent request does not have: {sorted(unknown)}")
    contents = [types.Content.model_validate_json(json.dumps(c)) for c in body["contents"]]
    for content in contents:
        if content.role not in ("user", "model"):
            raise ValueError(f"a content's role must be user or model, not {content.role!r}")
    config = {}
    if "systemInstruction" in body:
        config["system_instruction"] = types.Content.model_validate_json(
            json.dumps(body["systemInstruction"]))
    if "tools" in body:
        config["tools"] = [types.Tool.model_validate_json(json.dumps(t)) for t in body["tools"]]
    if "toolConfig" in body:
        config["tool_config"] = types.ToolConfig.model_validate_json(json.dumps(body["toolConfig"]))
    if "generationConfig" in body:
        generation = types.GenerationConfig.model_validate_json(json.dumps(body["generationConfig"]))
        config.update(generation.model_dump(exclude_none=True))
    parameters = types._GenerateContentParameters(
        model="models/gemini-test", contents=contents,
        config=types.GenerateContentConfig(**config))
    client = _api_client.BaseApiClient(api_key="validation-only")
    built = models._GenerateContentParameters_to_mldev(client, parameters)
    built.pop("_url", None)
    built = _common.convert_to_dict(built)
    return json.loads(json.dumps(_common.encode_unserializable_types(built)))


def main():
    failed = False
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            ours = json.loads(line)
            theirs = sdk_body(ours)
            if normalise(ours) != normalise(theirs):
                raise ValueError(
                    f"the SDK builds another body:\n ours: {json.dumps(ours)[:3000]}\n sdk:  "
                    f"{json.dumps(theirs)[:3000]}")
            print("ok", flush=True)
        except Exception as error:  # every failure is reported, one line per body
            failed = True
            print("error: " + " ".join(str(error).split("\n")), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
