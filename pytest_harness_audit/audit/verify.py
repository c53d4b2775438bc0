"""Streaming chain verification against the anchor, with exact reason codes.

What is checked, per line ``i`` (0-based) of ``audit/<sessionId>.jsonl``:

* ``parse_error``      — the line is not a JSON object with ``provenance.prevRecordHash``
                         (string) and ``provenance.actionIndex`` (integer);
* ``link_mismatch``    — ``prevRecordHash`` is neither the full hex SHA-256 of line ``i-1``'s
                         exact bytes (``genesis`` for line 0) nor, for chains of the reference
                         plugin, its first 16 hex (then ``legacy_links`` is set);
* ``sequence_gap``     — ``actionIndex`` is not the previous one plus one (0 for line 0);
* ``session_mismatch`` — ``provenance.sessionId`` names another session than the file (a session
                         copied over another one); also a session file naming another session;

and for the session as a whole:

* ``torn_tail``         — the file does not end with a newline (a write that never completed);
* ``truncated``         — fewer records than the anchor counts;
* ``extra_records``     — more records than the anchor counts (``anchor_state`` is ``behind``
                          when exactly one well-formed, correctly linked record follows the
                          anchored head: the trace of an append interrupted before its anchor
                          update);
* ``anchor_mismatch``   — as many records as the anchor counts, but a different head hash;
* ``anchor_missing``    — the session file exists but its anchor does not (or is unreadable), or
                          neither exists although the records were made by this package's
                          writer (or its lock file shows a writer opened the session), which
                          always keeps both;
* ``session_missing``   — the anchor exists but the session file beside it does not;
* ``snapshot_mismatch`` — the head the writer copied into the session file when it closed is not
                          the chain's head at that count;
* ``symlink``           — the chain, anchor or session file (or their directory) is a symbolic
                          link: a session is never verified through one;
* ``witness_mismatch``  — a head given by the caller (the writer's in-memory witness, or a
                          published head, see ``witness``) is not the chain's head at its count;
* ``checkpoint_*``      — a signed checkpoint is missing, malformed, signed by another key, for
                          another session, or not the chain's head at its count (``checkpoint``).

The first failure (lowest index; a line's own defect before an anchor finding at the same index)
is reported with its record id, reason, and expected / found values; ``errors`` lists every
failure found (capped).

Speed, and why it is sound. Lines inside the anchored range are first checked by their tail: the
chain writer always ends a record with
``,"provenance":{"sessionId":"<sid>","actionIndex":<i>,"prevRecordHash":"<64 hex>"}}``, so one
``endswith`` confirms the session, the link and the sequence of a writer-produced line without
parsing it. Such a line is not parsed: if every link holds and the last line hashes to the
anchored head, the anchored range consists of exactly the bytes the writer produced (SHA-256
collision resistance), and the writer produces only well-formed records (a line it did not write
itself — a reference-format chain it adopted, or an unanchored last line it rolled forward — is
parsed in full before it is ever anchored). Whenever that argument does not apply, lines are
parsed in full: every line after the anchored range, every line whose tail differs, and every
line of a chain without anchor (or with ``full=True``). When a tail-checked line is followed by a
failure, or its hash misses the anchor, it is parsed in full before anything is reported, so a
single edit, insertion, deletion, swap, duplication or truncation gets the same reason and index
as a full parse of every line would give. The line-level work is in ``scan``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

from pytest_harness_audit.audit.anchor import GENESIS, Anchor, read_anchor
from pytest_harness_audit.audit.continuity_files import witnessed_records
from pytest_harness_audit.audit.errors import AuditError, SessionNotFoundError
from pytest_harness_audit.audit.locking import shared_lock
from pytest_harness_audit.audit.scan import (
    Failure,
    LineCheck,
    Scan,
    anchor_state,
    check_line,
    failure_order,
    parse_record_line,
    scan_file,
)
from pytest_harness_audit.audit.session_file import load_session_file
from pytest_harness_audit.audit.storage import SessionPaths, StorageLayout
from pytest_harness_audit.audit.witness import Head, coerce_head, counts_with_head

__all__ = [
    "ANCHOR_STATES",
    "HEAD_STATES",
    "REASONS",
    "ChainReport",
    "LineCheck",
    "check_line",
    "parse_record_line",
    "verify_chain",
    "verify_file",
]

REASONS: Final = (
    "parse_error",
    "link_mismatch",
    "sequence_gap",
    "session_mismatch",
    "torn_tail",
    "truncated",
    "extra_records",
    "anchor_mismatch",
    "anchor_missing",
    "session_missing",
    "snapshot_mismatch",
    "symlink",
    "witness_mismatch",
    "checkpoint_missing",
    "checkpoint_malformed",
    "checkpoint_signature",
    "checkpoint_session",
    "checkpoint_mismatch",
)
ANCHOR_STATES: Final = ("current", "behind", "mismatch", "missing", "none")
HEAD_STATES: Final = ("none", "current", "extended", "mismatch")
"""How a chain stands to a witness or checkpoint head: not given; its head is the chain's head;
the chain has grown past it (and contains it); the chain does not contain it."""


@dataclass(frozen=True)
class ChainReport:
    """Outcome of verifying one chain.

    ``head`` is the full SHA-256 of the last complete line (``genesis`` for an empty chain);
    ``anchor_state`` is ``current`` (count and head match the anchor), ``behind`` (one
    interrupted append past it), ``mismatch``, ``missing`` (the session expects an anchor and has
    none) or ``none`` (verified without anchor). ``witness_state`` and ``checkpoint_state`` (see
    ``HEAD_STATES``; a checkpoint may also be ``missing`` or ``invalid``) say how the chain
    stands to a witness head and a signed checkpoint, when given.
    """

    valid: bool
    record_count: int
    head: str
    legacy_links: bool = False
    first_bad_index: int | None = None
    first_bad_record_id: str | None = None
    reason: str | None = None
    expected: str | None = None
    found: str | None = None
    errors: tuple[str, ...] = ()
    anchor_state: str = "none"
    anchor_count: int | None = None
    anchor_head: str | None = None
    path: str | None = None
    session_id: str | None = None
    full_parse: bool = False
    witness_state: str = "none"
    witness_count: int | None = None
    checkpoint_state: str = "none"
    checkpoint_count: int | None = None
    checkpoint_file: str | None = None

    @property
    def anchored(self) -> bool:
        """True when the chain was compared to an anchor."""
        return self.anchor_state not in ("none", "missing")

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``--json`` output)."""
        data = asdict(self)
        data["errors"] = list(self.errors)
        data["anchored"] = self.anchored
        return data

    def with_failure(self, failure: Failure, **changes: Any) -> ChainReport:
        """This report with one more failure (it becomes the first if it comes first)."""
        errors = (*self.errors, failure.message())
        first_index = self.first_bad_index
        if self.valid or first_index is None or failure.index < first_index:
            changes.update(
                valid=False,
                first_bad_index=failure.index,
                first_bad_record_id=failure.record_id,
                reason=failure.reason,
                expected=failure.expected,
                found=failure.found,
            )
        return replace(self, errors=errors, **changes)


