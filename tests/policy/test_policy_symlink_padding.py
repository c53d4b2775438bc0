"""A workspace symlink to a credential file is followed however many names come before it.

A command's paths were followed through workspace symlinks for its first 128 paths only:
``cp d0.txt … d139.txt notes.txt OUT/`` (``notes.txt`` → ``.env``) copied the ``.env`` out of
the workspace, allowed by its text and only WARN by its effect (a credential file read), where
``cp notes.txt OUT/`` is refused. Every path a readable command names is now followed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_harness_audit.policy import Policy

SAFETY = Policy.preset("safety")


@pytest.fixture
def root(tmp_path: Path) -> str:
    (tmp_path / ".env").write_text("API_KEY=x\n", encoding="utf-8")
    os.symlink(".env", tmp_path / "notes.txt")
    for index in range(600):
        (tmp_path / f"d{index}.txt").write_text("x\n", encoding="utf-8")
    return str(tmp_path)


def _cp(count: int, last: str) -> str:
    return "cp " + " ".join(f"d{index}.txt" for index in range(count)) + f" {last} /tmp/out/"


@pytest.mark.parametrize("decoys", [0, 140, 600])
def test_a_symlink_to_a_credential_file_behind_many_names_is_refused(
    root: str, decoys: int
) -> None:
    decided = SAFETY.evaluate("Bash", {"command": _cp(decoys, "notes.txt")}, root=root)
    assert (decided.decision, decided.rule_id) == ("deny", "deny-secret-files")


def test_benign_twin_many_ordinary_files_copied_are_allowed(root: str) -> None:
    assert SAFETY.evaluate("Bash", {"command": _cp(600, "d1.txt")}, root=root).decision == "allow"
