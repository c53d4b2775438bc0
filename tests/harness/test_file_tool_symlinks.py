"""A scripted session: a symlink to a credential or persona file (one the repository came
with, or one a call made) is no way for a file tool call to read or write that file."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.workspace import create_workspace


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    """A ``safety`` session in a ``python-service`` workspace (it holds a ``.env``)."""
    root = tmp_path / "workspace"
    create_workspace(root, "python-service")
    session = Harness(root, storage_dir=tmp_path / "audit", policy="safety", session_id="s")
    yield session
    session.close()


def _blocked(harness: Harness, tool: str, **params: object) -> None:
    result = harness.call(tool, **params)
    assert result.evaluation.decision == "deny", (tool, params, result.evaluation.targets)
    assert result.status != "success"
    assert "K=" not in str(result.output or "")


def test_a_link_to_env_is_judged_as_env(harness: Harness) -> None:
    assert (harness.root / ".env").is_file()
    _blocked(harness, "Bash", command="ln -s .env notes.txt")  # the shell door refuses it
    os.symlink(".env", harness.root / "notes.txt")  # a link the repository came with
    # the files the session may read stay readable (before the denials climb the immune ladder)
    assert harness.call("Read", file_path="README.md").status == "success"
    assert harness.call("Grep", pattern="zq_none", path=".", glob="*.md").status == "success"
    assert harness.call("Glob", pattern=".e?v").status == "success"  # names, no content
    _blocked(harness, "Read", file_path="notes.txt")
    _blocked(harness, "Read", file_path=str(harness.root / "notes.txt"))
    _blocked(harness, "Grep", pattern="=", path=".", glob="notes.txt")
    _blocked(harness, "Grep", pattern="=", path="notes.txt")
    _blocked(harness, "Grep", pattern="=", path=".", glob=".e?v")
    _blocked(harness, "Grep", pattern="=", path=".", glob="{.env,x}")


def test_a_linked_folder_of_keys_is_judged_as_that_folder(harness: Harness) -> None:
    (harness.root / ".ssh").mkdir()
    (harness.root / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    assert harness.call("Bash", command="ln -s .ssh cfg").status == "success"
    _blocked(harness, "Read", file_path="cfg/id_rsa")
    _blocked(harness, "Grep", pattern="BEGIN", path="cfg")
    _blocked(harness, "Glob", pattern="*", path="cfg")


def test_a_linked_persona_file_cannot_be_written(harness: Harness) -> None:
    (harness.root / "SOUL.md").write_text("me\n")
    os.symlink("SOUL.md", harness.root / "about.txt")
    _blocked(harness, "Write", file_path="about.txt", content="someone else\n")
    _blocked(harness, "Write", file_path="about.txt/", content="someone else\n")
    _blocked(harness, "Edit", file_path="about.txt", old_string="me", new_string="you")
    assert (harness.root / "SOUL.md").read_text() == "me\n"
