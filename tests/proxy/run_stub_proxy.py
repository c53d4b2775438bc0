"""Run ``harness-audit proxy`` with the test stand-in gate instead of the real one.

Everything else is the real command (argument parsing, upstreams, stdio/HTTP serving, signals).
The denied tool names come from the ``STUB_GATE_DENY`` environment variable (comma-separated).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stub_gate import StubGate

from pytest_harness_audit.cli import main, proxy_cmd


def _stub_gate(
    storage: Path, session_id: str, policy: Any, root: str | None, *, social: bool = False
) -> StubGate:
    deny = [name for name in os.environ.get("STUB_GATE_DENY", "").split(",") if name]
    return StubGate(storage, deny)


def _no_chain(gate: Any, storage: Path, session_id: str, show_status: bool) -> bool:
    """The stand-in gate writes records.jsonl, no chain: there is none to close or verify."""
    return True


# The real policy stays (the command reads its settings); only the gate is the stand-in.
proxy_cmd._open_gate = _stub_gate  # type: ignore[assignment]
proxy_cmd._close_chain = _no_chain

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
