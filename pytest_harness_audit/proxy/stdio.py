"""Serve the proxy over stdin/stdout (newline-delimited JSON-RPC), robust to bad input.

The SDK's stdio transport drops a line it cannot parse without answering. A proxy in front of
arbitrary agents must instead answer with a JSON-RPC error (``-32700`` parse error or
``-32600`` invalid request, echoing the id when one can be read) and keep serving.

While serving the real process streams, fd 1 is pointed at stderr and fd 0 at the null device,
so a stray ``print`` or a child process can never corrupt the wire.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.lowlevel.server import Server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

_WRITE_BUFFER = 64


def parse_line(line: bytes) -> SessionMessage | types.JSONRPCError | None:
    """Parse one wire line: a message, the error to answer with, or None for a blank line."""
    if not line.strip():
        return None
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValidationError as exc:
        return _error_for(line, exc)


def _error_for(line: bytes, exc: ValidationError) -> types.JSONRPCError:
    try:
        document: Any = json.loads(line)
    except ValueError as parse_error:
        detail = str(parse_error).split(":")[0]
        return _error(None, types.PARSE_ERROR, f"Parse error: {detail}")
    if isinstance(document, list):
        return _error(None, types.INVALID_REQUEST, "Invalid Request: batches are not supported")
    request_id = document.get("id") if isinstance(document, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    first = exc.errors()[0] if exc.errors() else None
    reason = first["msg"] if first else "not a JSON-RPC 2.0 message"
    return _error(request_id, types.INVALID_REQUEST, f"Invalid Request: {reason}")


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


async def serve_stdio(
    server: Server[Any],
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> None:
    """Serve ``server`` until stdin ends. Without explicit streams, claims the process's stdio."""
    if stdin is not None and stdout is not None:
        await _serve(server, stdin, stdout)
        return
    with _claimed_process_stdio() as (wire_in, wire_out):
        await _serve(server, wire_in, wire_out)


async def _serve(server: Server[Any], wire_in: IO[bytes], wire_out: IO[bytes]) -> None:
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](_WRITE_BUFFER)
    error_send = write_send.clone()
    async with anyio.create_task_group() as group:
        reader_scope = anyio.CancelScope()
        group.start_soon(_read_lines, wire_in, read_send, error_send, reader_scope)
        group.start_soon(_write_lines, wire_out, write_receive)
        await server.run(read_receive, write_send, server.create_initialization_options())
        # The client may still be connected (the server stopped on its own): stop reading.
        reader_scope.cancel()


async def _read_lines(
    wire_in: IO[bytes],
    messages: MemoryObjectSendStream[SessionMessage | Exception],
    errors: MemoryObjectSendStream[SessionMessage],
    scope: anyio.CancelScope,
) -> None:
    with scope:
        async with messages, errors:
            while True:
                line = await anyio.to_thread.run_sync(wire_in.readline, abandon_on_cancel=True)
                if not line:
                    return
                parsed = parse_line(line)
                if isinstance(parsed, types.JSONRPCError):
                    await errors.send(SessionMessage(parsed))
                elif parsed is not None:
                    try:
                        await messages.send(parsed)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return


async def _write_lines(
    wire_out: IO[bytes], outgoing: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    async with outgoing:
        async for session_message in outgoing:
            payload = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
            data = payload.encode("utf-8") + b"\n"
            await anyio.to_thread.run_sync(_write_flush, wire_out, data)


def _write_flush(wire_out: IO[bytes], data: bytes) -> None:
    wire_out.write(data)
    wire_out.flush()


@contextmanager
def _claimed_process_stdio() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """Move the wire to private descriptors; fd 0 reads nothing, fd 1 goes to stderr."""
    sys.stdout.flush()
    wire_in_fd, wire_out_fd = os.dup(0), os.dup(1)
    null_fd = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null_fd, 0)
        os.dup2(2, 1)
    finally:
        os.close(null_fd)
    # closefd=False for the reader: a worker thread may still block in readline at exit,
    # and closing a buffered file under it would wait on its lock.
    wire_in = os.fdopen(wire_in_fd, "rb", closefd=False)
    wire_out = os.fdopen(wire_out_fd, "wb")
    try:
        yield wire_in, wire_out
    finally:
        sys.stdout.flush()
        os.dup2(wire_in_fd, 0)
        os.dup2(wire_out_fd, 1)
        wire_out.close()