def verify_file(
    path: str | os.PathLike[str],
    anchor: Anchor | Mapping[str, Any] | None = None,
    *,
    full: bool = False,
    size_limit: int | None = None,
    session_id: str | None = None,
) -> ChainReport:
    """Verify the chain file at ``path``, against ``anchor`` when given.

    ``full=True`` parses every line (slower; the same verdict for any chain the writer produced).
    ``size_limit`` verifies only the first that many bytes (a snapshot of a growing file).
    ``session_id`` requires every record to name that session. A missing file is an empty chain.
    """
    anchor = Anchor.coerce(anchor)
    scan, torn = scan_file(path, anchor, full=full, size_limit=size_limit, session_id=session_id)
    return _report(scan, torn, path, full=full)


def _report(
    scan: Scan, torn: bytes | None, path: str | os.PathLike[str], *, full: bool
) -> ChainReport:
    first = scan.first
    anchor = scan.anchor
    return ChainReport(
        valid=first is None,
        record_count=scan.count,
        head=scan.head,
        legacy_links=scan.legacy,
        first_bad_index=None if first is None else first.index,
        first_bad_record_id=None if first is None else first.record_id,
        reason=None if first is None else first.reason,
        expected=None if first is None else first.expected,
        found=None if first is None else first.found,
        errors=tuple(failure.message() for failure in sorted(scan.failures, key=failure_order)),
        anchor_state=anchor_state(scan, torn),
        anchor_count=None if anchor is None else anchor.count,
        anchor_head=None if anchor is None else anchor.head,
        path=os.fspath(path),
        full_parse=full or anchor is None,
    )


