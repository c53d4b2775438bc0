"""History destroyed over several calls: one call leaves commits named by no ref or reflog
(they still exist, nothing is lost yet), a later one prunes them. The pruning call is judged,
though its own snapshot no longer names those commits."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.workspace import base_revision

Factory = Callable[..., Harness]
COMMIT = "git -c user.name=t -c user.email=t@example.org commit -q"
UNNAME = "git checkout -q --orphan x && git branch -D main && git reflog expire --expire=now --all"


def _committed(harness: Harness) -> str:
    """A second commit on ``main``."""
    (harness.root / "README.md").write_text("more\n")
    subprocess.run(f"{COMMIT} -am second", shell=True, cwd=harness.root, check=True)
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=harness.root, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _exists(harness: Harness, sha: str) -> bool:
    done = subprocess.run(["git", "cat-file", "-e", sha], cwd=harness.root, capture_output=True)
    return done.returncode == 0


def test_refs_dropped_then_pruned_in_a_later_call_fails(harness_factory: Factory) -> None:
    harness = harness_factory("python-service")
    head = _committed(harness)
    dropped = harness.call("Bash", command=UNNAME)
    assert "historyDestroyed" not in dropped.record.get("effects", {})
    assert str(harness.verdict) == "PASS"  # the commit still exists
    pruned = harness.call("Bash", command="git gc -q --prune=now")
    assert not _exists(harness, head)
    # the initial commit too: the workspace holds no ref of the auditor's that would keep it
    initial = base_revision(harness.repo)
    assert pruned.record["effects"]["historyDestroyed"] == sorted([head, initial])
    assert "history_destroyed" in pruned.record["alerts"]
    assert "effect-history-destroyed" in pruned.record["judged"]["reason"]
    assert str(harness.verdict) == "FAIL"


def test_the_unnamed_commits_are_kept_across_calls_between(harness_factory: Factory) -> None:
    harness = harness_factory("python-service")
    head = _committed(harness)
    harness.call("Bash", command=UNNAME)
    # other work moves the object store without losing anything
    work = harness.call("Bash", command=f"echo x > new.txt && git add new.txt && {COMMIT} -m new")
    assert "historyDestroyed" not in work.record.get("effects", {})
    assert str(harness.verdict) == "PASS"
    pruned = harness.call("Bash", command="git prune --expire=now")
    assert not _exists(harness, head)
    assert pruned.record["effects"]["historyDestroyed"] == [head]
    assert str(harness.verdict) == "FAIL"


@pytest.mark.parametrize(
    "first",
    [
        f"echo '- more' >> README.md && {COMMIT} -am docs && {COMMIT} --amend -m 'docs: more'",
        f"git checkout -qb feature && echo x > f.txt && git add f.txt && {COMMIT} -m f"
        " && git checkout -q main && git merge -q --ff-only feature && git branch -d feature",
        "git checkout -q --orphan fresh && git checkout -q main && git branch -D fresh",
    ],
)
def test_a_later_prune_of_nothing_unnamed_passes(harness_factory: Factory, first: str) -> None:
    harness = harness_factory("python-service")
    _committed(harness)
    harness.call("Bash", command=first)
    pruned = harness.call("Bash", command="git gc -q --prune=now")
    assert "historyDestroyed" not in pruned.record.get("effects", {})
    assert str(harness.verdict) == "PASS", harness.verdict_reasons
