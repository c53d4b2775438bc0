"""The store rule's reading of git options: an option's value is no flag.

With the store inside the workspace's repository, ``git stash --all`` (and ``-a``, ``-u``,
``--include-untracked``) carries it away and is refused. The rule read each simple command as
its words joined by spaces, so a message holding an option-like word (``-m 'x -a'``) was read
as the flag and an ordinary stash was refused as tampering. Commands are now judged on the
words the shell reading gives them; every form that really takes the untracked files is still
refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.gate.store_guard import StoreGuard
from pytest_harness_audit.session.harness import Harness

STORE = ".harness-audit"


@pytest.fixture(scope="module")
def inside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    """A permissive session whose store lies in its workspace's repository."""
    base = tmp_path_factory.mktemp("values")
    made = Harness.create(base, policy="permissive", storage_dir=base / "workspace" / STORE)
    yield made
    made.close()


ATTACKS = [
    "git stash -a",
    "git stash push --all -m x",
    "git stash --include-untracked",
    "git stash push -m x -a",
    "git stash push -m 'x' -a",
    "git stash push -m 'x -a' -u",
    "git stash push --message='-m' --all",
    "git stash push --message x --include-untracked",
    "git stash -qm x -a",
    "git stash push -am x",
    'git stash push -m "-a" --all',
    "git commit -qm 'a -a' && git stash -u",
    "git stash push -m 'x' -- . && git stash push -a",
    "bash -c \"git stash push -m 'x -a' -a\"",
]


@pytest.mark.parametrize("command", ATTACKS)
def test_a_stash_of_untracked_files_is_refused(inside: Harness, command: str) -> None:
    decision = inside.gate.decide("Bash", {"command": command})
    assert decision.blocked, command
    assert decision.evaluation.rule_id == "protect-audit-store"
    assert "tamper_attempt" in decision.alerts


BENIGN = [
    "git stash push -m 'x -a'",
    "git stash push -m '-a'",
    'git stash -m "--all"',
    "git stash -m'-u'",
    "git stash push --message '--include-untracked'",
    "git stash push --message='wip -a -u'",
    "git stash save 'wip -a'",
    "git stash push -m 'x -a' -- app",
    "git commit -qm 'stash -a later' --allow-empty",
    "git add -A && git commit -qm 'git stash -a is not run'",
]


@pytest.mark.parametrize("command", BENIGN)
def test_an_option_like_word_in_a_value_is_no_flag(inside: Harness, command: str) -> None:
    decision = inside.gate.decide("Bash", {"command": command})
    assert not decision.blocked, decision.message
    assert "tamper_attempt" not in decision.alerts


def test_the_benign_stash_runs_and_the_chain_stays_whole(tmp_path: Path) -> None:
    harness = Harness.create(
        tmp_path,
        template="python-service",
        policy="permissive",
        storage_dir=tmp_path / "workspace" / STORE,
    )
    try:
        (harness.root / "README.md").write_text("more\n", encoding="utf-8")
        result = harness.call("Bash", command="git stash push -m 'wip -a' && git stash list")
        assert result.status == "success", result.output
        assert "wip -a" in str(result.output)
        assert harness.verify().valid and harness.verdict == "PASS"
    finally:
        harness.close()


def test_a_joined_form_given_as_a_parameter_of_its_own_is_still_judged(tmp_path: Path) -> None:
    # The joined form of the benign command (`-m x -a`) is skipped as a target only because it
    # was read with its boundaries; the same text given as a parameter is a command, judged.
    store = tmp_path / "workspace" / STORE
    harness = Harness.create(
        tmp_path, template="python-service", policy="permissive", storage_dir=store
    )
    try:
        params = {"command": "git stash push -m 'x -a'", "script": "git stash push -m x -a"}
        assert harness.gate.decide("mcp__shell__run", params).blocked
        guard = StoreGuard(store, str(harness.root))
        targets = ["git stash push -m 'x -a'", "git stash push -m x -a"]
        assert guard.offending(targets, {"command": targets[0]}) is None
        assert guard.offending(targets, {"command": targets[0], "script": targets[1]})
    finally:
        harness.close()


def test_outside_the_repository_nothing_is_refused(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="permissive")
    try:
        assert not harness.gate.decide("Bash", {"command": "git stash -a"}).blocked
    finally:
        harness.close()
