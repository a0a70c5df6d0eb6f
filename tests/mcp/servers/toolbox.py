"""A small MCP server for tower-adk's tests, written with the `mcp` package (2.x).

Run: `python toolbox.py` (stdio) or `python toolbox.py http PORT` (streamable HTTP on
127.0.0.1:PORT, path /mcp).

Its tools exercise what the third-party servers cannot: a call that never answers in
time, a process that dies in the middle of a call, progress with messages, protocol
errors, and structured output.
"""

import asyncio
import os
import sys

from mcp_types import CallToolResult, ImageContent, TextContent
from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

server = MCPServer("toolbox")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
def pid() -> str:
    """The server's process id, to tell one server process from the next."""
    return str(os.getpid())


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps `seconds`, then answers."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}s"


@server.tool()
def crash() -> str:
    """Kills the server process in the middle of the call: no answer ever comes."""
    sys.stdout.flush()
    os._exit(3)


@server.tool()
async def countdown(steps: int, ctx: Context) -> str:
    """Reports progress with a message at every step, then answers."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await asyncio.sleep(0.05)
    return "liftoff"


@server.tool()
def refuse(reason: str) -> str:
    """Fails as a tool (the result has isError set)."""
    raise ToolError(reason)


@server.tool()
def protocol_error() -> str:
    """Fails with a JSON-RPC error instead of a result."""
    raise MCPError(-32001, "the toolbox refuses at the protocol level")


@server.tool()
def shout(text: str) -> str:
    """Upper-cases `text`; an empty one is refused as invalid params (JSON-RPC -32602)."""
    if not text:
        raise MCPError(-32602, "text must not be empty")
    return text.upper()


class Forecast(BaseModel):
    city: str
    celsius: float


@server.tool()
def forecast(city: str) -> Forecast:
    """Structured output: a JSON object alongside its text form."""
    return Forecast(city=city, celsius=21.5)


@server.tool()
def measurements() -> CallToolResult:
    """Structured output only: no content blocks, just a JSON object."""
    return CallToolResult(content=[], structured_content={"readings": [1, 2, 3]})


@server.tool()
def mixed() -> CallToolResult:
    """Two text blocks around an image, which a text-only model cannot see."""
    return CallToolResult(
        content=[
            TextContent(type="text", text="before"),
            ImageContent(type="image", data="aGk=", mime_type="image/png"),
            TextContent(type="text", text="after"),
        ]
    )


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
