"""Files written whole or not at all: a reader sees the old bytes or the new ones, never half.

The bytes go to a temporary file in the target's folder, which then replaces the target
(``os.replace``: atomic on one file system, and it replaces a link planted at the path rather
than writing through it). On any failure only the temporary file is removed, and the error is
raised.
"""

from __future__ import annotations

import contextlib
import os
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


__all__ = ["replace_file"]
