"""The command line that starts the proxy as a subprocess (for agents that spawn MCP servers).

``proxy_command(...)`` returns the argv of ``harness-audit proxy``, run with the current Python
so it works in any virtualenv without relying on the console script being on ``PATH``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


def proxy_command(
    *,
    storage: Path | str,
    upstream: Sequence[str] = (),
    session: str | None = None,
    policy: Path | str | None = None,
    preset: str | None = None,
    config: Path | str | None = None,
    workspace: Path | str | None = None,
    http: str | None = None,
    call_timeout: float | None = None,
    python: str = sys.executable,
) -> list[str]:
    """Argv for ``harness-audit --storage STORAGE proxy [options] -- UPSTREAM...``."""
    if policy is not None and preset is not None:
        raise ValueError("give either policy or preset, not both")
    argv = [python, "-m", "pytest_harness_audit", "--storage", str(storage), "proxy"]
    options: list[tuple[str, object]] = [
        ("--session", session),
        ("--policy", policy),
        ("--preset", preset),
        ("--config", config),
        ("--workspace", workspace),
        ("--http", http),
        ("--call-timeout", call_timeout),
    ]
    for flag, value in options:
        if value is not None:
            argv += [flag, str(value)]
    if upstream:
        argv += ["--", *upstream]
    return argv
