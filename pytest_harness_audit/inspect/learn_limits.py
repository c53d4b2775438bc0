"""The secrets of a project learned within bounds, for a door that learns them at every event.

Every known value costs the scanner hundreds of patterns (its encodings, substitutions, near
copies: :mod:`._forms`), some 20 ms and 3 MB a value to build in a process. The host hook door
builds them anew in each event's process, in whatever folder the host runs in: a home folder or
a monorepo with thousands of credential files (test fixtures, vendored packages) would take
minutes and gigabytes. So :func:`learn_bounded` learns what a project's own credential files
hold, nearest the top first (the project's ``.env`` before a fixture's) — except that files
changed since the session started come after all the others: an agent cannot push the owner's
secrets past the bounds with credential files of its own — and stops at the first
of :data:`MAX_LEARN_ENTRIES` entries walked, :data:`MAX_LEARN_FILES` credential files read,
:data:`MAX_LEARN_BYTES` read in all, or :data:`MAX_LEARNED_PIECES` pieces of values
learned. What it did not see is said (:attr:`Learned.unseen`), never taken for "no secret".
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass

from pytest_harness_audit.inspect.learn import (
    MAX_FILE_BYTES,
    SKIPPED_DIRS,
    file_values,
    is_secret_file,
)
from pytest_harness_audit.inspect.regular_files import read_regular
from pytest_harness_audit.inspect.secrets import LONG_VALUE, PIECE_LENGTH, SecretRegistry

#: Entries (files and folders) the walk for credential files looks at, at most.
MAX_LEARN_ENTRIES = 50_000
#: Credential files read, at most.
MAX_LEARN_FILES = 256
#: Bytes of credential files read in all, at most.
MAX_LEARN_BYTES = 8 * 1024 * 1024
#: Pieces of values (a value up to :data:`~.secrets.LONG_VALUE` characters is one) learned.
MAX_LEARNED_PIECES = 96


@dataclass(frozen=True)
class Learned:
    """What :func:`learn_bounded` learned: how many values, why it stopped early (``None``:
    every credential file of the folder was read and every value learned), and the files that
    held values (relative paths: the owner's credential files, :mod:`.credential_changes`)."""

    values: int
    unseen: str | None = None
    paths: tuple[str, ...] = ()


def pieces(value: str) -> int:
    """How many pieces the scanner matches ``value`` as (:func:`~.secrets._pieces`)."""
    return 1 if len(value) <= LONG_VALUE else max(1, len(value) // PIECE_LENGTH)


def credential_paths(
    root: str, limit: int = MAX_LEARN_ENTRIES, skip: str | None = None
) -> tuple[list[str], bool]:
    """``(relative paths, complete)``: the credential files under ``root``, shallowest first
    (then by name), in a walk of at most ``limit`` entries; ``skip`` (a relative path, the
    audit store) is left out. ``complete`` is false when the walk stopped at ``limit``."""
    found: list[str] = []
    queue: deque[tuple[str, str]] = deque([(root, "")])
    seen = 0
    while queue:
        folder, prefix = queue.popleft()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            relative = prefix + entry.name
            if relative == skip:
                continue
            seen += 1
            if seen > limit:
                return found, False
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED_DIRS:
                        queue.append((entry.path, relative + "/"))
                    continue
            except OSError:
                continue
            if is_secret_file(relative):
                found.append(relative)
    return found, True


def _changed_since(path: str, since_ns: int) -> bool:
    """Whether the file at ``path`` changed (its inode's change time) at ``since_ns`` or later;
    one that cannot be looked at counts as changed."""
    try:
        return os.lstat(path).st_ctime_ns >= since_ns
    except OSError:
        return True


def learn_bounded(
    registry: SecretRegistry,
    root: str,
    *,
    entries: int = MAX_LEARN_ENTRIES,
    files: int = MAX_LEARN_FILES,
    total: int = MAX_LEARN_BYTES,
    learned: int = MAX_LEARNED_PIECES,
    skip: str | None = None,
    since_ns: int | None = None,
) -> Learned:
    """Add to ``registry`` the secrets of ``root``'s credential files, within the bounds (see
    the module doc); the result says why it stopped early, if it did. ``since_ns``: when the
    session started (``time.time_ns()``); files changed since are read after the others."""
    paths, complete = credential_paths(root, entries, skip)
    if since_ns is not None:
        paths.sort(key=lambda relative: _changed_since(os.path.join(root, relative), since_ns))
    unseen = None if complete else f"the folder has more than {entries} entries"
    added = used = read = 0
    known: set[str] = set()
    holding: list[str] = []
    for count, relative in enumerate(paths):
        if count >= files:
            unseen = f"the folder has more than {files} credential files"
            break
        if read >= total:
            unseen = f"its credential files hold more than {total} bytes"
            break
        data = read_regular(os.path.join(root, relative), MAX_FILE_BYTES, follow=False)
        if data is None or len(data) > MAX_FILE_BYTES or b"\0" in data:
            continue
        read += len(data)
        text = data.decode("utf-8", "replace")
        values = list(file_values(text, relative))
        if values:
            holding.append(relative)
        for key, value in values:
            if value in known:
                continue
            if used + pieces(value) > learned:
                reason = f"its credential files hold more than {learned} values (or pieces)"
                return Learned(added, reason, tuple(holding))
            known.add(value)
            if registry.add(value, f"{relative}:{key}"[:200]) is not None:
                added += 1
                used += pieces(value)
    return Learned(added, unseen, tuple(holding))


__all__ = [
    "MAX_LEARNED_PIECES",
    "MAX_LEARN_BYTES",
    "MAX_LEARN_ENTRIES",
    "MAX_LEARN_FILES",
    "Learned",
    "credential_paths",
    "learn_bounded",
    "pieces",
]
