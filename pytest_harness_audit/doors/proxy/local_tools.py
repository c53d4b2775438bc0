"""In-process tools the proxy serves next to its upstreams' tools (workspace tools, send_message).

A local tool is a name, a description, a JSON schema and a plain callable. The callable gets
the call's arguments and returns text, JSON-compatible data or a ready ``CallToolResult``; it
may be sync (run in a worker thread) or async. Raising marks the call as an error result.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
import mcp_types as types

LocalToolHandler = Callable[[dict[str, Any]], Any | Awaitable[Any]]


@dataclass(frozen=True)
class LocalTool:
    """A tool implemented in the proxy's own process.

    ``self_recording`` is for handlers that already pass through the gate themselves (for
    example a harness method that gates and records the call): the proxy then neither asks the
    gate nor records, so the call is not counted twice.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: LocalToolHandler
    self_recording: bool = False
    #: Whether ``handler`` takes the request's ``_meta`` (or None) as a second argument.
    takes_meta: bool = False
    annotations: types.ToolAnnotations | None = None
    title: str | None = field(default=None)
    #: The JSON schema of the handler's structured result, listed as ``outputSchema``.
    output_schema: Mapping[str, Any] | None = None

    def definition(self) -> types.Tool:
        """The MCP tool definition listed by ``tools/list``."""
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=dict(self.input_schema),
            output_schema=dict(self.output_schema) if self.output_schema is not None else None,
            annotations=self.annotations,
        )

    async def invoke(
        self, arguments: dict[str, Any], meta: Mapping[str, Any] | None = None
    ) -> types.CallToolResult:
        """Run the handler and shape what it returns into a tool result."""
        args: tuple[Any, ...] = (arguments, meta) if self.takes_meta else (arguments,)
        if inspect.iscoroutinefunction(self.handler):
            value = await self.handler(*args)
        else:
            value = await anyio.to_thread.run_sync(self.handler, *args, abandon_on_cancel=True)
            if inspect.isawaitable(value):
                value = await value
        return to_tool_result(value)


def to_tool_result(value: Any) -> types.CallToolResult:
    """Turn a handler's return value into a ``CallToolResult``.

    Text stays text; a mapping becomes JSON text plus ``structuredContent``; other JSON data
    becomes JSON text; ``None`` gives an empty result.
    """
    if isinstance(value, types.CallToolResult):
        return value
    if value is None:
        return types.CallToolResult(content=[])
    if isinstance(value, str):
        return types.CallToolResult(content=[types.TextContent(text=value)])
    text = json.dumps(value, ensure_ascii=False, default=str)
    structured = dict(value) if isinstance(value, Mapping) else None
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured
    )


def error_result(message: str) -> types.CallToolResult:
    """A tool result the agent reads as a failed call."""
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def result_text(result: types.CallToolResult) -> str:
    """The text parts of a tool result joined by newlines (for error messages)."""
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
