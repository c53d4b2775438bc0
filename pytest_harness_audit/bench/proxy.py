"""Latency and memory of ``tools/call`` through the recording proxy, over stdio and HTTP.

    python -m pytest_harness_audit.bench.proxy [--calls N] [--memory-calls M] [--preset NAME]
                                               [--half-open N] [--transport stdio|http|both]

Stdio: the same official MCP client calls the same trivial upstream (an ``echo`` tool, over
stdio) twice: directly, then through ``harness-audit proxy`` (real gate, real audit chain in a
temp directory). Prints p50/p95 of each, the p50 ratio and the p50 the proxy adds, then the
proxy process's resident memory before and after ``M`` more calls (Linux ``/proc``; "n/a"
elsewhere).

Streamable HTTP: the echo upstream serves HTTP on loopback; the same client calls it directly
and through ``harness-audit proxy --http`` (whose upstream is that server), then again while
``--half-open`` raw sockets are held against the proxy's listener, each having sent part of a
request head and then idling. Prints p50/p95 direct and proxied, the added p50/p95, and how
many of the half-open sockets the proxy still held at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from pytest_harness_audit.doors.proxy import HttpEndpoint, parse_ready_line, proxy_command

_WARMUP_CALLS = 100
_SERVE_FLAG = "--serve-echo"
_SERVE_HTTP_FLAG = "--serve-echo-http"
_LOOPBACK = "127.0.0.1"
#: What each half-open socket sends: a request line and one header, never the blank line.
_PARTIAL_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
_START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Latency:
    """Percentiles of one series of call latencies, in milliseconds."""

    p50: float
    p95: float

    @classmethod
    def of(cls, samples_ms: Sequence[float]) -> Latency:
        """Summarise raw samples."""
        cuts = statistics.quantiles(samples_ms, n=100, method="inclusive")
        return cls(p50=statistics.median(samples_ms), p95=cuts[94])


@dataclass(frozen=True)
class ProxyBenchResult:
    """What one benchmark run measured."""

    calls: int
    direct: Latency
    proxied: Latency
    memory_calls: int
    rss_before_kib: int | None
    rss_after_kib: int | None

    @property
    def ratio(self) -> float:
        """p50 through the proxy divided by p50 direct."""
        return self.proxied.p50 / self.direct.p50

    @property
    def added_p50_ms(self) -> float:
        """Milliseconds the proxy adds at the median."""
        return self.proxied.p50 - self.direct.p50

    def lines(self) -> list[str]:
        """The printed report."""
        rows = [
            f"tools/call latency, {self.calls} calls over stdio (trivial echo upstream)",
            f"  {'':<16}{'p50 ms':>10}{'p95 ms':>10}",
            f"  {'direct':<16}{self.direct.p50:>10.3f}{self.direct.p95:>10.3f}",
            f"  {'through proxy':<16}{self.proxied.p50:>10.3f}{self.proxied.p95:>10.3f}",
            f"  ratio p50 {self.ratio:.2f}x, added p50 {self.added_p50_ms:.3f} ms",
        ]
        if self.rss_before_kib is None or self.rss_after_kib is None:
            rows.append("  proxy RSS: n/a (needs /proc)")
        else:
            growth = (self.rss_after_kib - self.rss_before_kib) / 1024
            rows.append(
                f"  proxy RSS {self.rss_before_kib / 1024:.1f} MiB → "
                f"{self.rss_after_kib / 1024:.1f} MiB after {self.memory_calls} more calls "
                f"({growth:+.1f} MiB)"
            )
        return rows


@dataclass(frozen=True)
class HttpBenchResult:
    """What the streamable-HTTP run measured: idle, then with ``half_open`` sockets held."""

    calls: int
    direct: Latency
    proxied: Latency
    half_open: int
    direct_loaded: Latency
    proxied_loaded: Latency
    #: Half-open sockets the proxy held at each look of the keeper (once a second).
    held: tuple[int, ...]
    #: Sockets opened again after the proxy had closed them.
    reopened: int

    def lines(self) -> list[str]:
        """The printed report."""
        rows = [
            f"tools/call latency, {self.calls} calls over streamable HTTP "
            "(trivial echo upstream on HTTP)",
            f"  {'':<34}{'p50 ms':>10}{'p95 ms':>10}",
        ]
        series = [
            ("idle", self.direct, self.proxied),
            (f"with {self.half_open} half-open", self.direct_loaded, self.proxied_loaded),
        ]
        for label, direct, proxied in series:
            rows += [
                f"  {'direct, ' + label:<34}{direct.p50:>10.3f}{direct.p95:>10.3f}",
                f"  {'through proxy, ' + label:<34}{proxied.p50:>10.3f}{proxied.p95:>10.3f}",
                f"  {'added, ' + label:<34}{proxied.p50 - direct.p50:>10.3f}"
                f"{proxied.p95 - direct.p95:>10.3f}",
            ]
        held = f"{min(self.held)}–{max(self.held)}" if self.held else "n/a"
        rows.append(
            f"  half-open sockets: {self.half_open} kept open by the bench (re-opened "
            f"{self.reopened} times after the proxy closed them, every {_REFRESH_S:g} s); "
            f"held by the proxy at each look: {held}"
        )
        return rows


def echo_upstream_argv() -> list[str]:
    """Command line of the trivial upstream: this module serving one ``echo`` tool."""
    return [sys.executable, "-m", "pytest_harness_audit.bench.proxy", _SERVE_FLAG]


def serve_echo(port: int | None = None) -> None:
    """Serve the trivial upstream on stdio, or on streamable HTTP at ``port`` of loopback."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench-echo")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    if port is None:
        server.run()
    else:
        server.run("streamable-http", host=_LOOPBACK, port=port)


