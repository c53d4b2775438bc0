"""``patch`` rewrites the file it is given: ``patch .git/hooks/pre-commit p.diff`` writes a hook
as ``cp evil .git/hooks/pre-commit`` does, yet the reading took the file for one it reads. Its
``-o OUT`` and ``-r REJECTS`` files are written too, in the folder of ``-d DIR``; ``--dry-run``
writes nothing. Judged through the ``safety`` preset."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, SECRET, safety_in, secret_workspace

EXEC_CONFIG = ("deny", "deny-exec-config-write")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(tmp_path, {"README.md": "# x\n", "app/main.py": "print(1)\n"}, ("app",))


PATCHED = [
    "patch .git/hooks/pre-commit /tmp/p.diff",
    "patch .git/config /tmp/p.diff",
    "patch -o .git/hooks/pre-commit README.md /tmp/p.diff",
    "patch --output=.git/hooks/pre-commit README.md /tmp/p.diff",
    "patch -i /tmp/p.diff .git/hooks/pre-commit",
    "patch -d .git/hooks pre-commit /tmp/p.diff",
    "patch --directory=.git hooks/pre-commit < /tmp/p.diff",
    "patch -r .git/hooks/pre-push app/main.py /tmp/p.diff",
    "patch -p0 -N .gitconfig /tmp/p.diff",
]


@pytest.mark.parametrize("command", PATCHED)
def test_a_file_patch_rewrites_is_a_write(root: Path, command: str) -> None:
    assert safety_in(command, root) == EXEC_CONFIG


def test_a_listing_patched_afterwards_still_holds_its_names(root: Path) -> None:
    assert safety_in("ls -a > /tmp/l; patch /tmp/l /tmp/p.diff; xargs cat < /tmp/l", root) == SECRET


BENIGN = [
    "patch -p1 < fix.diff",
    "patch -p1 -i fix.diff",
    "patch app/main.py fix.diff",
    "patch -o /tmp/out.py app/main.py fix.diff",
    "patch --dry-run .git/config /tmp/p.diff",
    "git diff > x.diff && patch -R -p1 < x.diff",
]


@pytest.mark.parametrize("command", BENIGN)
def test_look_alikes_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED
