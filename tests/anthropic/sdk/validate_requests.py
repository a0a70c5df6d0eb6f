"""Validates request bodies against the published types of Anthropic's Python SDK.

    python validate_requests.py BODIES.json

BODIES.json holds a JSON list of request bodies. Each is checked against
`anthropic.types.message_create_params.MessageCreateParamsStreaming` (or
`...NonStreaming`), the TypedDicts that `client.messages.create(...)` takes, strictly and
all the way down: a field the SDK does not declare is an error, as is a missing required
field, a literal that is not one of the declared ones, or a value of another type. (The
SDK's own runtime does not check: it sends what it is given. pydantic's TypeAdapter would
not either, as it validates `Iterable[...]` fields lazily, so this walks the annotations
itself.) Prints one line per body; exits 1 if any is invalid.
"""

import collections.abc
import json
import sys
import typing

import anthropic
import typing_extensions
from anthropic.types import message_create_params as params


def depth(error):
    """How far into the value an error is."""
    return len(error.split(": ", 1)[0])


def required_keys(kind, hints):
    """A TypedDict's required keys. The SDK's modules postpone their annotations, so
    `Required[...]` is read from the hints here (`__required_keys__` misses it)."""
    required = set()
    for key, hint in hints.items():
        origin = typing_extensions.get_origin(hint)
        if origin is typing_extensions.Required:
            required.add(key)
        elif key in kind.__required_keys__ and origin is not typing_extensions.NotRequired:
            required.add(key)
    return required


def check(value, kind, path, errors):
    """Appends to `errors` what is wrong with `value` as a `kind`."""
    origin = typing_extensions.get_origin(kind)
    args = typing_extensions.get_args(kind)
    if kind is typing.Any or kind is object:
        return
    if origin in (typing.Annotated, typing_extensions.Annotated):
        return check(value, args[0], path, errors)
    if origin in (typing_extensions.Required, typing_extensions.NotRequired):
        return check(value, args[0], path, errors)
    if origin is typing.Union or (origin is not None and str(origin) == "types.UnionType"):
        tried = []
        for option in args:
            found = []
            check(value, option, path, found)
            if not found:
                return
            tried.append(found)
        # The closest option: the one that got furthest into the value.
        errors.extend(min(tried, key=lambda found: (-max(map(depth, found)), len(found))))
        return
    if origin in (typing.Literal, typing_extensions.Literal):
        if value not in args:
            errors.append(f"{path}: {value!r} is not one of {args}")
        return
    if typing_extensions.is_typeddict(kind):
        if not isinstance(value, dict):
            errors.append(f"{path}: expected an object ({kind.__name__}), got {value!r}")
            return
        hints = typing_extensions.get_type_hints(kind, include_extras=True)
        for key in value:
            if key not in hints:
                errors.append(f"{path}.{key}: not a field of {kind.__name__}")
        for key in required_keys(kind, hints):
            if key not in value:
                errors.append(f"{path}.{key}: required by {kind.__name__}")
        for key, item in value.items():
            if key in hints:
                check(item, hints[key], f"{path}.{key}", errors)
        return
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence, typing.List):
        if not isinstance(value, list):
            errors.append(f"{path}: expected a list, got {value!r}")
            return
        for at, item in enumerate(value):
            check(item, args[0] if args else typing.Any, f"{path}[{at}]", errors)
        return
    if origin in (dict, collections.abc.Mapping, typing.Dict):
        if not isinstance(value, dict):
            errors.append(f"{path}: expected an object, got {value!r}")
        return
    if kind is type(None):
        if value is not None:
            errors.append(f"{path}: expected null, got {value!r}")
        return
    if kind is bool:
        if not isinstance(value, bool):
            errors.append(f"{path}: expected a boolean, got {value!r}")
        return
    if kind in (int, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            errors.append(f"{path}: expected a number, got {value!r}")
        return
    if kind is str:
        if not isinstance(value, str):
            errors.append(f"{path}: expected a string, got {value!r}")
        return
    if isinstance(kind, type) and issubclass(kind, dict):
        if not isinstance(value, dict):
            errors.append(f"{path}: expected an object, got {value!r}")
        return
    errors.append(f"{path}: cannot check a value against {kind!r}")


def main() -> int:
    bodies = json.load(open(sys.argv[1]))
    failed = 0
    for at, body in enumerate(bodies):
        kind = (
            params.MessageCreateParamsStreaming
            if body.get("stream")
            else params.MessageCreateParamsNonStreaming
        )
        errors = []
        check(body, kind, "body", errors)
        if errors:
            failed += 1
            print(f"body {at}: INVALID")
            for error in errors:
                print(f"  {error}")
        else:
            print(f"body {at}: valid for anthropic {anthropic.__version__}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