async def _timed_pairs(
    first: ClientSession, second: ClientSession, count: int
) -> tuple[list[float], list[float]]:
    """``count`` timed calls on each session, alternating, so both see the same conditions
    (and neither connection sits idle long enough for the server to close it)."""
    samples: tuple[list[float], list[float]] = ([], [])
    for index in range(count):
        for session, series in ((first, samples[0]), (second, samples[1])):
            started = time.perf_counter()
            await session.call_tool("echo", {"text": f"call {index}"})
            series.append((time.perf_counter() - started) * 1000.0)
    return samples


async def _timed_calls(session: ClientSession, count: int) -> list[float]:
    samples: list[float] = []
    for index in range(count):
        started = time.perf_counter()
        await session.call_tool("echo", {"text": f"call {index}"})
        samples.append((time.perf_counter() - started) * 1000.0)
    return samples


async def _measure(argv: Sequence[str], calls: int) -> list[float]:
    parameters = StdioServerParameters(command=argv[0], args=list(argv[1:]))
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await _timed_calls(session, _WARMUP_CALLS)
        return await _timed_calls(session, calls)


async def _measure_proxy(
    argv: Sequence[str], calls: int, memory_calls: int, marker: str
) -> tuple[list[float], int | None, int | None]:
    parameters = StdioServerParameters(command=argv[0], args=list(argv[1:]))
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await _timed_calls(session, _WARMUP_CALLS)
        samples = await _timed_calls(session, calls)
        pid = _find_pid(marker)
        before = _rss_kib(pid)
        await _timed_calls(session, memory_calls)
        after = _rss_kib(pid)
        return samples, before, after


