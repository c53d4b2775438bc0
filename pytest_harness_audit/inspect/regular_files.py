"""Reading a workspace file the agent may have swapped for something that is not a file.

The agent can put a FIFO, a device or a link where the harness will read a file (``mkfifo
.env.local``, ``ln -s /dev/zero .env``). A plain ``open`` of a FIFO blocks until some process
writes to it, so the harness would hang inside its own snapshot or secret learning, and with it
the door that waits for an answer. :func:`read_regular` opens without blocking
(``O_NONBLOCK``), checks on the open descriptor that it is a regular file, and reads a bounded
number of bytes.
"""

from __future__ import annotations

import os
import stat


def read_regular(path: str | os.PathLike[str], limit: int, *, follow: bool = True) -> bytes | None:
    """At most ``limit + 1`` bytes of the regular file at ``path`` (one more than ``limit``
    tells the caller it is larger); ``None`` when it is not a regular file (a FIFO, a device,
    a folder, with ``follow=False`` a link) or cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        wanted = limit + 1
        while wanted > 0:
            chunk = os.read(fd, min(wanted, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


__all__ = ["read_regular"]
