"""What a typed test suite imports from the package root: the fixtures' return types, loaded on
first use, and the ``Literal`` vocabularies of decision, status, door and verdict."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import get_args

import pytest

import pytest_harness_audit
from pytest_harness_audit import types


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("RecordingProxySession", "pytest_harness_audit.session.proxy_session"),
        ("AgentRun", "pytest_harness_audit.doors.agent"),
        ("SendResult", "pytest_harness_audit.social.events"),
    ],
)
def test_fixture_return_types_are_exported_from_the_root(name: str, module: str) -> None:
    assert name in pytest_harness_audit.__all__
    assert getattr(pytest_harness_audit, name) is getattr(importlib.import_module(module), name)


def test_every_public_name_resolves() -> None:
    for name in pytest_harness_audit.__all__:
        assert getattr(pytest_harness_audit, name) is not None, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = pytest_harness_audit.Nope


def test_the_vocabularies() -> None:
    assert get_args(types.Decision) == ("allow", "deny", "warn")
    assert get_args(types.Status) == ("success", "error", "blocked")
    assert get_args(types.VerdictName) == ("PASS", "WARN", "FAIL")
    assert {"scripted", "proxy", "hook", "agent", "cli"} <= set(get_args(types.Door))
    assert pytest_harness_audit.Door is types.Door


def test_recorded_calls_use_the_vocabularies(tmp_path: Path) -> None:
    harness = pytest_harness_audit.Harness.create(tmp_path, storage_dir=tmp_path / "audit")
    try:
        harness.call("Read", file_path="README.md")
        harness.call("Bash", command="rm -rf /")
        harness.call("WebFetch", url="https://example.com")
        calls = harness.calls()
    finally:
        harness.close()
    assert {c.decision for c in calls} == {"allow", "deny", "warn"}
    assert {c.status for c in calls} <= set(get_args(types.Status))
    assert {c.door for c in calls} == {"scripted"}
    verdict, _ = harness.judge()
    assert verdict.value in get_args(types.VerdictName)
