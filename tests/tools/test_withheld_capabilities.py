"""A contained command runs without the capabilities that reach into the auditor (its memory,
its descriptors, mounts), and the harness process is non-dumpable once it has run one."""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import pytest

from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.tools.supervisor import WITHHELD_CAPABILITIES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux capabilities")


def _field(status: str, key: str) -> int:
    line = next(line for line in status.splitlines() if line.startswith(key))
    return int(line.split()[1], 16)


def test_a_contained_command_holds_none_of_the_withheld_capabilities(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    try:
        result = harness.call("Bash", command="cat /proc/self/status")
        status = str(result.output)
        for key in ("CapBnd:", "CapEff:", "CapPrm:", "CapAmb:"):
            held = _field(status, key)
            assert not [n for n in WITHHELD_CAPABILITIES if held >> n & 1], key
        if os.geteuid() == 0:
            # root keeps what is not withheld (it may still chown, override modes …)
            assert _field(status, "CapEff:") >> 0 & 1
        assert "\nNoNewPrivs:\t0" in status  # setuid programs still run (sudo)
    finally:
        harness.close()


def test_the_harness_is_not_dumpable_from_its_creation(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE, before any command ran
        result = harness.call("Bash", command=f"cat /proc/{os.getpid()}/environ | head -c 1")
        assert "Permission denied" in str(result.output)
    finally:
        harness.close()
