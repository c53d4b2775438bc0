"""Content digests of a workspace's files, and the fingerprints some protected files are
judged by instead of their whole content (:mod:`.exec_config`)."""

from __future__ import annotations

import hashlib
import os
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
