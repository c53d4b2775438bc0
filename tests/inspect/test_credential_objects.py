"""Credential blobs kept loose and found in packs (:mod:`.credential_objects`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pytest_harness_audit.inspect.credential_objects import (
    credential_blob_ids,
    object_id,
    pack_all_but,
    packed,
    stored_objects,
)


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _repository(root: Path) -> Path:
    root.mkdir()
    (root / ".env").write_text("API_KEY=sk-test-0123456789abcdef\n")
    (root / "README.md").write_text("hello\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x")
    return root


def test_the_blob_kept_out_stays_loose_and_the_rest_is_packed(tmp_path: Path) -> None:
    root = _repository(tmp_path / "r")
    ids = credential_blob_ids(str(root), [".env"])
    env = _git(root, "rev-parse", "HEAD:.env")
    assert ids[env] == ".env"
    assert pack_all_but(str(root), ids)
    assert stored_objects(str(root), [".env"]) == {f".git/objects/{env[:2]}/{env[2:]}": ".env"}
    readme = _git(root, "rev-parse", "HEAD:README.md")
    assert packed(str(root), [env, readme]) == {readme}
    assert _git(root, "fsck", "--no-dangling") == ""


def test_a_repack_puts_it_in_a_pack(tmp_path: Path) -> None:
    root = _repository(tmp_path / "r")
    env = _git(root, "rev-parse", "HEAD:.env")
    assert packed(str(root), [env]) == frozenset()
    _git(root, "repack", "-a", "-q")
    assert packed(str(root), [env]) == {env}


def test_object_id_of_a_loose_path() -> None:
    assert object_id(".git/objects/ab/cdef") == "abcdef"


def test_no_repository_stores_nothing(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("A=b\n")
    assert stored_objects(str(tmp_path), [".env"]) == {}
    assert packed(str(tmp_path), ["ab" * 20]) == frozenset()
