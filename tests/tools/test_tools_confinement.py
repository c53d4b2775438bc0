"""Every path parameter that resolves outside the workspace is refused, whatever the policy said."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.tools import ToolBox


def escape_message(raw: str) -> str:
    return f"path escapes the workspace: {raw}"


def calls_on(path: str) -> list[tuple[str, dict[str, Any]]]:
    """One call per path-taking tool, aimed at ``path``."""
    return [
        ("Read", {"file_path": path}),
        ("Write", {"file_path": path, "content": "pwned\n"}),
        ("Edit", {"file_path": path, "old_string": "top", "new_string": "pwned"}),
        ("Glob", {"pattern": "*", "path": path}),
        ("Grep", {"pattern": "secret", "path": path}),
    ]


def assert_refused_everywhere(toolbox: ToolBox, raw: str, outside: Path) -> None:
    for tool, params in calls_on(raw):
        outcome = toolbox.run(tool, params)
        assert outcome.status == "error", (tool, outcome)
        assert outcome.error_message == escape_message(raw), (tool, outcome)
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_dot_dot_escape_is_refused(toolbox: ToolBox, outside: Path) -> None:
    assert_refused_everywhere(toolbox, "../outside/secret.txt", outside)


def test_dot_dot_inside_a_subpath_is_refused(toolbox: ToolBox, root: Path, outside: Path) -> None:
    (root / "app").mkdir()
    assert_refused_everywhere(toolbox, "app/../../outside/secret.txt", outside)


def test_absolute_path_outside_is_refused(toolbox: ToolBox, outside: Path) -> None:
    assert_refused_everywhere(toolbox, str(outside / "secret.txt"), outside)


def test_symlinked_file_pointing_outside_is_refused(
    toolbox: ToolBox, root: Path, outside: Path
) -> None:
    (root / "innocent.txt").symlink_to(outside / "secret.txt")
    assert_refused_everywhere(toolbox, "innocent.txt", outside)


def test_intermediate_symlinked_directory_is_refused(
    toolbox: ToolBox, root: Path, outside: Path
) -> None:
    (root / "vendor").symlink_to(outside, target_is_directory=True)
    assert_refused_everywhere(toolbox, "vendor/secret.txt", outside)
    outcome = toolbox.run("Write", {"file_path": "vendor/new/file.txt", "content": "x"})
    assert outcome.error_message == escape_message("vendor/new/file.txt")
    assert not (outside / "new").exists()


def test_dangling_symlink_to_outside_is_refused_for_write(
    toolbox: ToolBox, root: Path, outside: Path
) -> None:
    (root / "later.txt").symlink_to(outside / "created-by-agent.txt")
    outcome = toolbox.run("Write", {"file_path": "later.txt", "content": "x"})
    assert outcome.error_message == escape_message("later.txt")
    assert not (outside / "created-by-agent.txt").exists()


def test_glob_pattern_cannot_climb_out(toolbox: ToolBox, outside: Path) -> None:
    outcome = toolbox.run("Glob", {"pattern": "../outside/*"})
    assert outcome.error_message == "Glob: pattern must not contain '..' segments: ../outside/*"
    outcome = toolbox.run("Glob", {"pattern": str(outside) + "/*"})
    assert outcome.error_message == escape_message(str(outside) + "/*")


def test_walks_skip_symlinks_that_lead_outside(toolbox: ToolBox, root: Path, outside: Path) -> None:
    (root / "mine.txt").write_text("my secret notes\n")
    (root / "linked.txt").symlink_to(outside / "secret.txt")
    (root / "linked-dir").symlink_to(outside, target_is_directory=True)
    assert toolbox.run("Glob", {"pattern": "**/*.txt"}).output == "mine.txt"
    assert toolbox.run("Grep", {"pattern": "secret"}).output == "mine.txt"


def test_paths_inside_the_root_are_fine_in_every_spelling(toolbox: ToolBox, root: Path) -> None:
    (root / "app").mkdir()
    (root / "app" / "m.py").write_text("x = 1\n")
    (root / "alias").symlink_to(root / "app", target_is_directory=True)
    for spelling in [
        "app/m.py",
        "./app/m.py",
        "app/../app/m.py",
        str(root / "app" / "m.py"),
        "~/app/m.py",
        "alias/m.py",
    ]:
        outcome = toolbox.run("Read", {"file_path": spelling})
        assert outcome.output == "     1\tx = 1", spelling


def test_absolute_root_through_a_symlinked_parent_is_inside(tmp_path: Path) -> None:
    real = tmp_path / "real-ws"
    real.mkdir()
    (real / "f.txt").write_text("hi\n")
    (tmp_path / "link-ws").symlink_to(real, target_is_directory=True)
    toolbox = ToolBox(tmp_path / "link-ws")
    outcome = toolbox.run("Read", {"file_path": str(tmp_path / "link-ws" / "f.txt")})
    assert outcome.output == "     1\thi"


def test_embedded_nul_byte_is_an_error_not_a_crash(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Read", {"file_path": "a\0b"})
    assert outcome.status == "error"
    assert outcome.error_message is not None
    assert outcome.error_message.startswith("invalid path 'a\\x00b'")


def test_bash_is_not_path_confined_but_starts_at_the_root_with_home_there(
    toolbox: ToolBox, root: Path
) -> None:
    # Bash can name any path; the policy governs it. The tool only makes the root its world:
    # working directory and HOME, so `~` and relative paths stay inside.
    outcome = toolbox.run("Bash", {"command": "pwd; cd ~ && pwd; echo hi > ~/note.txt"})
    real_root = os.path.realpath(root)
    assert outcome.output == f"{real_root}\n{real_root}\n"
    assert (root / "note.txt").read_text() == "hi\n"


@pytest.mark.parametrize("raw", ["~", "~/"])
def test_tilde_alone_is_the_root(toolbox: ToolBox, root: Path, raw: str) -> None:
    (root / "f.txt").write_text("x\n")
    assert toolbox.run("Glob", {"pattern": "*.txt", "path": raw}).output == "f.txt"
