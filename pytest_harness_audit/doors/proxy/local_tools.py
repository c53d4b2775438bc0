"""In-process tools the proxy serves next to its upstreams' tools (workspace tools, send_message).

A local tool is a name, a description, a JSON schema and a plain callable. The callable gets
the call's arguments and returns text, JSON-compatible data or a ready ``CallToolResult``; it
may be sync (run in a thread of its own) or async. Raising marks the call as an error result.

A sync call that is cancelled (the client cancels or abandons it, the call timeout expires, the
proxy stops) is not left running behind the record: a ``cancellable`` handler is told to stop
(its ``cancel`` event is set) and the proxy waits for it to return; any other sync handler is
waited for up to :data:`STOP_WAIT_S` seconds. :class:`CallStopped` then says what the handler
returned, so the record shows what the call did up to then.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types

LocalToolHandler = Callable[..., Any | Awaitable[Any]]
#: Seconds a cancelled sync handler that is not ``cancellable`` is waited for.
STOP_WAIT_S = 5.0
#: Seconds a ``cancellable`` handler has to return once told to stop.
CANCELLABLE_STOP_WAIT_S = 10.0


class CallStopped(Exception):
    """A sync local call was cancelled; raised once its handler returned or the wait ran out.

    ``result`` is what the handler returned (its output up to the stop), or None when it was
    still running after the wait (``still_running``) or raised (``error``). ``cancelled`` is the
    cancellation to raise again once the call is recorded.
    """

    def __init__(
        self,
        cancelled: BaseException,
        result: types.CallToolResult | None,
        *,
        error: BaseException | None = None,
        still_running: float | None = None,
        stopped: bool = False,
    ) -> None:
        super().__init__("the call was cancelled")
        self.cancelled = cancelled
        self.result = result
        self.error = error
        #: Seconds waited for a handler that had not returned (None when it returned).
        self.still_running = still_running
        #: Whether the handler was told to stop (a ``cancellable`` handler).
        self.stopped = stopped


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
    #: Whether the sync ``handler`` takes a ``cancel`` keyword: a ``threading.Event`` set when
    #: the call is cancelled, after which the handler must stop and return soon.
    cancellable: bool = False
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
            value = await _run_in_thread(partial(self.handler, *args), self.cancellable)
            if inspect.isawaitable(value):
                value = await value
        return to_tool_result(value)


async def _run_in_thread(call: Callable[..., Any], cancellable: bool) -> Any:
    """``call()`` (``call(cancel=event)`` when cancellable) in a thread of its own.

    On cancellation the handler is told to stop (when it can be) and waited for, and
    :class:`CallStopped` is raised with what it returned.
    """
    stop = threading.Event()
    done = anyio.Event()
    token = anyio.lowlevel.current_token()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = call(cancel=stop) if cancellable else call()
        except BaseException as exc:
            box["error"] = exc
        finally:
            # the loop may be gone (the proxy stopped without waiting): nothing to wake
            with contextlib.suppress(RuntimeError):
                anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=work, name="harness-audit-local-tool", daemon=True).start()
    try:
        await done.wait()
    except anyio.get_cancelled_exc_class() as cancelled:
        stop.set()
        wait = CANCELLABLE_STOP_WAIT_S if cancellable else STOP_WAIT_S
        with anyio.CancelScope(shield=True), anyio.move_on_after(wait):
            await done.wait()
        if not done.is_set():
            raise CallStopped(cancelled, None, still_running=wait, stopped=cancellable) from None
        error = box.get("error")
        result = None if error is not None else _result_or_none(box.get("value"))
        raise CallStopped(cancelled, result, error=error, stopped=cancellable) from None
    if "error" in box:
        raise box["error"]
    return box["value"]


def _result_or_none(value: Any) -> types.CallToolResult | None:
    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if close is not None:
            close()  # a coroutine nobody will await: closed, not left to warn
        return None
    try:
        return to_tool_result(value)
    except (TypeError, ValueError):
        return None


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
