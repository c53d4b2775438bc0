"""Serve the proxy over stdin/stdout (newline-delimited JSON-RPC), robust to bad input.

The SDK's stdio transport drops a line it cannot parse without answering. A proxy in front of
arbitrary agents must instead answer with a JSON-RPC error (``-32700`` parse error or
``-32600`` invalid request, echoing the id when one can be read) and keep serving.

While serving the real process streams, fd 1 is pointed at stderr and fd 0 at the null device,
so a stray ``print`` or a child process can never corrupt the wire.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import IO, Any, Protocol

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.lowlevel.server import Server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from pytest_harness_audit.doors.proxy.envelope import (
    CALL_METHODS,
    InFlightIds,
    envelope_error,
    valid_id,
    wire_line,
)

_WRITE_BUFFER = 64
# Longest accepted line; MCP messages can carry whole files.
_MAX_LINE = 64 * 1024 * 1024


def parse_line(line: bytes) -> SessionMessage | types.JSONRPCError | None:
    """Parse one wire line: a message, the error to answer with, or None for a blank line."""
    if not line.strip():
        return None
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        served = _with_lone_surrogates(line)
        if served is None:
            return _error_for(line, exc)
        message = served
    if isinstance(message, types.JSONRPCNotification):
        # The notification model ignores unknown keys: a request with a null or fractional
        # id lands here, and would go unanswered.
        refusal = envelope_error(json.loads(line))
        if refusal is not None:
            return refusal
    return SessionMessage(message)


def _with_lone_surrogates(line: bytes) -> types.JSONRPCMessage | None:
    """The call of a line whose only fault is a string that is not well-formed Unicode (an
    escaped lone surrogate, ``"\\ud800"``: valid JSON the SDK's parser refuses), or None.

    A call (:data:`CALL_METHODS`) is the client's all the same: it is served, so that it is gated
    and recorded like any other (and fails where its text cannot go: an upstream is never sent
    it, :func:`~.envelope.ill_formed_text`), never answered unrecorded. Other requests are
    answered with their error here as before.
    """
    if b"\\u" not in line:
        return None
    try:
        document = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict) or document.get("method") not in CALL_METHODS:
        return None
    try:
        return types.jsonrpc_message_adapter.validate_python(document, by_name=False)
    except (ValidationError, RecursionError):
        return None


def _error_for(line: bytes, exc: ValidationError) -> types.JSONRPCError:
    try:
        document: Any = json.loads(line)
    except ValueError as parse_error:
        detail = str(parse_error).split(":")[0]
        return _error(None, types.PARSE_ERROR, f"Parse error: {detail}")
    except RecursionError:
        # a line of a few thousand nested brackets: still a line to answer, not a crash
        return _error(None, types.PARSE_ERROR, "Parse error: nested too deeply")
    refusal = envelope_error(document)
    if refusal is not None:
        return refusal
    request_id = document.get("id")
    if not valid_id(request_id):
        request_id = None
    first = exc.errors()[0] if exc.errors() else None
    reason = first["msg"] if first else "not a JSON-RPC 2.0 message"
    return _error(request_id, types.INVALID_REQUEST, f"Invalid Request: {reason}")


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


#: What serves the messages read off the wire: it reads the parsed messages and writes answers
#: (and requests of its own) until either side is done.
WireRunner = Callable[
    [MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]],
    Awaitable[None],
]


async def serve_stdio(
    server: Server[Any],
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> None:
    """Serve ``server`` until stdin ends. Without explicit streams, claims the process's stdio."""

    async def run(
        incoming: MemoryObjectReceiveStream[SessionMessage | Exception],
        outgoing: MemoryObjectSendStream[SessionMessage],
    ) -> None:
        await server.run(incoming, outgoing, server.create_initialization_options())

    await serve_stdio_with(run, stdin=stdin, stdout=stdout)


async def serve_stdio_with(
    run: WireRunner, *, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None
) -> None:
    """Serve the wire with ``run`` (as :func:`serve_stdio` serves a server): bad lines are
    answered here, every other message goes to ``run``."""
    if stdin is not None and stdout is not None:
        await _serve(run, stdin, stdout)
        return
    with _claimed_process_stdio() as (wire_in, wire_out):
        await _serve(run, wire_in, wire_out)


async def _serve(run: WireRunner, wire_in: IO[bytes], wire_out: IO[bytes]) -> None:
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](_WRITE_BUFFER)
    error_send = write_send.clone()
    answers = _Answers()
    with _wire(wire_in, wire_out) as (open_reader, open_writer):
        reader, writer = await open_reader(), await open_writer()
        async with anyio.create_task_group() as group:
            reader_scope = anyio.CancelScope()
            group.start_soon(_read_lines, reader, read_send, error_send, reader_scope, answers)
            group.start_soon(_write_lines, writer, write_receive, answers)
            await run(read_receive, write_send)
            # The client may still be connected (the server stopped on its own): stop reading.
            reader_scope.cancel()


