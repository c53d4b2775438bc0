"""Start every upstream at once and keep each one open in its own task.

Starting concurrently makes a proxy with several upstreams as quick to start as its slowest
upstream. A task per upstream also keeps each transport's task groups in the task that opened
them, which the SDK's transports require.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import TextIO

import anyio
import anyio.abc

from pytest_harness_audit.proxy.config import UpstreamSpec
from pytest_harness_audit.proxy.errors import UpstreamStartError
from pytest_harness_audit.proxy.upstream import (
    ClientRequestSink,
    NotificationSink,
    ReportLine,
    Upstream,
    open_upstream,
)


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
    ) -> None:
        self._specs = list(specs)
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
        try:
            async with open_upstream(
                spec,
                on_notification=self._on_notification,
                report=self._report,
                stderr=self._stderr,
                connect_timeout=self._connect_timeout,
                on_client_request=self._on_client_request,
            ) as upstream:
                slots[index] = upstream
                settled.set()
                await self._stop.wait()
        except UpstreamStartError as exc:
            slots[index] = exc
        finally:
            settled.set()
