"""Repair: remove a torn final line left by a crash — and nothing else."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.audit.anchor import read_anchor
from pytest_harness_audit.audit.errors import ChainError, SessionNotFoundError
from pytest_harness_audit.audit.locking import exclusive, open_lock_file
from pytest_harness_audit.audit.session_file import note_repair, torn_tail_entry
from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.audit.verify import ChainReport, verify_file


@dataclass(frozen=True)
class RepairResult:
    """What ``repair_chain`` did: ``removed_bytes`` is 0 when there was nothing to repair."""

    session_id: str
    removed_bytes: int
    removed_sha256: str | None
    report: ChainReport

    @property
    def repaired(self) -> bool:
        """True when a torn final line was removed."""
        return self.removed_bytes > 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``--json`` output)."""
        return {
            "sessionId": self.session_id,
            "repaired": self.repaired,
            "removedBytes": self.removed_bytes,
            "removedSha256": self.removed_sha256,
            "report": self.report.to_dict(),
        }


def repair_chain(storage_dir: str | os.PathLike[str], session_id: str) -> RepairResult:
    """Remove the torn final line of a session's chain, and record that in its session file.

    Refuses (``ChainError``) unless the only defect is a torn final line and the chain without it
    verifies against the anchor; a chain that already verifies is left untouched.
    """
    layout = StorageLayout.at(storage_dir)
    paths = layout.paths(session_id)
    if not (paths.chain.exists() or paths.session_file.exists()):
        raise SessionNotFoundError(f"no audit session {paths.session_id!r} in {layout.root}")
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
            if report.reason != "torn_tail":
                raise ChainError(
                    f"{paths.chain}: refusing to repair: record {report.first_bad_index}: "
                    f"{report.reason} — only a torn final line can be repaired"
                )
            keep = _complete_length(paths.chain, size)
            after = verify_file(paths.chain, anchor, size_limit=keep)
            if not after.valid:
                raise ChainError(
                    f"{paths.chain}: refusing to repair: without its torn final line the chain "
                    f"still fails (record {after.first_bad_index}: {after.reason})"
                )
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
            return RepairResult(paths.session_id, len(fragment), entry["removedSha256"], after)
    finally:
        os.close(lock_fd)


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
