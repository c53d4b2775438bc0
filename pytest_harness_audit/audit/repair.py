"""Repair: undo what a crashed writer can leave behind — and nothing else.

A writer killed mid-append leaves at most a torn final line (its write cut short) or one
complete record whose anchor update never happened. Repair removes the torn line and anchors the
complete record — only when something the appender could not have written alone vouches for it:
the session file lists a writer that died without closing the session, or its head copy names
the record, or (with a public key) a signed checkpoint does. A well-formed record linked to the
head is otherwise exactly what a forger appends, and is refused. Both repairs are noted in the
session file. Any other defect is refused.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.audit.anchor import Anchor, AnchorWriter, read_anchor
from pytest_harness_audit.audit.checkpoint import (
    CheckpointError,
    checkpoints_path,
    newest_checkpoint,
)
from pytest_harness_audit.audit.clock import utc_timestamp
from pytest_harness_audit.audit.errors import ChainError, SessionNotFoundError
from pytest_harness_audit.audit.locking import exclusive, open_lock_file
from pytest_harness_audit.audit.session_file import (
    load_session_file,
    note_repair,
    torn_tail_entry,
    vouch_for,
)
from pytest_harness_audit.audit.storage import SessionPaths, StorageLayout
from pytest_harness_audit.audit.verify import ChainReport, check_line, verify_file


@dataclass(frozen=True)
class RepairResult:
    """What ``repair_chain`` did: ``removed_bytes`` of a torn final line (0: none) and
    ``adopted_records`` (1 when an interrupted append was anchored)."""

    session_id: str
    removed_bytes: int
    removed_sha256: str | None
    report: ChainReport
    adopted_records: int = 0

    @property
    def repaired(self) -> bool:
        """True when a torn final line was removed or an interrupted append anchored."""
        return self.removed_bytes > 0 or self.adopted_records > 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``--json`` output)."""
        return {
            "sessionId": self.session_id,
            "repaired": self.repaired,
            "removedBytes": self.removed_bytes,
            "removedSha256": self.removed_sha256,
            "adoptedRecords": self.adopted_records,
            "report": self.report.to_dict(),
        }


def repair_chain(
    storage_dir: str | os.PathLike[str],
    session_id: str,
    *,
    public_key: Any = None,
    checkpoints: str | os.PathLike[str] | None = None,
) -> RepairResult:
    """Remove a torn final line and anchor an interrupted append; note both in the session file.

    Refuses (``ChainError``) unless the only defects are those a crashed writer leaves (a torn
    final line; one complete, correctly linked record past the anchor that the session file or
    a checkpoint signed with ``public_key`` vouches for); a chain that already verifies is left
    untouched.
    """
    layout = StorageLayout.at(storage_dir)
    paths = layout.paths(session_id)
    if not (paths.chain.exists() or paths.session_file.exists()):
        raise SessionNotFoundError(f"no audit session {paths.session_id!r} in {layout.root}")
    if not paths.anchor.exists():  # checked before the lock file exists: it marks an opened session
        raise ChainError(f"{paths.anchor}: no anchor, refusing to repair")
    lock_fd = open_lock_file(paths.lock)
    try:
        with exclusive(lock_fd):
            anchor = read_anchor(paths.anchor)
            if anchor is None:
                raise ChainError(f"{paths.anchor}: no anchor, refusing to repair")
            size = paths.chain.stat().st_size
            report = verify_file(paths.chain, anchor, size_limit=size)
            if report.valid:
                return RepairResult(paths.session_id, 0, None, report)
            removed, digest = 0, None
            keep = _complete_length(paths.chain, size)
            if keep < size:  # a torn final line, perhaps after an unanchored record
                after = verify_file(paths.chain, anchor, size_limit=keep)
                if not (after.valid or _interrupted_append(after)):
                    raise ChainError(
                        f"{paths.chain}: refusing to repair: without its torn final line the "
                        f"chain still fails (record {after.first_bad_index}: {after.reason})"
                    )
                removed, digest = _remove_torn_tail(paths, keep, after)
                report, size = after, keep
            adopted = 0
            if _interrupted_append(report):
                report = _anchor_interrupted_append(paths, anchor, size, public_key, checkpoints)
                adopted = 1
            elif not report.valid:
                raise ChainError(
                    f"{paths.chain}: refusing to repair: record {report.first_bad_index}: "
                    f"{report.reason} — only a torn final line or an interrupted append "
                    "can be repaired"
                )
            return RepairResult(paths.session_id, removed, digest, report, adopted)
    finally:
        os.close(lock_fd)


