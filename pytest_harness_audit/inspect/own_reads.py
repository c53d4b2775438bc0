"""The auditor's own reads of the copies it keeps outside the workspaces.

A session's credential-read watch also watches the copies of the workspace's credential files
in its template's seed and in the shipped template (:mod:`.credential_reads`). The auditor reads
them itself: it copies the seed for every new workspace, and the template for every new seed.
Each such copy opens each file once and is counted here; a watch reads its events and the counts
while no copy is under way, and a file opened no more often than the auditor copied its folder
meanwhile was not read by the call.

A seed belongs to one process; the shipped template is read by every process of the auditor
(pytest-xdist workers build their seeds from it), so its copies are also counted in a tally file
per template in the temporary directory (one byte per copy, appended under an exclusive
``flock``, which a watch takes shared while it reads). A process that writes to a tally, or
holds its lock (then a watch waits at most :data:`LOCK_WAIT_S` and reads without it), can make
a read of the template look like the auditor's: the tally only keeps other auditors' copies
from being taken for the call's.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator

#: Seconds a watch waits for a tally's lock before it reads without it.
LOCK_WAIT_S = 2.0
# fixed at import: tests and sessions may point ``tempfile`` elsewhere later
_TALLIES = tempfile.gettempdir()


@functools.lru_cache(maxsize=256)
def _tally(folder: str) -> str:
    digest = hashlib.sha256(os.fsencode(folder)).hexdigest()[:20]
    return os.path.join(_TALLIES, f"harness-audit-reads-{os.getuid()}-{digest}")


def _open(path: str, create: bool) -> int | None:
    flags = os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
    flags |= os.O_WRONLY | os.O_APPEND | os.O_CREAT if create else os.O_RDONLY
    try:
        fd = os.open(path, flags, 0o600)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def _lock(fd: int, how: int) -> None:
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.002)


class OwnReads:
    """How often the auditor copied each folder it keeps outside the workspaces (see the
    module doc). Thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._counts: dict[str, int] = {}
        self._tallies: dict[str, int] = {}  # a shared folder → its tally, open to be read

    @contextlib.contextmanager
    def reading(self, folder: str, *, shared: bool = False) -> Iterator[None]:
        """Count a copy of ``folder``, made inside this block; ``shared``: a folder every
        process of the auditor reads (the shipped template), counted in its tally too."""
        with self.lock:
            fd = _open(_tally(folder), create=True) if shared else None
            try:
                if fd is None:
                    self._counts[folder] = self._counts.get(folder, 0) + 1
                else:
                    if folder not in self._tallies:
                        kept = _open(_tally(folder), create=False)
                        if kept is not None:
                            self._tallies[folder] = kept
                    _lock(fd, fcntl.LOCK_EX)
                    os.write(fd, b".")
                yield
            finally:
                if fd is not None:
                    os.close(fd)

    @contextlib.contextmanager
    def quiet(self, folders: Iterable[str]) -> Iterator[None]:
        """No copy of ``folders`` starts or ends inside this block (in another process, for
        as long as their tallies' locks can be had)."""
        with self.lock:
            held = [self._tallies[f] for f in folders if f in self._tallies]
            for fd in held:
                _lock(fd, fcntl.LOCK_SH)
            try:
                yield
            finally:
                for fd in held:
                    fcntl.flock(fd, fcntl.LOCK_UN)

    def count(self, folder: str) -> int:
        """How often ``folder`` was copied so far (by any process, for a shared one)."""
        fd = self._tallies.get(folder)
        shared = 0 if fd is None else os.fstat(fd).st_size
        return self._counts.get(folder, 0) + shared


OWN_READS = OwnReads()
"""The auditor's own copies of the folders it keeps."""


__all__ = ["LOCK_WAIT_S", "OWN_READS", "OwnReads"]
