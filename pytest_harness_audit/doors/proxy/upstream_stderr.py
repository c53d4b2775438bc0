"""An upstream process's stderr, relayed line by line with the workspace's known secrets
redacted.

A stdio upstream used to inherit the proxy's stderr, so whatever it printed there (a server
logging its settings at start, a traceback quoting a token) reached the proxy's log, and the
test run's captured output, whole. Its stderr is now a socket the proxy reads
(:class:`StderrRelay`): each line goes through the proxy's redaction of its records and log
lines (the gate's known secrets, in any form it finds) before it is written where the upstream's
stderr went before, and a line that held a secret is recorded as a note,
``mcp__<server>__stderr``, with the redacted line as its output (:func:`screened_line`; at most
:data:`MAX_RECORDED` lines a process). The note is evidence, not judged: no model reads an
upstream's stderr, and whatever reads the proxy's (the agent process that started it) gets it
redacted; a server logging its settings at start is no act of the agent's.

Streaming, bounded: a line is written as soon as it ends; one longer than :data:`MAX_LINE`
characters is cut (at its last space when it has one, where no secret is cut in two); a line
the process leaves unfinished is written when its stderr closes. Writes go through a worker
thread, so a reader that does not drain the proxy's stderr stalls the upstream, as before, not
the proxy. A line the redaction fails on is withheld (one line saying so), never shown whole.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import socket
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import IO, Any, TextIO

import anyio
import anyio.abc

from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.doors.proxy.outgoing import request_tool_name
from pytest_harness_audit.gate.seam import Outcome

#: ``screen(server, line, record)``: the line as it may be shown (with ``record``, recorded
#: when it held a secret).
LineScreen = Callable[[str, str, bool], Awaitable[str]]
#: The category of the note a line that held a secret is recorded as.
STDERR_CATEGORY = "mcp"
#: A line is cut at this many characters (a process printing no newline is not buffered whole).
MAX_LINE = 64 * 1024
#: Lines holding a secret recorded per upstream process (later ones are redacted only).
MAX_RECORDED = 16
#: How long a closing upstream's stderr is read on for its last lines (a process it left
#: running may hold it open).
CLOSE_GRACE = 2.0
_CHUNK = 64 * 1024
_WITHHELD = (
    "harness-audit proxy: a line of upstream {name!r}'s stderr (withheld: it could not be redacted)"
)


async def screened_line(gate: GateLike[Any], server: str, line: str, record: bool = True) -> str:
    """``line`` of ``server``'s stderr as it may be shown: redacted by the gate's record scrub;
    when that changed it and ``record`` is set, recorded as an unjudged note
    (``mcp__<server>__stderr``, the redacted line as its output)."""
    scrub = getattr(getattr(getattr(gate, "chain", None), "builder", None), "scrub", None)
    redact = getattr(scrub, "text", None)
    if not callable(redact):
        return line  # a gate keeping no secrets (a test stub)
    shown = str(redact(line))
    if shown == line or not record:
        return shown

    async def printed(_decision: object) -> Outcome:
        return Outcome.success(shown)

    tool = request_tool_name(server, "stderr")
    run: Any = gate.run_async  # the real gate's takes the note's decision
    unjudged = getattr(gate, "unjudged", None)
    if callable(unjudged):
        note = unjudged(tool, STDERR_CATEGORY, {}, target=None, kind="note")
        await run(tool, {}, printed, decision=note)
    else:
        await run(tool, {}, printed)
    return shown


class StderrRelay:
    """Reads one upstream process's stderr and writes it on, screened (see the module doc)."""

    def __init__(self, name: str, destination: TextIO | None, screen: LineScreen) -> None:
        self.name = name
        self._screen = screen
        self._fd = _dup_fd(destination)
        self._recorded = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""
        self.done = anyio.Event()

    async def open(self, stack: AsyncExitStack) -> IO[str]:
        """The child's stderr (a socket's end), read until it closes by a task ``stack`` holds;
        the caller closes it once the child has it."""
        ours, theirs = socket.socketpair()
        theirs_file = os.fdopen(theirs.detach(), "w", encoding="utf-8")
        try:
            stream = await anyio.abc.UNIXSocketStream.from_socket(ours)
        except BaseException:
            theirs_file.close()
            ours.close()
            raise
        group = await stack.enter_async_context(anyio.create_task_group())

        async def finish() -> None:
            with anyio.move_on_after(CLOSE_GRACE):
                await self.done.wait()
            group.cancel_scope.cancel()

        stack.push_async_callback(finish)
        group.start_soon(self._pump, stream)
        stack.callback(theirs_file.close)  # after the transport, before ``finish``
        return theirs_file

    async def _pump(self, stream: anyio.abc.ByteReceiveStream) -> None:
        try:
            async with stream:
                while True:
                    try:
                        data = await stream.receive(_CHUNK)
                    except (anyio.EndOfStream, anyio.ClosedResourceError, OSError):
                        break
                    await self._feed(self._decoder.decode(data))
        finally:
            with anyio.CancelScope(shield=True):
                rest = self._pending + self._decoder.decode(b"", final=True)
                self._pending = ""
                if rest:
                    await self._emit(rest)
                if self._fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(self._fd)
                    self._fd = None
            self.done.set()

    async def _feed(self, text: str) -> None:
        self._pending += text
        while True:
            end = self._pending.find("\n")
            if end < 0 and len(self._pending) <= MAX_LINE:
                return
            if end < 0 or end >= MAX_LINE:
                cut = self._pending.rfind(" ", MAX_LINE // 2, MAX_LINE)
                end = cut if cut > 0 else MAX_LINE
                line, self._pending = self._pending[:end], self._pending[end:]
            else:
                line, self._pending = self._pending[: end + 1], self._pending[end + 1 :]
            await self._emit(line)

    async def _emit(self, line: str) -> None:
        newline = line.endswith("\n")
        body = line[:-1] if newline else line
        try:
            shown = await self._screen(self.name, body, self._recorded < MAX_RECORDED)
            self._recorded += shown != body
        except Exception:  # fail closed: never the line whole
            shown = _WITHHELD.format(name=self.name)
        fd = self._fd
        if fd is None:
            return  # the upstream's stderr went nowhere before either
        data = (shown + ("\n" if newline else "")).encode("utf-8", "replace")
        await anyio.to_thread.run_sync(_write_all, fd, data, abandon_on_cancel=True)


def _dup_fd(destination: TextIO | None) -> int | None:
    """A descriptor of its own on ``destination`` (as the child inherited one before), or
    ``None`` when it has none (the child's stderr went to the null device then)."""
    if destination is None:
        return None
    try:
        destination.flush()
        return os.dup(destination.fileno())
    except (AttributeError, OSError, ValueError):
        return None


def _write_all(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(fd, data) :]
