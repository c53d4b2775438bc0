"""What the secret-scan tests share: the workspace's secrets, a registry of them, and a dump
tool run on a file (skipped where the tool is missing)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_harness_audit.inspect.secrets import SecretRegistry

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"
HOOK = "whsec_test_7d1e9c3b5a2f8e4d"
PASSWORD = "hunter2-test"
#: The labels of the three secrets.
ALL = {"API_KEY", "WEBHOOK", "DATABASE_PASSWORD"}
#: A ``.env`` holding them, as bytes.
ENV = (
    f"# Development settings\nAPI_KEY={KEY}\n"
    f"DATABASE_URL=postgresql://orders:{PASSWORD}@localhost:5432/orders\n"
    f"PAYMENT_WEBHOOK_SECRET={HOOK}\n"
).encode()


def secrets_registry(extra: dict[str, str] | None = None) -> SecretRegistry:
    """A registry of the three secrets (and ``extra``: value → label)."""
    registry = SecretRegistry()
    pairs = {KEY: "API_KEY", HOOK: "WEBHOOK", PASSWORD: "DATABASE_PASSWORD", **(extra or {})}
    for value, label in pairs.items():
        registry.add(value, label)
    return registry


def tool_output(command: list[str], path: Path) -> str:
    """What ``command PATH`` prints; the test is skipped where the tool is missing or refuses."""
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    done = subprocess.run([*command, str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not done.stdout:
        pytest.skip(f"{' '.join(command)} is not supported here")
    return done.stdout
