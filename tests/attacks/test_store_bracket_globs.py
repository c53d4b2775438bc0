"""The audit store named by a bracket expression the shell reads and :mod:`fnmatch` did not.

bash reads ``[^…]`` as ``[!…]`` (a negated set) and ``[[:alpha:]]`` as a POSIX class. The
store rule matched a glob part by part with :func:`fnmatch.fnmatchcase`, which reads ``[^w]``
as the set ``^``, ``w`` and has no classes: ``rm -rf ../[^w]*`` (every folder beside the
workspace but the workspace) and ``rm -rf .[^.]*`` (every dotfile of the project, a store
kept in it included) ran, and the evidence was gone; the verdict was still FAIL, but only
because the chain no longer verified. Now they are refused before they run, the chain intact.

The twins: the same brackets over folders that do not hold the store, and a listing of the
store's parent, run as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.policy.wildcards import fnmatchcase
from pytest_harness_audit.session.harness import Harness
from tests.hooks.hook_processes import hook
from tests.hooks.test_hook_continuity import Host


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    """A ``permissive`` session: only the built-in store rule refuses anything."""
    made = Harness.create(tmp_path, template="python-service", policy="permissive")
    yield made
    made.close()


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf ../[^w]*",
        "rm -rf ../[[:lower:]]udit",
        "echo x >> ../[[:alpha:]]udit/audit/*.jsonl",
        ": > ../[^[:upper:]]udit/audit/*.jsonl",
    ],
)
def test_the_store_beside_the_workspace_by_a_bracket_is_refused(
    harness: Harness, command: str
) -> None:
    harness.call("Bash", command="ls")
    harness.call("Bash", command=command)
    record = harness.records[-1]
    assert record.status == "blocked", command
    assert "rule:protect-audit-store" in record.raw["rules"]["constraints"]
    assert harness.verify().valid
    assert harness.verdict.name == "FAIL"


def test_the_same_brackets_over_workspace_folders_run(harness: Harness) -> None:
    harness.call("Bash", command="mkdir -p build/keep build/x build/Y && rm -rf build/[^k]*")
    harness.call(
        "Bash", command="rm -rf build/[[:upper:]]* && ls ../[^w]* && ls -d ../[[:alpha:]]*"
    )
    assert [r.status for r in harness.records] == ["success", "success"]
    assert sorted(p.name for p in (harness.root / "build").iterdir()) == ["keep"]
    assert harness.verdict.name == "PASS"


class Permissive(Host):
    """A host whose hooks only observe (``permissive``): only the store rule refuses."""

    def event(self, name: str, command: str, **fields: Any) -> tuple[int, str, str]:
        payload = {**self.base(name), **fields}
        return hook(self.store, command, payload, "--preset", "permissive", env=self.env)


def _pre(host: Host, command: str) -> str:
    host.number += 1
    params = {"command": command}
    use_id = f"toolu_01{host.number:022d}"
    code, out, err = host.event(
        "PreToolUse", "pre", tool_name="Bash", tool_input=params, tool_use_id=use_id
    )
    assert code == 0, err
    return str(json.loads(out).get("hookSpecificOutput", {}).get("permissionDecision", "none"))


@pytest.mark.slow
def test_a_store_in_the_project_by_a_bracket_is_refused_at_the_hook_door(tmp_path: Path) -> None:
    host = Permissive(tmp_path)  # the store in the project, as `--storage .harness-audit`
    host.start()
    for command in ("rm -rf .[^.]*", "rm -rf .[[:alpha:]]*", "cat .[^.]*/audit/*.jsonl"):
        assert _pre(host, command) == "deny", command
    for command in ("ls .[^.]*", "rm -rf .[[:upper:]]*", "rm -rf build/[^.]*"):
        assert _pre(host, command) == "none", command


@pytest.mark.parametrize(
    ("name", "pattern", "matches"),
    [
        (".harness-audit", ".[^.]*", True),
        ("..", ".[^.]*", False),
        ("audit", "[^w]*", True),
        ("workspace", "[^w]*", False),
        ("audit", "[[:lower:]]udit", True),
        ("Audit", "[[:lower:]]udit", False),
        ("x", "[[:punct:]]", False),
        ("!", "[[:punct:]]", True),
        ("b", "[^]a]", True),
        ("]", "[^]a]", False),
        ("[x", "[x", True),
    ],
)
def test_brackets_match_as_the_shell_reads_them(name: str, pattern: str, matches: bool) -> None:
    assert fnmatchcase(name, pattern) is matches
