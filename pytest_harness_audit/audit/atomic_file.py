"""Files written whole or not at all: a reader sees the old bytes or the new ones, never half.

The bytes go to a temporary file in the target's folder, which then replaces the target
(``os.replace``: atomic on one file system, and it replaces a link planted at the path rather
than writing through it). On any failure only the temporary file is removed, and the error is
raised.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def replace_file(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    mode: int | None = None,
    fsync: bool = False,
) -> None:
    """Write ``data`` to ``path`` atomically, its folder made when missing.

    ``mode``: the file's permission bits (else the temporary file's, ``0o600``); ``fsync``:
    the bytes reach the disk before the rename, so a crash leaves the old file or the new one.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            if fsync:
                stream.flush()
                os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def read_own_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a file this package wrote whole (:func:`replace_file`): a regular file,
    never through a link, and never a FIFO or device put in its place, whose read would hang
    the reader (``OSError`` for each, as for a missing file)."""
    flags = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{os.fspath(path)} is not a regular file")
        return handle.read()


__all__ = ["read_own_file", "replace_file"]
