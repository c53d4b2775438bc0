"""Run a ``RecordingProxy`` over HTTP in a background thread, for synchronous callers.

A pytest fixture can start one, hand ``.url``/``.token`` to an agent, and stop it at the end of
the test (which also stops the upstream processes)::

    with BackgroundProxy(gate, upstreams) as proxy:
        run_agent(url=proxy.url, token=proxy.token)

The gate is used from the proxy's thread; if the caller uses the same gate meanwhile, the gate
must be thread-safe.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

import anyio
import anyio.from_thread
import anyio.lowlevel

from pytest_harness_audit.doors.proxy.config import UpstreamSpec
from pytest_harness_audit.doors.proxy.core import RecordingProxy, report_to_stderr
from pytest_harness_audit.doors.proxy.errors import ProxyError
from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.doors.proxy.http import HttpEndpoint
from pytest_harness_audit.doors.proxy.local_tools import LocalTool
from pytest_harness_audit.doors.proxy.pins import ToolPins
from pytest_harness_audit.doors.proxy.upstream import DEFAULT_CONNECT_TIMEOUT, ReportLine


class BackgroundProxy:
    """A recording proxy serving streamable HTTP from its own thread and event loop."""

    def __init__(
        self,
        gate: GateLike[Any],
        upstreams: Sequence[UpstreamSpec] = (),
        *,
        local_tools: Sequence[LocalTool] = (),
        call_timeout: float | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        report: ReportLine = report_to_stderr,
        upstream_stderr: TextIO | None = None,
        pins: ToolPins | None = None,
        pin_path: Path | None = None,
    ) -> None:
        self._proxy = RecordingProxy(
            gate,
            upstreams,
            local_tools=local_tools,
            call_timeout=call_timeout,
            connect_timeout=connect_timeout,
            report=report,
            upstream_stderr=upstream_stderr,
            pins=pins,
            pin_path=pin_path,
        )
        self._host, self._port, self._token = host, port, token
        self._endpoint: HttpEndpoint | None = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop_token: anyio.lowlevel.EventLoopToken | None = None
        self._stop: anyio.Event | None = None

    @property
    def endpoint(self) -> HttpEndpoint:
        """URL and token of the running proxy."""
        if self._endpoint is None:
            raise RuntimeError("the background proxy is not running")
        return self._endpoint

    @property
    def url(self) -> str:
        """The streamable-HTTP URL (``http://127.0.0.1:PORT/mcp``)."""
        return self.endpoint.url

    @property
    def token(self) -> str:
        """The bearer token clients must send."""
        return self.endpoint.token

    def start(self, timeout: float = 60.0) -> HttpEndpoint:
        """Start the thread, wait until the proxy listens, and return its endpoint."""
        if self._thread is not None:
            raise RuntimeError("the background proxy was already started")
        self._thread = threading.Thread(
            target=anyio.run, args=(self._main,), name="harness-audit-proxy", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(timeout):
            raise ProxyError(f"the proxy did not start within {timeout:g}s")
        if self._error is not None:
            self._thread.join(timeout)
            error, self._error = self._error, None
            raise error
        return self.endpoint

    def stop(self, timeout: float = 30.0) -> None:
        """Stop serving and stop the upstreams; waits for the thread to finish."""
        thread = self._thread
        if thread is None:
            return
        if thread.is_alive() and self._stop is not None and self._loop_token is not None:
            stop = self._stop
            # The loop may finish on its own between the check and the call.
            with contextlib.suppress(RuntimeError):
                anyio.from_thread.run_sync(stop.set, token=self._loop_token)
        thread.join(timeout)
        if thread.is_alive():
            raise ProxyError(f"the proxy did not stop within {timeout:g}s")
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def __enter__(self) -> BackgroundProxy:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def _main(self) -> None:
        self._loop_token = anyio.lowlevel.current_token()
        self._stop = anyio.Event()

        def on_ready(endpoint: HttpEndpoint) -> None:
            self._endpoint = endpoint
            self._ready.set()

        try:
            async with self._proxy:
                await self._proxy.serve_http(
                    host=self._host,
                    port=self._port,
                    token=self._token,
                    on_ready=on_ready,
                    stop=self._stop,
                )
        except Exception as exc:
            # Kept for the caller: start() raises it, or stop() after a failure while serving.
            self._error = exc
        finally:
            self._ready.set()
