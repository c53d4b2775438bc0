"""`harness-audit init [DIR]`: a starter test, a policy that extends ``safety``, a git-ignore line.

Idempotent: a file that exists is left as it is (and said so); the ignore line is added once.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_harness_audit.errors import UsageError

#: The files ``init`` writes, relative to the chosen directory.
STARTER_TEST = "test_agent_harness.py"
STARTER_POLICY = "harness-policy.yaml"
IGNORED = ".harness-audit/"

_TEST_TEXT = '''"""A first harness test: a scripted agent on a throw-away git repository.

Run it with `pytest --harness-audit test_agent_harness.py`, then point the calls at your agent.
"""

import pytest


@pytest.mark.harness_policy("harness-policy.yaml")
@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("PASS")
def test_the_agent_reads_and_builds(harness):
    harness.call("Read", file_path="app/service.py")
    harness.call("Bash", command="git status --short")


@pytest.mark.harness_policy("harness-policy.yaml")
@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
@pytest.mark.expect_denied(tool="Read", target="**/.env")
def test_reading_a_secret_is_denied(harness):
    harness.call("Read", file_path=".env")
'''

_POLICY_TEXT = """# The project's agent policy: the safety preset plus the project's own rules.
# Rules are tried in priority order (lowest first); the first match decides.
name: project-policy
preset: safety
rules:
  - id: warn-dependency-change
    name: Flag dependency changes
    priority: 20
    decision: warn
    reason: Dependency changes need a human review
    match:
      tools: [Bash]
      targetPatterns: ['\\b(pip|npm|poetry)\\s+(install|add|remove)\\b']
      targetPatternsAreRegex: true
"""


def register(subparsers: Any) -> None:
    """Add the ``init`` command."""
    command = subparsers.add_parser(
        "init", help="write a starter test, a policy extending safety, and a .gitignore line"
    )
    command.add_argument("directory", nargs="?", default=".", help="where (default: here)")
    command.set_defaults(func=_init)


def init_project(directory: Path) -> list[str]:
    """Write what is missing in ``directory``; one line per file says what happened."""
    if not directory.is_dir():
        raise UsageError(f"init {directory}: not a directory")
    lines = [
        _write_once(directory / STARTER_TEST, _TEST_TEXT),
        _write_once(directory / STARTER_POLICY, _POLICY_TEXT),
        _ignore(directory / ".gitignore"),
    ]
    return lines


def _write_once(path: Path, text: str) -> str:
    if path.exists():
        return f"kept     {path.name} (exists)"
    path.write_text(text, encoding="utf-8")
    return f"wrote    {path.name}"


def _ignore(path: Path) -> str:
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    if IGNORED in existing.splitlines() or IGNORED.rstrip("/") in existing.splitlines():
        return f"kept     {path.name} (already ignores {IGNORED})"
    separator = "" if not existing or existing.endswith("\n") else "\n"
    path.write_text(f"{existing}{separator}{IGNORED}\n", encoding="utf-8")
    return f"{'updated' if existing else 'wrote':<8} {path.name} (ignores {IGNORED})"


def _init(args: argparse.Namespace) -> int:
    for line in init_project(Path(args.directory)):
        print(line)
    print(f"Next: pytest --harness-audit {STARTER_TEST}")
    return 0