class _Answers:
    """Which client requests await an answer, and which answers are the wire's own refusals
    (a refusal of a reused id must not close the request that holds that id)."""

    def __init__(self) -> None:
        self.in_flight = InFlightIds()
        self.refusals: set[int] = set()

    def refusal(self, parsed: SessionMessage) -> SessionMessage | None:
        """The refusal to answer ``parsed`` with instead of serving it, if any."""
        message = parsed.message
        if isinstance(message, types.JSONRPCNotification):
            if message.method == "notifications/cancelled" and message.params:
                # A cancelled request may go unanswered; the client has given its id up.
                cancelled = message.params.get("requestId")
                if valid_id(cancelled):
                    self.in_flight.end(cancelled)
            return None
        if not isinstance(message, types.JSONRPCRequest):
            return None
        error = self.in_flight.begin(message.id)
        if error is None:
            return None
        refusal = SessionMessage(error)
        self.refusals.add(id(refusal))
        return refusal

    def written(self, sent: SessionMessage) -> None:
        """Note an outgoing message: an answer closes its request."""
        if id(sent) in self.refusals:
            self.refusals.discard(id(sent))
        elif isinstance(sent.message, types.JSONRPCResponse | types.JSONRPCError):
            self.in_flight.end(sent.message.id)


async def _read_lines(
    reader: _LineReader,
    messages: MemoryObjectSendStream[SessionMessage | Exception],
    errors: MemoryObjectSendStream[SessionMessage],
    scope: anyio.CancelScope,
    answers: _Answers,
) -> None:
    with scope:
        async with messages, errors:
            while True:
                try:
                    line = await reader.readline()
                except ValueError:
                    # asyncio's reader refuses a line over its limit (and skips it).
                    too_big = f"Parse error: message larger than {_MAX_LINE} bytes"
                    await errors.send(SessionMessage(_error(None, types.PARSE_ERROR, too_big)))
                    continue
                if not line:
                    return
                parsed = parse_line(line)
                if isinstance(parsed, types.JSONRPCError):
                    await errors.send(SessionMessage(parsed))
                elif parsed is not None:
                    refusal = answers.refusal(parsed)
                    if refusal is not None:
                        await errors.send(refusal)
                        continue
                    try:
                        await messages.send(parsed)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return


async def _write_lines(
    writer: _LineWriter, outgoing: MemoryObjectReceiveStream[SessionMessage], answers: _Answers
) -> None:
    async with outgoing:
        async for session_message in outgoing:
            answers.written(session_message)
            await writer.write(wire_line(session_message.message))


# -- the wire: asyncio pipes when possible, worker threads otherwise --------------------------
#
# Pipe transports avoid a thread hand-off per message in each direction (a measurable part of
# the proxy's added latency). They need pipes, sockets or ttys on the asyncio backend; a
# regular file, or another event loop, falls back to blocking I/O in worker threads.


class _LineReader(Protocol):
    async def readline(self) -> bytes: ...


class _LineWriter(Protocol):
    async def write(self, data: bytes) -> None: ...


class _ThreadReader:
    def __init__(self, wire_in: IO[bytes]) -> None:
        self._wire_in = wire_in

    async def readline(self) -> bytes:
        return await anyio.to_thread.run_sync(self._wire_in.readline, abandon_on_cancel=True)


class _ThreadWriter:
    def __init__(self, wire_out: IO[bytes]) -> None:
        self._wire_out = wire_out

    async def write(self, data: bytes) -> None:
        await anyio.to_thread.run_sync(self._write_flush, data)

    def _write_flush(self, data: bytes) -> None:
        self._wire_out.write(data)
        self._wire_out.flush()


class _PipeWriter:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()


@contextmanager
def _wire(
    wire_in: IO[bytes], wire_out: IO[bytes]
) -> Iterator[tuple[Callable[[], Awaitable[_LineReader]], Callable[[], Awaitable[_LineWriter]]]]:
    """Factories for the line reader and writer; undoes what the pipes changed on exit."""
    transports: list[asyncio.BaseTransport] = []
    blocking: dict[int, bool] = {}

    def remember(stream: IO[bytes]) -> None:
        with suppress(OSError, ValueError):
            blocking.setdefault(stream.fileno(), os.get_blocking(stream.fileno()))

    async def open_reader() -> _LineReader:
        if _on_asyncio():
            remember(wire_in)
            loop = asyncio.get_running_loop()
            reader = asyncio.StreamReader(limit=_MAX_LINE)
            try:
                transport, _ = await loop.connect_read_pipe(
                    lambda: asyncio.StreamReaderProtocol(reader), wire_in
                )
            except (ValueError, OSError):
                pass
            else:
                transports.append(transport)
                return reader
        return _ThreadReader(wire_in)

    async def open_writer() -> _LineWriter:
        if _on_asyncio():
            remember(wire_out)
            loop = asyncio.get_running_loop()
            try:
                transport, protocol = await loop.connect_write_pipe(
                    asyncio.streams.FlowControlMixin, wire_out
                )
            except (ValueError, OSError):
                pass
            else:
                transports.append(transport)
                return _PipeWriter(asyncio.StreamWriter(transport, protocol, None, loop))
        return _ThreadWriter(wire_out)

    try:
        yield open_reader, open_writer
    finally:
        for transport in transports:
            transport.close()
        # The pipe transports switch the descriptors to non-blocking; a shell sharing them
        # (a terminal, an inherited pipe) must get them back as they were.
        for fd, was_blocking in blocking.items():
            with suppress(OSError):
                os.set_blocking(fd, was_blocking)


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


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
