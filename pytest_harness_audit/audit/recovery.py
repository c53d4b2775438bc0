"""Recovery of a chain a writer left behind: bytes past the anchor after a kill.

Only a writer that died can leave them (a live one holds the lock). An incomplete final line is
removed and the removal recorded, as ``harness-audit audit repair`` would, when a writer of the
session died without closing it; one complete, correctly linked record is adopted when the
session file vouches for the writer's intent. Otherwise the bytes were written behind the
writers' backs (a call's own process appending to the chain), and they are refused.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from pytest_harness_audit.audit.anchor import Anchor, AnchorWriter
from pytest_harness_audit.audit.clock import utc_timestamp
from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.audit.reader import iter_file_records
from pytest_harness_audit.audit.session_file import (
    dead_writer,
    load_session_file,
    note_repair,
    torn_tail_entry,
    vouch_for,
)
from pytest_harness_audit.audit.storage import SessionPaths
from pytest_harness_audit.audit.verify import check_line, verify_file

#: Unanchored bytes beyond this are refused (a dead writer leaves at most one record).
MAX_ROLL_FORWARD = 64 << 20
#: What every refusal tells the user to run.
RUN_VERIFY = "run `harness-audit audit verify`"
#: ``O_NOFOLLOW`` where the system has it: files replaced by symlinks are refused.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def adopt_unanchored(
    paths: SessionPaths, anchor_file: AnchorWriter, size: int
) -> tuple[Anchor, dict[str, Any]]:
    """Anchor a chain that has none (e.g. the reference plugin's), after a full check.

    Returns the chain's state and the session file's note of the adoption.
    """
    report = verify_file(paths.chain, None, size_limit=size)
    if not report.valid:
        raise ChainError(
            f"{paths.chain}: cannot resume an unanchored chain that does not verify "
            f"(record {report.first_bad_index}: {report.reason})"
        )
    last_r6 = None
    for record in iter_file_records(paths.chain, last=1):
        value = record.get("r6RequestId")
        last_r6 = value if isinstance(value, str) else None
    anchor_file.reset(report.record_count, size, report.head, last_r6)
    adopted = {
        "at": utc_timestamp(),
        "recordCount": report.record_count,
        "head": report.head,
        "legacyLinks": report.legacy_links,
    }
    return Anchor(report.record_count, report.head, size, last_r6), adopted


def roll_forward(
    paths: SessionPaths, fd: int, anchor_file: AnchorWriter, anchor: Anchor, size: int
) -> Anchor:
    """Deal with bytes past the anchor, which only a writer that died can leave behind.

    We hold the lock, so no live writer is mid-append. An incomplete final line (a write cut
    short by the kill; its ``append`` never returned) is removed and the removal recorded
    in the session file, exactly as ``harness-audit audit repair`` would, when a writer of
    the session died without closing it. One complete,
    correctly linked record (written, but killed before its anchor update) is adopted.
    Anything else is refused.
    """
    start = anchor.size or 0
    where = f"{paths.chain}: after record {anchor.count}"
    if size - start > MAX_ROLL_FORWARD:
        raise ChainError(f"{where}: {size - start} unanchored bytes; {RUN_VERIFY}")
    reader = os.open(paths.chain, os.O_RDONLY | os.O_CLOEXEC | NOFOLLOW)
    try:
        tail = os.pread(reader, size - start, start)
    finally:
        os.close(reader)
    fragment = b""
    if not tail.endswith(b"\n"):
        if dead_writer(load_session_file(paths.session_file)) is None:
            raise ChainError(
                f"{where}: an incomplete line was appended, but no writer of this session died"
                f" mid-write; {RUN_VERIFY}"
            )
        keep = tail.rfind(b"\n") + 1
        tail, fragment = tail[:keep], tail[keep:]
        os.ftruncate(fd, start + keep)
        size = start + keep
    state = anchor
    if tail:
        line = tail[:-1]
        if b"\n" in line:
            lines = tail.count(b"\n")
            raise ChainError(f"{where}: {lines} unanchored records; {RUN_VERIFY}")
        result = check_line(line, anchor.head, anchor.count, paths.session_id)
        if not result.ok:
            raise ChainError(f"{where}: unanchored record fails ({result.reason}); {RUN_VERIFY}")
        head = hashlib.sha256(line).hexdigest()
        voucher = vouch_for(load_session_file(paths.session_file), anchor.count + 1, head)
        if voucher is None:
            raise ChainError(
                f"{where}: a record linked to the head was appended, but no writer of this "
                f"session died without closing it and none recorded its head; {RUN_VERIFY}"
            )
        state = Anchor(anchor.count + 1, head, size, result.r6_id)
        anchor_file.write(state.count, size, head, result.r6_id)
    if fragment:
        entry = torn_tail_entry(
            by="writer",
            offset=size,
            fragment=fragment,
            record_count=state.count,
            head=state.head,
        )
        note_repair(paths.session_file, entry)
    return state
