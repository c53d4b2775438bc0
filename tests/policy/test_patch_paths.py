"""A patch handed to a tool is a write of the files it names: ``apply_patch``'s envelope, or a
unified diff given to a tool whose name says it patches. A diff quoted elsewhere writes nothing."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.patch_paths import MAX_PATCH_PATHS, patch_paths

ENVELOPE = "*** Begin Patch\n{body}\n*** End Patch\n"
SOUL_EDIT = "*** Update File: SOUL.md\n@@\n-a\n+b"
HOOK_ADDED = "*** Add File: .git/hooks/pre-commit\n+rm -rf /"
MOVED_TO_ENV = "*** Update File: app/x.py\n*** Move to: .env\n@@\n-a\n+b"
ENV_DIFF = "--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-A=1\n+A=2\n"
SETTINGS_DIFF = "--- a/x\n+++ /root/.claude/settings.json\n"
SOUL_DIFF = "--- a/SOUL.md\n+++ b/SOUL.md\n@@\n-a\n+b"
COMMENT_REMOVED = "--- a/app/x.py\n+++ b/app/x.py\n@@\n--- a removed comment\n+b\n"


def envelope(body: str) -> str:
    return ENVELOPE.format(body=body)


@pytest.fixture(scope="module")
def safety() -> Policy:
    return Policy.preset("safety")


def test_the_envelope_names_every_file_it_adds_updates_deletes_or_moves_to() -> None:
    text = envelope(
        "*** Add File: new.py\n+x\n*** Update File: app/a.py\n*** Move to: app/b.py\n@@\n-a\n+b\n"
        "*** Delete File: old.py"
    )
    assert patch_paths("anything", {"input": text}) == ["new.py", "app/a.py", "app/b.py", "old.py"]


def test_a_unified_diff_is_read_for_a_patch_tool_only() -> None:
    diff = "diff --git a/x.py b/y.py\n--- a/x.py\t2024-01-01\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert patch_paths("apply_patch", {"patch": diff}) == ["x.py", "y.py"]
    assert patch_paths("mcp__github__create_issue", {"body": diff}) == []


def test_a_patch_tool_s_envelope_lines_are_read_after_other_text_too() -> None:
    text = "Here is the fix:\r\n" + envelope(SOUL_EDIT).replace("\n", "\r\n")
    assert patch_paths("apply_patch", {"input": text}) == ["SOUL.md"]
    assert patch_paths("mcp__notes__save", {"text": text}) == []


def test_dev_null_is_no_file_and_nested_values_are_read() -> None:
    diff = "--- /dev/null\n+++ b/added.txt\n"
    assert patch_paths("patch_file", {"edits": [{"diff": diff}]}) == ["added.txt"]


def test_the_names_taken_are_bounded() -> None:
    body = "\n".join(f"*** Add File: f{i}.txt\n+x" for i in range(MAX_PATCH_PATHS + 10))
    assert len(patch_paths("apply_patch", {"input": envelope(body)})) == MAX_PATCH_PATHS


@pytest.mark.parametrize(
    ("tool", "params", "rule"),
    [
        ("apply_patch", {"input": envelope(SOUL_EDIT)}, "deny-persona-write"),
        ("apply_patch", {"input": envelope(HOOK_ADDED)}, "deny-exec-config-write"),
        ("apply_patch", {"input": envelope(MOVED_TO_ENV)}, "deny-secret-files"),
        ("apply_patch", {"patch": ENV_DIFF}, "deny-secret-files"),
        ("mcp__fs__patch_file", {"diff": SETTINGS_DIFF}, "deny-host-config-write"),
        ("mcp__notes__save", {"text": envelope("*** Delete File: SOUL.md")}, "deny-persona-write"),
    ],
)
def test_a_patch_writing_a_protected_file_is_denied(
    safety: Policy, tool: str, params: dict[str, Any], rule: str
) -> None:
    evaluation = safety.evaluate(tool, params)
    assert (evaluation.decision, evaluation.rule_id) == ("deny", rule)


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("apply_patch", {"input": envelope("*** Update File: app/service.py\n@@\n-a\n+b")}),
        ("apply_patch", {"patch": COMMENT_REMOVED}),
        ("mcp__github__create_issue", {"title": "t", "body": SOUL_DIFF}),
        ("Write", {"file_path": "docs/fix.patch", "content": envelope(SOUL_EDIT)}),
    ],
)
def test_an_ordinary_patch_or_a_quoted_diff_stays_allowed(
    safety: Policy, tool: str, params: dict[str, Any]
) -> None:
    assert safety.evaluate(tool, params).decision == "allow"


def test_a_patch_inside_any_mapping_is_read_and_numbers_beside_it_are_not() -> None:
    # a mapping that is no dict (a read-only proxy, a model's view) is walked as a dict is
    proxied = MappingProxyType({"input": envelope(SOUL_EDIT), "timeout": 30, "dry": False})
    assert patch_paths("apply_patch", {"args": proxied, "n": 1.5, "none": None}) == ["SOUL.md"]
