"""Latency and memory of ``tools/call`` through the recording proxy.

    python -m pytest_harness_audit.bench.proxy [--calls N] [--memory-calls M] [--preset NAME]

The same official MCP client calls the same trivial upstream (an ``echo`` tool, over stdio)
twice: directly, then through ``harness-audit proxy`` (real gate, real audit chain in a temp
directory). Prints p50/p95 of each, the p50 ratio and the p50 the proxy adds, then the proxy
process's resident memory before and after ``M`` more calls (Linux ``/proc``; "n/a" elsewhere).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from pytest_harness_audit.doors.proxy import proxy_command

_WARMUP_CALLS = 100
_SERVE_FLAG = "--serve-echo"


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


def echo_upstream_argv() -> list[str]:
    """Command line of the trivial upstream: this module serving one ``echo`` tool."""
    return [sys.executable, "-m", "pytest_harness_audit.bench.proxy", _SERVE_FLAG]


def serve_echo() -> None:
    """Serve the trivial upstream on stdio."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench-echo")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    server.run()


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    if argv is None and _SERVE_FLAG in sys.argv[1:]:
        serve_echo()
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per series")
    parser.add_argument(
        "--memory-calls", type=int, default=10_000, help="calls between the two RSS readings"
    )
    parser.add_argument("--preset", default="permissive", help="policy preset of the proxy")
    args = parser.parse_args(argv)
    if args.calls < 2 or args.memory_calls < 0:
        parser.error("--calls must be at least 2 and --memory-calls not negative")
    result = anyio.run(run_benchmark, args.calls, args.memory_calls, args.preset)
    print("\n".join(result.lines()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
