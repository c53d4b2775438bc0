"""``replace_file``: the one way files are written whole or not at all."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_harness_audit.audit.atomic_file import replace_file


def test_writes_the_bytes_and_makes_the_folder(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "file.json"
    replace_file(target, b"{}\n", fsync=True)
    assert target.read_bytes() == b"{}\n"
    replace_file(target, b"[]\n")
    assert target.read_bytes() == b"[]\n"
    assert [p.name for p in target.parent.iterdir()] == ["file.json"]


def test_mode_is_set_else_private(tmp_path: Path) -> None:
    shared, private = tmp_path / "page.html", tmp_path / "report.yaml"
    replace_file(shared, b"x", mode=0o644)
    replace_file(private, b"x")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o644
    assert stat.S_IMODE(private.stat().st_mode) == 0o600


def test_a_link_at_the_path_is_replaced_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep", encoding="utf-8")
    target = tmp_path / "spans.json"
    target.symlink_to(elsewhere)
    replace_file(target, b"new")
    assert not target.is_symlink() and target.read_bytes() == b"new"
    assert elsewhere.read_text(encoding="utf-8") == "keep"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        replace_file(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["file.txt"]


def test_a_folder_at_the_path_fails_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(OSError):
        replace_file(tmp_path / "taken", b"x")
    assert os.listdir(tmp_path) == ["taken"]
