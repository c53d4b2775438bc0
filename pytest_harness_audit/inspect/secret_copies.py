"""A known secret copied in clear into another workspace file: the file's effect, not its text.

``git show HEAD > notes.txt`` (over a commit holding ``.env``), a script writing a report with
the key in it, ``cp`` by a name built at run time: the secret never passes through an output or
a payload, and the credential file itself may never be opened (git reads its own objects). What
shows it is the result: a file the call created or modified now holds a known secret, in any
form the matcher finds whole (:meth:`~.secrets.SecretRegistry.scan`). A credential file (by the
policy's credential patterns: ``.env``, ``.env.local``, keys …) is where secrets belong and is
left out; so are symlinks (a second name, not a copy) and anything but a regular file.

Bounded work: only the files the snapshot saw created or modified are read, at most
:data:`MAX_FILES` of them and :data:`~.secrets.MAX_SCAN_CHARS` bytes in all; a file larger than
:data:`MAX_FILE_BYTES` is read at its head and its tail. Nothing is read when nothing changed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping

from pytest_harness_audit.inspect.secrets import MAX_SCAN_CHARS, SecretRegistry
from pytest_harness_audit.policy.sensitive import is_credential_path

#: Files read per call at most.
MAX_FILES = 256
#: Bytes read of one file at most (its head and tail, half each, when it is larger).
MAX_FILE_BYTES = 1024 * 1024

_Stat = tuple[int, int, int, int]


def _read(path: str, size: int, budget: int) -> bytes:
    """At most ``budget`` bytes of the regular file at ``path``: all of it, or its head and
    tail (``O_NOFOLLOW``: a link put in its place meanwhile is not followed)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        if size <= budget:
            return os.read(fd, budget)
        half = budget // 2
        head = os.pread(fd, half, 0)
        return head + b"\n" + os.pread(fd, half, max(size - half, half))
    finally:
        os.close(fd)


def secret_copies(
    root: str,
    paths: Iterable[str],
    files: Mapping[str, _Stat],
    secrets: SecretRegistry,
) -> tuple[str, ...]:
    """The ``paths`` (created or modified; ``files`` their stat now) that hold a known secret
    and are no credential files, sorted."""
    if not secrets:
        return ()
    found: list[str] = []
    left = MAX_SCAN_CHARS
    count = 0
    for path in sorted(set(paths)):
        info = files.get(path)
        if info is None or not stat.S_ISREG(info[3]) or info[0] == 0:
            continue
        if is_credential_path(path):
            continue
        if count >= MAX_FILES or left <= 0:
            break
        count += 1
        try:
            data = _read(os.path.join(root, path), info[0], min(MAX_FILE_BYTES, left))
        except OSError:
            continue
        left -= len(data)
        if data and secrets.scan(data, budget=len(data)).findings:
            found.append(path)
    return tuple(found)
