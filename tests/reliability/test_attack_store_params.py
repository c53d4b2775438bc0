"""Attacks on the audit store through parameters that are not targets, hidden behind bulk.

The store rule reads every string of a call's parameters for a spelling of the store. It used
to stop after 1 MB of text, so a large value checked first (the last one of a mapping) hid a
short path next to it: a native function tool or a host's MCP tool then wrote into the chain.
Every value is checked now; only parameters beyond any door's payload are refused unchecked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_harness_audit.audit import verify_chain
from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.gate.store_guard import StoreGuard
from pytest_harness_audit.session.harness import Harness
from tests.hooks.hook_processes import hook

BULK = "a" * (1 << 20)


@pytest.fixture
def harness(store_session: Harness) -> Harness:
    """The shared permissive session, its store holding a chain (tests/conftest.py)."""
    return store_session


def test_a_function_tool_cannot_write_the_chain_behind_a_large_value(harness: Harness) -> None:
    chain = harness.storage_dir.resolve() / "audit" / f"{harness.session_id}.jsonl"
    written: list[str] = []

    @harness.tool
    def upload(dest: str, blob: str) -> str:
        """Store a blob at a destination."""
        written.append(dest)
        Path(dest).write_text("forged\n", encoding="utf-8")
        return "stored"

    with pytest.raises(ToolCallBlocked) as blocked:
        upload(str(chain), BULK)
    assert written == []
    assert "tamper_attempt" in blocked.value.call.record["alerts"]
    assert harness.verdict == "FAIL"
    assert verify_chain(harness.storage_dir, harness.session_id).valid


@pytest.mark.parametrize(
    "params",
    [
        pytest.param(lambda p: {"uri": p, "junk": BULK}, id="bulk-after"),
        pytest.param(lambda p: {"junk": BULK, "uri": p}, id="bulk-before"),
        pytest.param(lambda p: {"uri": p, "junk": ["a" * 1000] * 2000}, id="bulk-list"),
        pytest.param(lambda p: {"uri": p, "nested": {"k": [BULK, {"x": BULK}]}}, id="nested"),
    ],
)
def test_every_value_is_read_whatever_comes_first(tmp_path: Path, params: object) -> None:
    store = tmp_path / ".harness-audit"
    guard = StoreGuard(store, str(tmp_path))
    target = f"file://{store}/audit/S.jsonl"
    assert callable(params)
    touched = guard.offending([], params(target))
    assert touched is not None and target.startswith(touched.rstrip("…"))


def test_parameters_beyond_any_payload_are_refused_unchecked(tmp_path: Path) -> None:
    guard = StoreGuard(tmp_path / ".harness-audit", str(tmp_path))
    assert guard.offending([], {"many": ["a"] * (1 << 20)}) is not None
    assert guard.offending([], {"long": "a" * (65 << 20)}) is not None


@pytest.mark.parametrize(
    "params",
    [
        {"content": BULK, "file_path": "notes.txt"},
        {"values": ["audit"] * 1000, "path": "app"},
        {"text": "see the audit store docs " * 40000},
    ],
    ids=["large-content", "many-values", "the-word-audit"],
)
def test_large_ordinary_parameters_pass(tmp_path: Path, params: dict[str, object]) -> None:
    guard = StoreGuard(tmp_path / ".harness-audit", str(tmp_path))
    assert guard.offending([], params) is None


@pytest.mark.slow
def test_the_hook_door_denies_a_host_mcp_tool_behind_a_large_value(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "state"
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "S",
        "cwd": str(project),
        "tool_use_id": "t1",
        "tool_name": "mcp__storage__upload",
        "tool_input": {"uri": f"file://{store}/audit/S.jsonl", "blob": BULK},
    }
    code, out, err = hook(store, "pre", payload, "--preset", "permissive")
    assert code == 0, err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "audit store" in answer["permissionDecisionReason"]


# -- a path under a name the policy does not read as a target --------------------------------


@pytest.mark.parametrize("name", ["dest", "filename", "output_path", "file"])
def test_a_function_tool_s_own_path_parameter_is_checked(harness: Harness, name: str) -> None:
    """Before, only ``file_path``/``path``/``target`` … were read: ``dest="../audit/…"`` ran."""
    namespace: dict[str, object] = {}
    exec(  # a tool whose path parameter has the name under test
        f"def save({name}: str, content: str) -> str:\n"
        "    '''Save content.'''\n"
        f"    written.append({name})\n"
        "    return 'saved'\n",
        namespace,
    )
    written: list[str] = []
    namespace["written"] = written
    tool = harness.tool(namespace["save"], category="file_write", on_block="return")
    chain = f"../audit/audit/{harness.session_id}.jsonl"
    assert tool(chain, "forged").startswith("[blocked] [web4-policy] the audit store")
    (harness.root / "ev").symlink_to(harness.storage_dir.resolve())
    assert tool(f"ev/sessions/{harness.session_id}.anchor", "{}").startswith("[blocked]")
    assert written == []
    assert harness.verdict == "FAIL"


def test_ordinary_path_parameters_pass(harness: Harness) -> None:
    @harness.tool(category="file_write")
    def save(dest: str, content: str, files: list[str], url: str) -> str:
        """Save content."""
        return "saved"

    many = [f"app/module_{n}.py" for n in range(2000)]
    assert save("notes/out.txt", "x", many, "https://example.invalid/a/b") == "saved"
    assert harness.verdict == "PASS"


def test_a_host_mcp_tool_s_own_argument_is_checked(tmp_path: Path) -> None:
    store = tmp_path / "state"
    guard = StoreGuard(store, str(tmp_path / "project"))
    (store / "audit").mkdir(parents=True)
    assert guard.offending([], {"output": "../state/audit/S.jsonl"}) is not None
    assert guard.offending([], {"output": "../other/audit/S.jsonl"}) is None
