"""Which texts account for their reads of git's stored objects (:mod:`.object_readers`)."""

from __future__ import annotations

import pytest

from pytest_harness_audit.policy.shell.object_readers import objects_read_in_view

ROOT = "/w"


@pytest.mark.parametrize(
    "text",
    [
        "git log --stat",
        "git show --stat HEAD",
        "git status",
        "git diff",
        "git -C sub log -p | head -50",
        "cd app && git blame service.py",
        "grep -rn TODO . | sort",
        "git gc -q",
        "git repack -adq && git prune-packed",
        "git commit-graph write --reachable && git multi-pack-index write && git pack-refs --all",
        "git log -p > notes/log.txt",
        "git diff > /dev/null",
    ],
)
def test_git_and_what_the_agent_sees_account_for_their_reads(text: str) -> None:
    assert objects_read_in_view(text, ROOT)


@pytest.mark.parametrize(
    "text",
    [
        "python3 -c \"import subprocess; subprocess.run(['git','show','HEAD:.env'])\"",
        "python3 t.py",
        "./run.sh",
        "pytest -q",
        "cat .git/objects/ab/cdef",
        "git show HEAD | python3 -c 'import sys; print(sys.stdin.read()[::-1])'",
        "git -c alias.x='!python3 a.py' x",
        "git -c core.pager=./p log -p",
        "git rebase -x 'python3 y' HEAD~1",
        "git lfs ls-files",
        "git bisect run ./check.sh",
        "git verify-commit HEAD",
        "git log -p > /tmp/log.txt",
        "cd /tmp && git -C /w log -p > log.txt",
        "GIT_EXTERNAL_DIFF=./x git diff",
        "./git log --stat",
        "git archive --exec=./x --remote=. HEAD",
        "timeout 5 git log --stat",
        "",
    ],
)
def test_other_programs_do_not(text: str) -> None:
    assert not objects_read_in_view(text, ROOT)