def _interrupted_append(report: ChainReport) -> bool:
    """One complete, well-formed record linked to the anchored head, past the anchor."""
    return report.reason == "extra_records" and report.anchor_state == "behind"


def _remove_torn_tail(paths: SessionPaths, keep: int, after: ChainReport) -> tuple[int, str]:
    with open(paths.chain, "r+b") as handle:
        handle.seek(keep)
        fragment = handle.read()
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    entry = torn_tail_entry(
        by="repair",
        offset=keep,
        fragment=fragment,
        record_count=after.record_count,
        head=after.head,
    )
    note_repair(paths.session_file, entry)
    return len(fragment), entry["removedSha256"]


def _anchor_interrupted_append(
    paths: SessionPaths, anchor: Anchor, size: int, public_key: Any, checkpoints: Any
) -> ChainReport:
    """Roll the anchor forward over the one record past it (lock held); re-verify."""
    start = anchor.size
    if start is None:
        raise ChainError(f"{paths.anchor}: anchor without a byte size, refusing to repair")
    with open(paths.chain, "rb") as handle:
        handle.seek(start)
        line = handle.read(size - start).removesuffix(b"\n")
    check = check_line(line, anchor.head, anchor.count, paths.session_id)
    if not check.ok or b"\n" in line:
        raise ChainError(f"{paths.chain}: refusing to repair: the record past the anchor fails")
    head = hashlib.sha256(line).hexdigest()
    voucher = vouch_for(load_session_file(paths.session_file), anchor.count + 1, head)
    if voucher is None and public_key is not None:
        voucher = _checkpoint_vouches(paths, anchor.count + 1, head, public_key, checkpoints)
    if voucher is None:
        raise ChainError(
            f"{paths.chain}: refusing to repair: record {anchor.count} is linked to the anchored "
            "head, but nothing vouches that the chain writer wrote it — every writer closed the "
            "session cleanly, the session file's head copy does not name it and no signed "
            "checkpoint does; it was appended by something else (verify reports extra_records)"
        )
    fd = os.open(paths.anchor, os.O_RDWR | os.O_CLOEXEC)
    writer = AnchorWriter(fd, os.fspath(paths.anchor), fsync=True)
    try:
        writer.write(anchor.count + 1, size, head, check.r6_id)
    finally:
        writer.close()
        os.close(fd)
    after = verify_file(paths.chain, read_anchor(paths.anchor), size_limit=size)
    note_repair(
        paths.session_file,
        {
            "at": utc_timestamp(),
            "action": "anchored an interrupted append",
            "by": "repair",
            "offset": start,
            "recordId": check.record_id,
            "vouchedBy": voucher,
            "recordCount": after.record_count,
            "head": after.head,
        },
    )
    return after


def _complete_length(path: os.PathLike[str], size: int) -> int:
    """Byte length of the chain up to and including its last newline."""
    with open(path, "rb") as handle:
        position = size
        while position > 0:
            start = max(0, position - (1 << 16))
            handle.seek(start)
            block = handle.read(position - start)
            newline = block.rfind(b"\n")
            if newline >= 0:
                return start + newline + 1
            position = start
    return 0


def _checkpoint_vouches(
    paths: SessionPaths, count: int, head: str, public_key: Any, checkpoints: Any
) -> str | None:
    root = paths.chain.parent.parent
    target = checkpoints if checkpoints is not None else checkpoints_path(root, paths.session_id)
    try:
        checkpoint = newest_checkpoint(target, paths.session_id, public_key)
    except CheckpointError:
        return None
    if (checkpoint.count, checkpoint.head) == (count, head):
        return f"a signed checkpoint names it ({os.fspath(target)})"
    return None
