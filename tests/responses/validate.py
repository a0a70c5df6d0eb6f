"""Validates request bodies against the official OpenAI Python SDK's published types.

    python validate.py BODIES.json

BODIES.json is a JSON array of Responses API request bodies. Each is checked against
`openai.types.responses.ResponseCreateParams` (the TypedDicts the SDK's
`client.responses.create(...)` takes), with pydantic, unknown keys refused at every level.
Prints one line per body; exits 1 if any body does not validate.
"""

import json
import sys

import openai
from openai.types.responses import response_create_params
from pydantic import ConfigDict, TypeAdapter, ValidationError

PARAMS = TypeAdapter(
    response_create_params.ResponseCreateParams,
    config=ConfigDict(extra="forbid"),
)


def main() -> int:
    bodies = json.load(open(sys.argv[1]))
    failed = 0
    for index, body in enumerate(bodies):
        try:
            PARAMS.validate_python(body, strict=True)
            print(f"body {index}: valid (openai {openai.__version__})")
        except ValidationError as error:
            failed += 1
            # Every branch of the SDK's unions is reported; the first errors tell enough.
            head = "\n".join(str(error).splitlines()[:40])
            print(f"body {index}: INVALID against openai {openai.__version__}:\n{head}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
