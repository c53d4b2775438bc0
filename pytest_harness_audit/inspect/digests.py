"""Content digests of a workspace's files, and the fingerprints some protected files are
judged by instead of their whole content (:mod:`.exec_config`)."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable

from pytest_harness_audit.inspect.exec_config import (
    git_config_fingerprint,
    holds_permissions,
    is_git_config,
    settings_fingerprint,
)
from pytest_harness_audit.inspect.regular_files import read_regular

#: Racy files larger than this are not digested (their stat alone decides).
MAX_DIGEST_BYTES = 16 * 1024 * 1024


def protected_digest(root: str, relative: str, permissions_apart: bool = False) -> bytes | None:
    """What a snapshot keeps of a protected file: its content digest, or for a repository's
    configuration the fingerprint of its command keys, and for the host's settings, when their
    ``permissions`` are judged apart, the fingerprint of the rest (``None``: unreadable or too
    large)."""
    path = os.path.join(root, relative)
    kind = fingerprinted(relative, permissions_apart)
    if kind is None:
        return content_digest(path)
    data = read_regular(path, MAX_DIGEST_BYTES)
    return None if data is None or len(data) > MAX_DIGEST_BYTES else kind(data)


def fingerprinted(
    relative: str, permissions_apart: bool = False
) -> Callable[[bytes], bytes] | None:
    """How a protected file is judged when not by its whole content: a repository
    configuration by its command keys; the host's settings, when their ``permissions`` are
    judged apart, by the rest."""
    if is_git_config(relative):
        return git_config_fingerprint
    if permissions_apart and holds_permissions(relative):
        return settings_fingerprint
    return None


def content_digest(path: str) -> bytes | None:
    """The content digest a snapshot keeps of a racy or protected file (``None``: unreadable,
    or larger than :data:`MAX_DIGEST_BYTES`)."""
    data = read_regular(path, MAX_DIGEST_BYTES)
    if data is None or len(data) > MAX_DIGEST_BYTES:
        return None
    return hashlib.blake2b(data, digest_size=16).digest()


def tree_digest(root: str | os.PathLike[str]) -> str:
    """A digest of every entry under ``root`` (hidden ones and ``.git`` included): each one's
    path, kind and mode, and a file's content or a link's target. ``root``'s own mode is left
    out. A file too large, or not readable, counts by its size alone."""
    digest = hashlib.blake2b(digest_size=32)
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            entries = sorted(os.scandir(os.path.join(root, relative)), key=lambda e: e.name)
        except OSError:
            digest.update(f"?{relative}\0".encode(errors="surrogateescape"))
            continue
        for entry in entries:
            path = os.path.join(relative, entry.name)
            try:
                info = entry.stat(follow_symlinks=False)
                target = os.readlink(entry.path) if stat.S_ISLNK(info.st_mode) else ""
            except OSError:  # gone meanwhile
                digest.update(f"?{path}\0".encode(errors="surrogateescape"))
                continue
            digest.update(f"{path}\0{info.st_mode:o}\0".encode(errors="surrogateescape"))
            if stat.S_ISDIR(info.st_mode):
                pending.append(path)
            elif stat.S_ISLNK(info.st_mode):
                digest.update(os.fsencode(target))
            elif stat.S_ISREG(info.st_mode):
                data = read_regular(entry.path, MAX_DIGEST_BYTES, follow=False)
                if data is None or len(data) > MAX_DIGEST_BYTES:
                    digest.update(f"{info.st_size}".encode())
                else:
                    digest.update(hashlib.blake2b(data, digest_size=32).digest())
    return digest.hexdigest()
