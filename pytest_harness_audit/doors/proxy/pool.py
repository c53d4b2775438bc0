"""Start every upstream at once and keep each one open in its own task.

The task also reopens an HTTP upstream when a call finds its connection unusable (the server
was unreachable or forgot the session), attaching the new session to the same ``Upstream``.

Starting concurrently makes a proxy with several upstreams as quick to start as its slowest
upstream. A task per upstream also keeps each transport's task groups in the task that opened
them, which the SDK's transports require.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import TextIO

import anyio
import anyio.abc

from pytest_harness_audit.doors.proxy.config import UpstreamSpec
from pytest_harness_audit.doors.proxy.errors import ProxyError, UpstreamStartError
from pytest_harness_audit.doors.proxy.reachability import first_of
from pytest_harness_audit.doors.proxy.upstream import (
    ClientRequestSink,
    NotificationSink,
    ReportLine,
    Upstream,
    describe_error,
    open_upstream,
)
from pytest_harness_audit.doors.proxy.upstream_stderr import LineScreen


class UpstreamPool:
    """``async with UpstreamPool(specs, ...) as upstreams`` — connected, in ``specs`` order.

    If any upstream fails to start, the others are stopped and the first failure (in
    configuration order) is raised.
    """

    def __init__(
        self,
        specs: Sequence[UpstreamSpec],
        *,
        on_notification: NotificationSink,
        report: ReportLine,
        stderr: TextIO | None,
        connect_timeout: float,
        on_client_request: ClientRequestSink | None = None,
        screen_stderr: LineScreen | None = None,
    ) -> None:
        self._specs = list(specs)
        self._screen_stderr = screen_stderr
        self._on_notification = on_notification
        self._report = report
        self._stderr = stderr
        self._connect_timeout = connect_timeout
        self._on_client_request = on_client_request
        self._group: anyio.abc.TaskGroup | None = None
        self._stop = anyio.Event()

    async def __aenter__(self) -> list[Upstream]:
        slots: list[Upstream | UpstreamStartError | None] = [None] * len(self._specs)
        settled = [anyio.Event() for _ in self._specs]
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        for index, spec in enumerate(self._specs):
            self._group.start_soon(self._hold, spec, index, slots, settled[index])
        for event in settled:
            await event.wait()
        failures = [slot for slot in slots if isinstance(slot, UpstreamStartError)]
        if failures:
            await self._close()
            raise failures[0]
        return [slot for slot in slots if isinstance(slot, Upstream)]

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        # The body's own exception propagates unchanged; the upstreams stop either way.
        await self._close()

    async def _close(self) -> None:
        group, self._group = self._group, None
        self._stop.set()
        if group is not None:
            await group.__aexit__(None, None, None)

    async def _hold(
        self,
        spec: UpstreamSpec,
        index: int,
        slots: list[Upstream | UpstreamStartError | None],
        settled: anyio.Event,
    ) -> None:
        upstream: Upstream | None = None
        # a cassette rides on the spec: replaying stands in for the upstream, recording watches it
        tape = getattr(spec, "tape", None)
        try:
            if tape is not None and tape.stands_in(spec):
                try:
                    stand_in = tape.replay_upstream(spec, ask_client=self._on_client_request)
                except ProxyError as exc:
                    slots[index] = UpstreamStartError(str(exc), str(exc))
                    settled.set()
                    await self._stop.wait()
                    return
                slots[index] = stand_in
                settled.set()
                # the real upstream starts in this task, and only for what the cassette lacks
                await stand_in.hold(self._stop, lambda: self._open(spec, None))
                return
            while not self._stop.is_set():
                try:
                    async with self._open(spec, upstream) as opened:
                        if upstream is None:
                            if tape is not None:
                                tape.watch(opened)
                            upstream = opened
                            slots[index] = opened
                            settled.set()
                        elif opened.reconnector is not None:
                            if tape is not None:
                                tape.watch(opened)  # the new session is recorded too
                            self._report(f"harness-audit proxy: upstream {spec.name!r} reconnected")
                            opened.reconnector.finish(None)
                        await self._until_stop_or_reconnect(opened)
                except UpstreamStartError as exc:
                    if upstream is None:
                        slots[index] = exc
                        return
                    if upstream.reconnector is not None:
                        upstream.reconnector.finish(_reconnect_error(spec, exc))
                    await self._until_stop_or_reconnect(upstream)
                except Exception as exc:
                    if upstream is None:
                        raise
                    # The transport failed while serving: this upstream is down, not the proxy.
                    upstream.gone.set()
                    if not self._stop.is_set():
                        self._report(
                            f"harness-audit proxy: upstream {spec.name!r} stopped "
                            f"({describe_error(exc)}); calls to its tools now return errors"
                        )
                    await self._until_stop_or_reconnect(upstream)
        finally:
            settled.set()
            if upstream is not None and upstream.reconnector is not None:
                upstream.reconnector.finish(f"upstream {spec.name!r}: the proxy is stopping")

    def _open(
        self, spec: UpstreamSpec, reuse: Upstream | None
    ) -> AbstractAsyncContextManager[Upstream]:
        return open_upstream(
            spec,
            on_notification=self._on_notification,
            report=self._report,
            stderr=self._stderr,
            connect_timeout=self._connect_timeout,
            on_client_request=self._on_client_request,
            reuse=reuse,
            screen_stderr=self._screen_stderr,
        )

    async def _until_stop_or_reconnect(self, upstream: Upstream) -> None:
        if upstream.reconnector is None:
            # A process that ended stays ended; calls to it fail fast.
            await self._stop.wait()
        else:
            await first_of(self._stop, upstream.reconnector.wanted)


def _reconnect_error(spec: UpstreamSpec, exc: UpstreamStartError) -> str:
    if exc.reason.startswith("unreachable"):
        return f"upstream {spec.name!r} {exc.reason}"
    return f"upstream {spec.name!r} could not reconnect: {exc.reason}"