def verify_chain(
    storage_dir: str | os.PathLike[str],
    session_id: str,
    *,
    full: bool = False,
    witness: Head | str | None = None,
    expected_head: Head | str | None = None,
    checkpoint: Head | None = None,
) -> ChainReport:
    """Verify a stored session's chain against its anchor (and a witness or checkpoint head).

    The anchor and the chain length are read together under the session's shared lock, then the
    chain is verified up to that length without holding the lock, so appenders are not blocked
    and records appended meanwhile are neither counted nor reported. A session whose session file
    exists but whose anchor does not fails with ``anchor_missing``; a chain with neither is
    verified without anchor (``anchor_state`` ``none``) when it is a reference-plugin chain, and
    fails with ``anchor_missing`` when this package's writer made it.

    ``witness`` (or its alias ``expected_head``) is a head kept out of the agent's reach — the
    writer's ``AuditChain.witness`` or a published head, full or a prefix of at least 12 hex,
    with or without its count: the chain must contain it (``witness_mismatch`` otherwise).
    ``checkpoint`` is the head of a signed checkpoint whose signature the caller has checked
    (``checkpoint.verify_checkpointed`` does both); it must be contained likewise
    (``checkpoint_mismatch``).
    """
    if witness is not None and expected_head is not None:
        raise AuditError("give the head once: witness= or expected_head=")
    head = coerce_head(witness if witness is not None else expected_head)
    layout = StorageLayout.at(storage_dir)
    paths = layout.paths(session_id)
    linked = _symlinked(layout, paths)
    chain_exists = paths.chain.exists()
    session_exists = paths.session_file.exists()
    if not (chain_exists or session_exists or paths.anchor.exists() or linked):
        # the writer, a published head or the hook door's continuity witness (kept outside the
        # store) vouches for records that are gone: evidence deleted
        seen = witnessed_records(storage_dir, session_id)
        if (head is None or head.hash == GENESIS) and not seen:
            raise SessionNotFoundError(f"no audit session {paths.session_id!r} in {layout.root}")
        if head is None or head.hash == GENESIS:
            held, expected = f"{seen} records (the hook door's continuity witness)", None
        else:
            held = "records" if head.count is None else f"{head.count} records"
            expected = head.hash
        detail = f"the chain, its anchor and session file are gone; the witness holds {held}"
        failure = Failure(0, 0, "session_missing", None, expected, None, detail)
        report = ChainReport(True, 0, GENESIS, path=os.fspath(paths.chain))
        return report.with_failure(failure, session_id=paths.session_id)
    if linked:
        failure = Failure(0, 0, "symlink", None, None, None, f"{linked} is a symbolic link")
        report = ChainReport(True, 0, GENESIS, path=os.fspath(paths.chain))
        return report.with_failure(failure, session_id=paths.session_id)
    with shared_lock(paths.lock):
        try:
            anchor = read_anchor(paths.anchor)
            anchor_error = None
        except AuditError as exc:
            anchor, anchor_error = None, str(exc)
        try:
            size: int | None = paths.chain.stat().st_size
        except FileNotFoundError:
            size = 0
    try:
        data = load_session_file(paths.session_file)
    except AuditError as exc:  # emptied or garbled: its head copy cannot agree with the chain
        failure = Failure(0, 0, "snapshot_mismatch", None, None, None, str(exc))
        report = ChainReport(True, 0, GENESIS, path=os.fspath(paths.chain))
        return report.with_failure(failure, session_id=paths.session_id)
    snapshot = _snapshot(data)
    watch = [h.count for h in (head, checkpoint, snapshot) if h is not None and h.count is not None]
    scan, torn = scan_file(
        paths.chain, anchor, full=full, size_limit=size, session_id=paths.session_id, watch=watch
    )
    report = replace(_report(scan, torn, paths.chain, full=full), session_id=paths.session_id)
    opened = paths.lock.exists()
    if anchor is None and (
        session_exists or anchor_error is not None or scan.writer_made or opened
    ):
        if anchor_error is not None:
            detail = anchor_error
        elif session_exists:
            detail = f"{paths.anchor} is missing; the tail of the chain is unprotected"
        elif opened:
            detail = f"{paths.anchor} is missing, but a writer opened this session ({paths.lock})"
        else:
            detail = (
                f"{paths.anchor} and {paths.session_file} are missing, but the chain writer made"
                " these records and always keeps both"
            )
        failure = Failure(report.record_count, 2, "anchor_missing", None, None, None, detail)
        report = report.with_failure(failure, anchor_state="missing")
    if anchor is not None and data is None:
        detail = f"{paths.session_file} is missing; the writer keeps it beside the anchor"
        report = report.with_failure(Failure(0, 2, "session_missing", None, None, None, detail))
    named = data.get("sessionId") if data is not None else paths.session_id
    if named != paths.session_id:
        detail = f"{paths.session_file} names session {named!r}"
        failure = Failure(0, 2, "session_mismatch", None, paths.session_id, str(named), detail)
        report = report.with_failure(failure)
    if snapshot is not None:
        report = _check_head(report, scan, snapshot, "snapshot_mismatch", paths, size)[0]
    if head is not None:
        report, state = _check_head(report, scan, head, "witness_mismatch", paths, size)
        report = replace(report, witness_state=state, witness_count=head.count)
    if checkpoint is not None:
        report, state = _check_head(report, scan, checkpoint, "checkpoint_mismatch", paths, size)
        report = replace(report, checkpoint_state=state, checkpoint_count=checkpoint.count)
    return report


