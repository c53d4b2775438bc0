"""``AuditChain``: append R6 records to a session's hash-linked JSONL chain.

One append, under the session's exclusive lock:

1. check that the chain's length is what this object last saw; if another process appended
   meanwhile, take the new head from the anchor (and roll the anchor forward over a record a
   killed writer wrote but could not anchor);
2. complete the record with its position (ids, ``actionIndex``, ``chainPosition``, ``prevR6Id``,
   ``prevRecordHash``) and write it, newline included, with one ``write`` on an ``O_APPEND``
   descriptor — a process killed at any point leaves either the whole line or none of it;
3. update the anchor slot (record count, size, head hash) with one ``pwrite`` (``anchor``).

When ``append`` returns, the record is in the kernel's page cache and survives the death of the
process; with ``fsync=True`` the line and then the anchor are flushed to the device first, so
they also survive power loss. The lock and the file descriptors stay open for the life of the
object, which keeps an append to five system calls (lock, length check, write of the line,
``pwrite`` of the anchor slot, unlock).

Files are opened with ``O_NOFOLLOW``: a chain, anchor or lock file replaced by a symbolic link is
refused, never written through. The object keeps in memory the head it wrote (``witness``): a
rewrite of the file behind its back, anchor included, cannot change that, and
``verify_chain(..., witness=chain.witness)`` catches it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import orjson

from pytest_harness_audit.audit.anchor import (
    GENESIS,
    SLOT_MAGIC,
    SLOT_SIZE,
    Anchor,
    AnchorWriter,
    pack_slot,
    pack_slot_body,
)
from pytest_harness_audit.audit.clock import utc_timestamp
from pytest_harness_audit.audit.draft import RecordDraft
from pytest_harness_audit.audit.errors import AuditError, ChainError
from pytest_harness_audit.audit.lct import SoftLCT, make_soft_lct
from pytest_harness_audit.audit.locking import exclusive, wait_exclusive
from pytest_harness_audit.audit.reader import iter_file_records
from pytest_harness_audit.audit.record_ids import record_id_key
from pytest_harness_audit.audit.records import AUDIT_LEVELS, RecordBuilder, encode_record
from pytest_harness_audit.audit.recovery import NOFOLLOW as _NOFOLLOW
from pytest_harness_audit.audit.recovery import RUN_VERIFY as _RUN_VERIFY
from pytest_harness_audit.audit.recovery import adopt_unanchored, roll_forward
from pytest_harness_audit.audit.session_file import (
    SESSION_FORMAT,
    join_writers,
    leave_writers,
    load_session_file,
    readable_session_file,
    write_session_file,
    writer_entry,
)
from pytest_harness_audit.audit.storage import SessionPaths, StorageLayout
from pytest_harness_audit.audit.verify import check_line
from pytest_harness_audit.audit.witness import Head, line_at

# ``Final`` names are read without a dictionary lookup in the compiled build; ``_write`` is not
# one, so that a test can make the line's write fail.
_flock: Final = fcntl.flock
_LOCK_EX_NB: Final = fcntl.LOCK_EX | fcntl.LOCK_NB
_LOCK_UN: Final = fcntl.LOCK_UN
_lseek: Final = os.lseek
_SEEK_END: Final = os.SEEK_END
_write = os.write
_pwrite: Final = os.pwrite
_dumps: Final = orjson.dumps
_sha256: Final = hashlib.sha256
_crc32: Final = zlib.crc32
_getpid: Final = os.getpid
# This process's id, kept current by a fork hook: ``append`` compares it without a system call.
_process: Final = [os.getpid()]


def _after_fork_in_child() -> None:
    _process[0] = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()


class AuditChain:
    """The audit chain of one session in ``storage_dir``; safe to share between processes.

    Opening resumes an existing chain (count, head, action index), adopts a chain that has no
    anchor yet (such as one written by the reference plugin) after verifying it in full, and
    refuses a chain whose state does not match its anchor (run ``harness-audit audit verify``).
    What a killed writer leaves past the anchor is handled as described in
    ``_roll_forward_locked``.
    """

    def __init__(
        self,
        storage_dir: str | os.PathLike[str],
        session_id: str,
        *,
        audit_level: str = "standard",
        fsync: bool = False,
        agent_id: str | None = None,
    ) -> None:
        if audit_level not in AUDIT_LEVELS:
            raise AuditError(f"audit level must be one of {AUDIT_LEVELS}, got {audit_level!r}")
        self._layout = StorageLayout.at(storage_dir)
        self._paths: SessionPaths = self._layout.paths(session_id)
        self._fsync = fsync
        self._mutex = threading.Lock()
        # ``append`` takes the mutex through these, which is quicker than ``with``.
        self._acquire, self._release = self._mutex.acquire, self._mutex.release
        self._pid = _process[0]
        self._fds: list[int] = []
        self._fd = -1
        self._lock_fd = -1
        self._anchor_fd = -1
        self._count = 0
        self._size = 0
        self._head = GENESIS
        self._last_r6: str | None = None
        self._token = os.urandom(6).hex()
        self._frozen: Head | None = None
        try:
            self._layout.ensure_dirs()
            self._lock_fd = self._open(self._paths.lock, os.O_RDWR | os.O_CREAT)
            self._fd = self._open(self._paths.chain, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            anchor_fd = self._open(self._paths.anchor, os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            self.close()
            raise AuditError(
                f"{self._layout.root}: cannot open audit storage ({exc.strerror})"
            ) from None
        self._anchor = AnchorWriter(anchor_fd, os.fspath(self._paths.anchor), fsync=fsync)
        self._anchor_fd = anchor_fd
        try:
            with exclusive(self._lock_fd):
                self._lct = self._open_session_locked(audit_level, agent_id)
        except BaseException:
            self.close()
            raise
        #: Builds each record; its ``scrub`` hook redacts every record before it is written.
        self.builder = RecordBuilder(
            self._paths.session_id, self._lct.token_id, audit_level, agent_id
        )
        self._id_key = record_id_key(self._paths.session_id)
        self._session_id = self._paths.session_id

    # -- opening ---------------------------------------------------------------------------

    def _open(self, path: Path, flags: int) -> int:
        fd = os.open(path, flags | os.O_CLOEXEC | _NOFOLLOW, 0o644)
        self._fds.append(fd)
        return fd

    def _open_session_locked(self, audit_level: str, agent_id: str | None) -> SoftLCT:
        """Resume, adopt or create the session (lock held); return its Soft LCT."""
        path = self._paths.session_file
        data = load_session_file(path)
        size = os.lseek(self._fd, 0, os.SEEK_END)
        anchor = self._read_anchor()
        adopted = None
        if anchor is not None:
            self._size = -1
            self._resync_locked(size, anchor)
        elif data is not None:
            raise ChainError(f"{self._paths.anchor}: anchor missing for a session; {_RUN_VERIFY}")
        elif size:
            adopted = self._adopt_unanchored(size)
        else:
            self._anchor.reset(0, 0, GENESIS, None)
            self._set_state(Anchor(0, GENESIS, 0, None))
        if data is not None:
            lct = data.get("lct")
            if not isinstance(lct, dict):
                raise AuditError(f"{path}: field 'lct' is missing")
            data = load_session_file(path) or data  # a roll-forward may have noted a repair
            join_writers(data, writer_entry(self._token))
            write_session_file(path, data, fsync=self._fsync)
            return SoftLCT.from_dict(lct, source=str(path))
        lct_token = make_soft_lct(self._paths.session_id)
        write_session_file(
            path,
            {
                "format": SESSION_FORMAT,
                "sessionId": self._paths.session_id,
                "createdAt": lct_token.created_at,
                "auditLevel": audit_level,
                "agentId": agent_id,
                "lct": lct_token.to_dict(),
                "chain": f"audit/{self._paths.chain.name}",
                "anchorFile": f"sessions/{self._paths.anchor.name}",
                "anchor": None,
                "adopted": adopted,
                "repairs": [],
                "writers": [writer_entry(self._token)],
            },
        )
        return lct_token

    def _read_anchor(self) -> Anchor | None:
        try:
            return self._anchor.read()
        except AuditError as exc:
            raise ChainError(f"{exc}; run `harness-audit audit verify`") from None

    def _adopt_unanchored(self, size: int) -> dict[str, Any]:
        """Anchor a chain that has none (e.g. the reference plugin's), after a full check."""
        anchor, adopted = adopt_unanchored(self._paths, self._anchor, size)
        self._set_state(anchor)
        return adopted

    def _set_state(self, anchor: Anchor) -> None:
        self._count = anchor.count
        self._head = anchor.head
        self._size = anchor.size if anchor.size is not None else 0
        self._last_r6 = anchor.last_r6_id

    def _resync_locked(self, size: int, anchor: Anchor | None = None) -> None:
        """Catch up with appends made through other objects or processes (lock held)."""
        before = Head(self._count, self._head), self._size
        if anchor is None:
            anchor = self._read_anchor()
        if anchor is None or anchor.size is None:
            raise ChainError(f"{self._paths.anchor}: anchor missing; {_RUN_VERIFY}")
        if anchor.size > size:
            raise ChainError(
                f"{self._paths.chain}: chain is shorter ({size} bytes) than its anchor "
                f"({anchor.size} bytes, {anchor.count} records) — truncated; {_RUN_VERIFY}"
            )
        if anchor.size == size:
            self._set_state(anchor)
        else:
            self._roll_forward_locked(anchor, size)
        witness, known_size = before
        if known_size >= 0 and self._frozen is None and not self._extends(witness, known_size):
            self._frozen = witness  # rewritten behind our back: keep the head we wrote

    def _extends(self, witness: Head, known_size: int) -> bool:
        """True when the chain (resynced, lock held) still continues ``witness``."""
        count = witness.count or 0
        if self._count <= count:
            return self._count == count and self._head == witness.hash
        line = line_at(self._paths.chain, known_size, self._size)
        return line is not None and check_line(line, witness.hash, count, self.session_id).ok

    def _roll_forward_locked(self, anchor: Anchor, size: int) -> None:
        """Deal with bytes past the anchor (see :func:`.recovery.roll_forward`)."""
        self._set_state(roll_forward(self._paths, self._fd, self._anchor, anchor, size))

    # -- appending -------------------------------------------------------------------------

    def append(self, draft: RecordDraft) -> dict[str, Any]:
        """Append the record of ``draft`` and return it as written (a dict).

        Under the lock: the length check, one ``write`` of the line and one ``pwrite`` of the
        anchor slot. The record is completed and encoded, and the slot packed, in this one pass.
        """
        record, role = self.builder.prepare(draft)
        self._acquire()
        try:
            fd = self._fd
            if fd < 0:
                raise ChainError(f"{self._paths.chain}: the chain has been closed")
            if self._pid != _process[0]:
                self._after_fork()
            lock_fd = self._lock_fd
            try:
                _flock(lock_fd, _LOCK_EX_NB)
            except BlockingIOError:  # held by another writer: wait, but not for ever
                wait_exclusive(lock_fd, str(self._paths.chain))
            try:
                size = _lseek(fd, 0, _SEEK_END)
                if size != self._size:
                    self._resync_locked(size)
                index = self._count
                session_id = self._session_id
                role["actionIndex"] = index
                # ``record_id_at`` inline
                value = (index * 0x9E3779B1 + self._id_key) & 0xFFFFFFFF
                rid = "%08x" % (value ^ (value >> 15))
                r6_id = "r6:" + rid
                record["recordId"], record["r6RequestId"] = "audit:" + rid, r6_id
                prev_r6 = self._last_r6
                if prev_r6:
                    record["reference"] = {
                        "sessionId": session_id,
                        "prevR6Id": prev_r6,
                        "chainPosition": index,
                    }
                else:
                    record["reference"] = {"sessionId": session_id, "chainPosition": index}
                record["provenance"] = {
                    "sessionId": session_id,
                    "actionIndex": index,
                    "prevRecordHash": self._head,
                }
                try:
                    line = _dumps(record)
                except TypeError:  # orjson.JSONEncodeError: see ``encode_record``
                    line = encode_record(record)
                data = line + b"\n"
                try:
                    # One write on an O_APPEND descriptor: the line and its newline land together.
                    written = _write(fd, data)
                except OSError as exc:  # disk full, quota, size limit: a chain no longer written
                    self._undo_partial_write(size)
                    raise ChainError(f"{self._paths.chain}: record not written: {exc}") from exc
                except BaseException:
                    self._undo_partial_write(size)
                    raise
                if written != len(data):
                    self._undo_partial_write(size)
                    raise ChainError(
                        f"{self._paths.chain}: short write ({written} of {len(data)} bytes)"
                    )
                if self._fsync:
                    os.fsync(fd)
                head = _sha256(line).hexdigest()
                self._count = count = index + 1
                self._size = size = size + written
                self._head = head
                self._last_r6 = r6_id
                # ``writer_slot`` inline: an r6 id written here is always 11 ASCII characters.
                body = pack_slot_body(SLOT_MAGIC, count, size, head.encode(), r6_id.encode())
                try:
                    _pwrite(self._anchor_fd, pack_slot(body, _crc32(body)), (count & 1) * SLOT_SIZE)
                    if self._fsync:
                        os.fsync(self._anchor_fd)
                except OSError as exc:
                    raise ChainError(f"{self._paths.anchor}: anchor not written: {exc}") from exc
            finally:
                _flock(lock_fd, _LOCK_UN)
        finally:
            self._release()
        return record

    def _after_fork(self) -> None:
        """In a forked child, take a lock descriptor of our own.

        ``flock`` locks belong to the open file description, which a forked child shares with its
        parent: without this, parent and child would not exclude each other.
        """
        inherited = self._lock_fd
        self._lock_fd = os.open(self._paths.lock, os.O_RDWR | os.O_CLOEXEC | _NOFOLLOW)
        self._fds.append(self._lock_fd)
        if inherited in self._fds:
            self._fds.remove(inherited)
        with contextlib.suppress(OSError):
            os.close(inherited)
        self._pid = _process[0] = os.getpid()

    def _undo_partial_write(self, size: int) -> None:
        try:
            if os.lseek(self._fd, 0, os.SEEK_END) > size:
                os.ftruncate(self._fd, size)
        except OSError:
            pass

    def refresh(self) -> None:
        """Take in appends made by other processes (and adopt an interrupted one)."""
        with self._mutex:
            if self._fd < 0:
                return
            if self._pid != _getpid():
                self._after_fork()
            size = os.lseek(self._fd, 0, os.SEEK_END)
            if size != self._size:
                with exclusive(self._lock_fd):
                    self._resync_locked(os.lseek(self._fd, 0, os.SEEK_END))

    @property
    def session_id(self) -> str:
        """The (file-name-safe) session id used in records and file names."""
        return self._paths.session_id

    @property
    def soft_lct(self) -> SoftLCT:
        """The session's Soft LCT (``str()`` gives the token id)."""
        return self._lct

    @property
    def audit_level(self) -> str:
        """``minimal``, ``standard`` or ``verbose``."""
        return self.builder.audit_level

    @property
    def record_count(self) -> int:
        """Number of records in the chain (including other processes' appends)."""
        self.refresh()
        return self._count

    @property
    def head_hash(self) -> str:
        """SHA-256 of the last line (``genesis`` for an empty chain)."""
        self.refresh()
        return self._head

    @property
    def anchor(self) -> Anchor:
        """The chain state this object holds (count, head, size, last r6 id)."""
        self.refresh()
        return Anchor(self._count, self._head, self._size, self._last_r6)

    @property
    def witness(self) -> Head:
        """The head this object wrote last (or found on opening): count and hash, in memory.

        Records other writers append are taken in only when they continue it; if the file was
        rewritten behind this object's back, the witness stays at the last head it knew to be
        good. Pass it to ``verify_chain(..., witness=...)`` or sign it at the end of a session.
        """
        with self._mutex:
            return self._frozen or Head(self._count, self._head)

    @property
    def path(self) -> Path:
        """The chain file ``audit/<sessionId>.jsonl``."""
        return self._paths.chain

    @property
    def session_file(self) -> Path:
        """The session file ``sessions/<sessionId>.json``."""
        return self._paths.session_file

    @property
    def storage_dir(self) -> Path:
        """The storage directory."""
        return self._layout.root

    def records(self) -> Iterator[dict[str, Any]]:
        """Iterate over the parsed records of the chain, oldest first."""
        return iter_file_records(self._paths.chain)

    def close(self) -> None:
        """Store an anchor snapshot in the session file and release the files."""
        with self._mutex:
            if not self._fds:
                return
            try:
                if self._fd >= 0 and self._pid != _getpid():
                    self._after_fork()
                if hasattr(self, "_lct") and self._fd >= 0:
                    with exclusive(self._lock_fd):
                        size = os.lseek(self._fd, 0, os.SEEK_END)
                        self._close_session_locked(in_sync=size == self._size)
            finally:
                anchor = getattr(self, "_anchor", None)
                if anchor is not None:
                    anchor.close()
                self._fd = self._lock_fd = -1
                _close_all(self._fds)

    def _close_session_locked(self, *, in_sync: bool) -> None:
        """Leave the writers list and, when in step with the file, store the head we saw."""
        data = readable_session_file(self._paths.session_file)
        if data is None:
            return
        leave_writers(data, self._token)
        if in_sync and self._frozen is None:
            snapshot = Anchor(self._count, self._head, self._size, self._last_r6).to_dict()
            snapshot["updatedAt"] = utc_timestamp()
            data["anchor"] = snapshot
        write_session_file(self._paths.session_file, data)

    def __del__(self) -> None:
        # Not ``weakref.finalize``: the compiled build's classes take no weak references.
        fds = getattr(self, "_fds", None)
        if fds:
            _close_all(fds)

    def __enter__(self) -> AuditChain:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AuditChain({str(self._layout.root)!r}, {self.session_id!r})"