def _find_pid(marker: str) -> int | None:
    """The pid of the process whose command line contains ``marker`` (Linux only)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in cmdline and b"proxy" in cmdline:
            return int(entry.name)
    return None


def _rss_kib(pid: int | None) -> int | None:
    if pid is None:
        return None
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


async def run_benchmark(
    calls: int = 2000, memory_calls: int = 10_000, preset: str = "permissive"
) -> ProxyBenchResult:
    """Measure direct and proxied latency, and the proxy's memory over ``memory_calls``."""
    upstream = echo_upstream_argv()
    direct = await _measure(upstream, calls)
    with tempfile.TemporaryDirectory(prefix="harness-audit-bench-") as storage:
        session = f"bench-{time.time_ns()}"
        argv = proxy_command(storage=storage, session=session, preset=preset, upstream=upstream)
        proxied, before, after = await _measure_proxy(argv, calls, memory_calls, session)
    return ProxyBenchResult(
        calls=calls,
        direct=Latency.of(direct),
        proxied=Latency.of(proxied),
        memory_calls=memory_calls,
        rss_before_kib=before,
        rss_after_kib=after,
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((_LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the echo upstream exited with code {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((_LOOPBACK, port), 1):
            return
        time.sleep(0.05)
    raise RuntimeError(f"the echo upstream did not listen on port {port}")


@contextlib.contextmanager
def _process(
    argv: Sequence[str], *, stderr: int | IO[bytes] = subprocess.DEVNULL
) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def _http_proxy(argv: Sequence[str]) -> Iterator[HttpEndpoint]:
    """Start ``harness-audit proxy --http``; yield its endpoint from the ready line."""
    with _process(argv, stderr=subprocess.PIPE) as process:
        assert process.stderr is not None
        endpoint: HttpEndpoint | None = None
        for raw in process.stderr:
            endpoint = parse_ready_line(raw.decode("utf-8", "replace"))
            if endpoint is not None:
                break
        if endpoint is None:
            raise RuntimeError(f"the proxy exited with code {process.wait()} before serving")
        # keep reading its stderr, so a full pipe never blocks it
        drain = threading.Thread(target=process.stderr.read, daemon=True)
        drain.start()
        yield endpoint


@contextlib.asynccontextmanager
async def _http_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await _timed_calls(session, _WARMUP_CALLS)
        yield session


class _HalfOpen:
    """``count`` sockets to the proxy, each with part of a request head sent, then idle.

    A keeper thread counts the ones the proxy still holds every :data:`_LOOK_S` seconds, and
    every :data:`_REFRESH_S` seconds (less than the proxy's header timeout) opens a new one in
    place of each the proxy closed, as an attacker holding connections would — slowly, so the
    sockets stay idle rather than becoming a connection flood.
    """

    def __init__(self, host: str, port: int, count: int) -> None:
        self._address = (host, port)
        self._sockets = [self._open() for _ in range(count)]
        self._stop = threading.Event()
        self._keeper = threading.Thread(target=self._keep, daemon=True)
        #: How many were opened again after the proxy closed them.
        self.reopened = 0
        #: How many were open at each of the keeper's looks.
        self.held: list[int] = []

    def _open(self) -> socket.socket:
        sock = socket.create_connection(self._address, 10)
        sock.settimeout(None)  # blocking: a MSG_DONTWAIT peek then answers at once
        with contextlib.suppress(OSError):  # the proxy may already have closed it
            sock.sendall(_PARTIAL_HEAD)
        return sock

    def _keep(self) -> None:
        looks = 0
        while not self._stop.wait(_LOOK_S):
            looks += 1
            # look at all of them first: each re-opened socket makes the proxy close another
            closed = [index for index, sock in enumerate(self._sockets) if not _peer_open(sock)]
            self.held.append(len(self._sockets) - len(closed))
            if looks % round(_REFRESH_S / _LOOK_S):
                continue
            for index in closed:
                self._sockets[index].close()
                with contextlib.suppress(OSError):
                    self._sockets[index] = self._open()
                    self.reopened += 1

    def __enter__(self) -> _HalfOpen:
        self._keeper.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._keeper.join()
        for sock in self._sockets:
            sock.close()


_LOOK_S = 1.0
_REFRESH_S = 8.0


def _peer_open(sock: socket.socket) -> bool:
    """Whether the peer has not closed ``sock`` (nothing is read from it)."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def _host_port(url: str) -> tuple[str, int]:
    host, _, port = url.split("/")[2].rpartition(":")
    return host.strip("[]"), int(port)


async def run_http_benchmark(
    calls: int = 2000, half_open: int = 200, preset: str = "permissive"
) -> HttpBenchResult:
    """Direct and proxied latency over streamable HTTP, idle and with ``half_open`` sockets."""
    port = _free_port()
    upstream = f"http://{_LOOPBACK}:{port}/mcp"
    with (
        tempfile.TemporaryDirectory(prefix="harness-audit-bench-") as storage,
        _process([*echo_upstream_argv()[:-1], _SERVE_HTTP_FLAG, str(port)]) as echo,
    ):
        _wait_for_port(port, echo)
        config = Path(storage) / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"echo": {"url": upstream}}}), "utf-8")
        session = f"bench-http-{time.time_ns()}"
        argv = proxy_command(
            storage=storage, session=session, preset=preset, config=config, http=f"{_LOOPBACK}:0"
        )
        with _http_proxy(argv) as endpoint:
            async with (
                _http_session(upstream, {}) as direct_session,
                _http_session(endpoint.url, endpoint.headers) as proxied_session,
            ):
                direct, proxied = await _timed_pairs(direct_session, proxied_session, calls)
                with _HalfOpen(*_host_port(endpoint.url), half_open) as sockets:
                    direct_loaded, proxied_loaded = await _timed_pairs(
                        direct_session, proxied_session, calls
                    )
    return HttpBenchResult(
        calls=calls,
        direct=Latency.of(direct),
        proxied=Latency.of(proxied),
        half_open=half_open,
        direct_loaded=Latency.of(direct_loaded),
        proxied_loaded=Latency.of(proxied_loaded),
        held=tuple(sockets.held),
        reopened=sockets.reopened,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    if argv is None and _SERVE_FLAG in sys.argv[1:]:
        serve_echo()
        return 0
    if argv is None and _SERVE_HTTP_FLAG in sys.argv[1:]:
        serve_echo(int(sys.argv[sys.argv.index(_SERVE_HTTP_FLAG) + 1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per series")
    parser.add_argument(
        "--memory-calls", type=int, default=10_000, help="calls between the two RSS readings"
    )
    parser.add_argument("--preset", default="permissive", help="policy preset of the proxy")
    parser.add_argument(
        "--half-open",
        type=int,
        default=200,
        metavar="N",
        help="idle half-open sockets held against the HTTP proxy during the second series",
    )
    parser.add_argument(
        "--transport", choices=("stdio", "http", "both"), default="both", help="what to measure"
    )
    args = parser.parse_args(argv)
    if args.calls < 2 or args.memory_calls < 0 or args.half_open < 0:
        parser.error("--calls must be at least 2, --memory-calls and --half-open not negative")
    if args.transport in ("stdio", "both"):
        result = anyio.run(run_benchmark, args.calls, args.memory_calls, args.preset)
        print("\n".join(result.lines()), flush=True)
    if args.transport in ("http", "both"):
        http = anyio.run(run_http_benchmark, args.calls, args.half_open, args.preset)
        print("\n".join(http.lines()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
