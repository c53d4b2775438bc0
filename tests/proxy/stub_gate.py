"""A tiny stand-in for ``pytest_harness_audit.gate.Gate`` used only by the proxy tests.

It denies the tools named in ``deny`` and writes every record as one JSON line to
``<storage>/records.jsonl`` (so a proxy running in a subprocess can be checked too).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_harness_audit.gate.seam import GatedCall, Outcome, run_call_async


@dataclass(frozen=True)
class StubDecision:
    tool: str
    params: dict[str, Any]
    blocked: bool
    message: str


class StubGate:
    def __init__(self, storage: Path, deny: Iterable[str] = ()) -> None:
        self.path = storage / "records.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.deny = frozenset(deny)
        self.decided: list[str] = []
        self._lock = threading.Lock()

    def decide(self, tool: str, params: Mapping[str, Any]) -> StubDecision:
        self.decided.append(tool)
        if tool in self.deny:
            reason = f"rule deny-{tool}: {tool} is not allowed"
            return StubDecision(tool, dict(params), True, f"[blocked] [web4-policy] {reason}")
        return StubDecision(tool, dict(params), False, "")

    def record(
        self,
        decision: StubDecision,
        *,
        status: str,
        output: Any = None,
        error_message: str | None = None,
        duration_ms: float | None = 0.0,
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        record = {
            "tool": decision.tool,
            "params": decision.params,
            "status": status,
            "output": output,
            "error_message": error_message,
            "duration_ms": duration_ms,
        }
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        return record

    async def run_async(
        self,
        tool: str,
        params: Mapping[str, Any],
        act: Callable[[Any], Awaitable[Outcome]],
        /,
        *,
        extra: Mapping[str, Any] | None = None,
    ) -> GatedCall:
        return await run_call_async(self, tool, params, act, extra=extra)

    def records(self) -> list[dict[str, Any]]:
        return read_records(self.path.parent)


def read_records(storage: Path) -> list[dict[str, Any]]:
    path = storage / "records.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
