"""Ordinary edits the "emptied" judgement must not take for lost content."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

from pytest_harness_audit.session.harness import Harness

Factory = Callable[..., Harness]
COMMIT = ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm"]
POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 12\n".format("a" * 64)


def _git(harness: Harness, *args: str) -> None:
    subprocess.run(["git", *args], cwd=harness.root, capture_output=True, check=True)


def test_a_git_lfs_file_regenerated_is_no_loss(harness_factory: Factory) -> None:
    # git holds an LFS pointer (text); the checkout holds the object (binary), as git-lfs
    # leaves it: writing a new binary there is an ordinary edit
    harness = harness_factory("python-service")
    asset = harness.root / "model.bin"
    asset.write_text(POINTER, encoding="utf-8")
    _git(harness, "add", "model.bin")
    _git(harness, *COMMIT, "lfs")
    asset.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00old")
    regenerate = "printf '\\211PNG\\r\\n\\032\\n\\000\\001new' > model.bin"
    result = harness.call("Bash", command=regenerate)
    assert result.record["effects"].get("emptied", []) == []
    assert "files_deleted" not in result.record.get("alerts", [])


def test_a_git_lfs_file_blanked_is_still_emptied(harness_factory: Factory) -> None:
    harness = harness_factory("python-service")
    asset = harness.root / "model.bin"
    asset.write_text(POINTER, encoding="utf-8")
    _git(harness, "add", "model.bin")
    _git(harness, *COMMIT, "lfs")
    asset.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00old")
    result = harness.call("Bash", command="head -c 12 /dev/zero > model.bin")
    assert result.record["effects"]["emptied"] == ["model.bin"]


def test_a_file_rewritten_in_latin_1_is_no_loss(harness_factory: Factory) -> None:
    # not UTF-8, but text: an accented name in a Latin-1 file is an ordinary edit
    harness = harness_factory("python-service")
    result = harness.call("Bash", command="printf 'Author: Jos\\351 N\\372\\361ez\\n' >> README.md")
    assert b"\xe9" in (harness.root / "README.md").read_bytes()
    assert result.record["effects"].get("emptied", []) == []
    assert "files_deleted" not in result.record.get("alerts", [])


def test_a_small_file_overwritten_with_noise_is_still_emptied(harness_factory: Factory) -> None:
    harness = harness_factory("python-service")
    noise = "import os; open('app/__init__.py', 'wb').write(bytes(range(128, 192)))"
    (harness.root / "app" / "__init__.py").write_text("VERSION = 1\n", encoding="utf-8")
    _git(harness, "add", "app/__init__.py")
    _git(harness, *COMMIT, "version")
    result = harness.call("Bash", command=f'python3 -c "{noise}"')
    assert result.record["effects"]["emptied"] == ["app/__init__.py"]
