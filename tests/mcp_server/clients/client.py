"""Drives our MCP face with the Python MCP SDK's client (tests/mcp_server).

    python client.py http URL TOKEN STEPS_JSON      (TOKEN may be "-" for none)
    python client.py stdio STEPS_JSON COMMAND ARG...

STEPS_JSON is a list of steps, run in order on one session:
    {"op": "list"}                                  the tools' names and schemas
    {"op": "call", "tool": T, "arguments": {...}, "progress": true, "timeout": SECONDS}
        (past the timeout the SDK gives up on the call and sends `notifications/cancelled`)
    {"op": "sleep", "seconds": S}
    {"op": "resume", "of": I, "decisions": {...}?}  calls the resume tool with the
        arguments the interrupted result of step I gave (its decisions replaced if given)

Prints one JSON list: for each step {"tools", "schemas"}, or {"result", "progress"} with
the result as the SDK read it (camelCase) and the progress notifications received, in
order, or {"error": {"code", "message"}} for a JSON-RPC error, or {"gave_up": true} for a
call past its timeout.
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


async def call(session, tool, arguments, progress_wanted, timeout=None):
    progress = []

    async def on_progress(value, total, message):
        progress.append({"progress": value, "message": message})

    callback = on_progress if progress_wanted else None
    try:
        result = await session.call_tool(
            tool, arguments, read_timeout_seconds=timeout, progress_callback=callback
        )
    except MCPError as error:
        if timeout is not None and "timed out" in error.message.lower():
            return {"gave_up": True}
        return {"error": {"code": error.code, "message": error.message}, "progress": progress}
    except TimeoutError:
        return {"gave_up": True}
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {"result": dumped, "progress": progress}


async def run_steps(session, steps):
    await session.initialize()
    out = []
    for step in steps:
        if step["op"] == "list":
            listed = await session.list_tools()
            out.append({
                "tools": [tool.name for tool in listed.tools],
                "schemas": {tool.name: tool.input_schema for tool in listed.tools},
            })
        elif step["op"] == "call":
            arguments, progress = step.get("arguments"), step.get("progress")
            out.append(await call(session, step["tool"], arguments, progress, step.get("timeout")))
        elif step["op"] == "sleep":
            await anyio.sleep(step["seconds"])
            out.append({})
        elif step["op"] == "resume":
            resume = out[step["of"]]["result"]["structuredContent"]["resume"]
            arguments = dict(resume["arguments"])
            if "decisions" in step:
                arguments["decisions"] = step["decisions"]
            out.append(await call(session, resume["tool"], arguments, step.get("progress")))
        else:
            raise ValueError(f"unknown step {step!r}")
    return out


async def main():
    mode = sys.argv[1]
    if mode == "http":
        url, token, steps = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
        headers = {} if token == "-" else {"Authorization": f"Bearer {token}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    out = await run_steps(session, steps)
    elif mode == "stdio":
        steps = json.loads(sys.argv[2])
        server = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                out = await run_steps(session, steps)
    else:
        raise ValueError(f"unknown mode {mode!r}")
    print(json.dumps(out))


anyio.run(main)