def _symlinked(layout: StorageLayout, paths: SessionPaths) -> Path | None:
    for path in (layout.audit_dir, layout.sessions_dir, paths.chain, paths.anchor):
        if path.is_symlink():
            return path
    if paths.session_file.is_symlink():
        return paths.session_file
    return None


def _snapshot(data: Mapping[str, Any] | None) -> Head | None:
    """The head the writer copied into the session file when it closed, if any."""
    value = data.get("anchor") if data is not None else None
    if not isinstance(value, dict):
        return None
    count, digest = value.get("recordCount"), value.get("head")
    if isinstance(count, bool) or not isinstance(count, int) or not isinstance(digest, str):
        return None
    return Head(count, digest)


def _check_head(
    report: ChainReport,
    scan: Scan,
    head: Head,
    reason: str,
    paths: SessionPaths,
    size: int | None,
) -> tuple[ChainReport, str]:
    """Compare the chain with ``head``; return the report (failed on a mismatch) and the state."""
    count = head.count
    if count is None:
        if head.matches(scan.head):
            return report, "current"
        found = counts_with_head(paths.chain, head, size_limit=size)
        if len(found) > 1:
            raise AuditError(f"head {head.hash}: matches records {found[0]} and {found[1]}")
        if found:
            return report, "extended"
        detail = "the chain does not contain this head (rewritten or rolled back)"
        failure = Failure(max(scan.count - 1, 0), 3, reason, None, head.hash, scan.head, detail)
        return report.with_failure(failure), "mismatch"
    if count > scan.count:
        detail = f"{scan.count} records, the head counts {count} (cut or rolled back)"
        failure = Failure(scan.count, 3, reason, None, head.hash, scan.head, detail)
        return report.with_failure(failure), "mismatch"
    at = scan.heads.get(count, GENESIS if count == 0 else "?")
    if head.matches(at):
        return report, "current" if count == scan.count else "extended"
    detail = f"record {count - 1} does not hash to the head taken after {count} records"
    failure = Failure(max(count - 1, 0), 3, reason, None, head.hash, at, detail)
    return report.with_failure(failure), "mismatch"
