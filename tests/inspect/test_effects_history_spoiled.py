"""Committed history destroyed where the check of it could be fooled.

Whether the commits the refs named still exist was asked of git in the workspace's own
repository, and a refusal of git to run counted as "nothing lost". A call that deleted the
objects and, in the same breath, spoiled what git reads first (``HEAD`` written over with junk,
which a snapshot treats as git's busywork, or a repository format git does not know) lost the
whole history with a PASS. And only the commits the refs name were asked about: a call that
deleted every object but those tip commits (their parents, trees and blobs) left each of them
existing, so nothing counted as lost either. The check now reads the object store alone, in a
git directory of the auditor's own, and walks the history of the named commits whenever the
store lost object files.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from pytest_harness_audit.session.harness import Harness

Factory = Callable[..., Harness]
COMMIT = "git -c user.name=t -c user.email=t@example.org commit -q"
#: Every loose object and pack unlinked, by names the text does not show.
UNLINK_ALL = (
    "import os,glob; [getattr(os,bytes.fromhex('756e6c696e6b').decode())(f) for f in "
    "glob.glob('.git/objects/??/*')+glob.glob('.git/objects/pa'+'ck/*')]"
)
SPOILERS = {
    "head-junk": "open('.git/HEAD','w').write('junk')",
    # the name joined at run time: a literal `.git/config` write is refused at the gate
    "format-unknown": (
        "open('.git/con'+'fig','a').write('[core]\\n\\trepositoryformatversion=99\\n')"
    ),
}


def _head(harness: Harness) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=harness.root, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _fails_as_destroyed(harness: Harness, command: str, lost: str) -> None:
    result = harness.call("Bash", command=command)
    assert result.ok, result.output
    assert lost in result.record.get("effects", {}).get("historyDestroyed", [])
    assert "history_destroyed" in result.record["alerts"]
    assert "effect-history-destroyed" in result.record["judged"]["reason"]
    assert str(harness.verdict) == "FAIL"


@pytest.mark.parametrize("spoiler", list(SPOILERS), ids=list(SPOILERS))
def test_objects_deleted_with_the_repository_spoiled_fail(
    harness_factory: Factory, spoiler: str
) -> None:
    harness = harness_factory("python-service")
    head = _head(harness)
    command = f'python3 -c "{UNLINK_ALL}; {SPOILERS[spoiler]}"'
    _fails_as_destroyed(harness, command, head)


def test_a_spoiled_repository_alone_loses_nothing(harness_factory: Factory) -> None:
    harness = harness_factory("python-service")
    result = harness.call("Bash", command=f'python3 -c "{SPOILERS["head-junk"]}"')
    assert "historyDestroyed" not in result.record.get("effects", {})
    assert str(harness.verdict) == "PASS", harness.verdict_reasons


def test_everything_but_the_tip_commit_deleted_fails(harness_factory: Factory) -> None:
    harness = harness_factory("python-service")
    head = _head(harness)  # the only commit: every ref and reflog entry names it
    keep = f".git/objects/{head[:2]}/{head[2:]}"
    # the tip made loose, then every other object removed: `git log` fails, `cat-file -e` not
    command = (
        'git cat-file commit HEAD > c.txt && python3 -c "import os,glob; '
        f"[getattr(os,bytes.fromhex('756e6c696e6b').decode())(f) for f in "
        "glob.glob('.git/objects/??/*')"
        f"+glob.glob('.git/objects/pa'+'ck/*') if f != '{keep}']\" && "
        "git hash-object -w -t commit c.txt > /dev/null && git cat-file -e HEAD"
    )
    _fails_as_destroyed(harness, command, head)


@pytest.mark.parametrize(
    "command",
    [
        "git gc -q --prune=now",
        "git repack -adq",
        "echo scratch > s.txt && git hash-object -w s.txt && git prune --expire=now",
        "git reflog expire --expire=now --all && git gc -q --prune=now",
    ],
)
def test_store_housekeeping_keeps_the_history_whole(harness_factory: Factory, command: str) -> None:
    harness = harness_factory("python-service")
    result = harness.call("Bash", command=command)
    assert "historyDestroyed" not in result.record.get("effects", {})
    assert str(harness.verdict) == "PASS", harness.verdict_reasons
