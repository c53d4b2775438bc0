"""Streaming chain verification against the anchor, with exact reason codes.

What is checked, per line ``i`` (0-based) of ``audit/<sessionId>.jsonl``:

* ``parse_error``   — the line is not a JSON object with ``provenance.prevRecordHash`` (string)
                      and ``provenance.actionIndex`` (integer);
* ``link_mismatch`` — ``prevRecordHash`` is neither the full hex SHA-256 of line ``i-1``'s exact
                      bytes (``genesis`` for line 0) nor, for chains of the reference plugin, its
                      first 16 hex (then ``legacy_links`` is set);
* ``sequence_gap``  — ``actionIndex`` is not the previous one plus one (0 for line 0);

and for the file as a whole:

* ``torn_tail``       — the file does not end with a newline (a write that never completed);
* ``truncated``       — fewer records than the anchor counts;
* ``extra_records``   — more records than the anchor counts (``anchor_state`` is ``behind`` when
                        exactly one well-formed, correctly linked record follows the anchored
                        head: the trace of an append interrupted before its anchor update);
* ``anchor_mismatch`` — as many records as the anchor counts, but a different head hash;
* ``anchor_missing``  — the session file exists but its anchor does not (or is unreadable).

The first failure (lowest index; a line's own defect before an anchor finding at the same index)
is reported with its record id, reason, and expected / found values; ``errors`` lists every
failure found (capped).

Speed, and why it is sound. Lines inside the anchored range are first checked by their tail: the
chain writer always ends a record with
``,"actionIndex":<i>,"prevRecordHash":"<64 hex>"}}``, so one ``endswith`` confirms both the link
and the sequence of a writer-produced line without parsing it. Such a line is not parsed: if every
link holds and the last line hashes to the anchored head, the anchored range consists of exactly
the bytes the writer produced (SHA-256 collision resistance), and the writer produces only
well-formed records (a line it did not write itself — a reference-format chain it adopted, or an
unanchored last line it rolled forward — is parsed in full before it is ever anchored). Whenever
that argument does not apply, lines are parsed in full: every line after the anchored range,
every line whose tail differs, and every line of a chain without anchor (or with ``full=True``).
When a tail-checked line is followed by a failure, or its hash misses the anchor, it is parsed in
full before anything is reported, so a single edit, insertion, deletion, swap, duplication or
truncation gets the same reason and index as a full parse of every line would give.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from binascii import hexlify
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from itertools import islice
from typing import Any, Final

from pytest_harness_audit.audit.anchor import GENESIS, Anchor, read_anchor
from pytest_harness_audit.audit.errors import AuditError, SessionNotFoundError
from pytest_harness_audit.audit.locking import shared_lock
from pytest_harness_audit.audit.session_file import load_session_file
from pytest_harness_audit.audit.storage import StorageLayout

REASONS: Final = (
    "parse_error",
    "link_mismatch",
    "sequence_gap",
    "torn_tail",
    "truncated",
    "extra_records",
    "anchor_mismatch",
    "anchor_missing",
)
ANCHOR_STATES: Final = ("current", "behind", "mismatch", "missing", "none")

_CHUNK = 1 << 20
# How the chain writer ends every record (see records.py): provenance last, index, 64-hex link.
_WRITER_TAIL = b',"actionIndex":%d,"prevRecordHash":"%b"}}'
_MAX_ERRORS = 100
_RECORD_ID = re.compile(rb'"recordId":"((?:[^"\\]|\\.){0,64})"')


@dataclass(frozen=True)
class ChainReport:
    """Outcome of verifying one chain.

    ``head`` is the full SHA-256 of the last complete line (``genesis`` for an empty chain);
    ``anchor_state`` is ``current`` (count and head match the anchor), ``behind`` (one
    interrupted append past it), ``mismatch``, ``missing`` (the session expects an anchor and has
    none) or ``none`` (verified without anchor).
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


@dataclass(frozen=True)
class _Failure:
    index: int
    order: int  # 0 = the line's own defect, 1 = torn tail, 2 = anchor finding
    reason: str
    record_id: str | None
    expected: str | None
    found: str | None
    detail: str

    def message(self) -> str:
        who = f"record {self.index}" + (f" ({self.record_id})" if self.record_id else "")
        text = f"{who}: {self.reason}: {self.detail}"
        if self.expected is not None or self.found is not None:
            text += f" (expected {self.expected}, found {self.found})"
        return text


@dataclass(frozen=True)
class LineCheck:
    """Result of checking one line in full."""

    ok: bool
    reason: str | None = None
    detail: str = ""
    expected: str | None = None
    found: str | None = None
    record_id: str | None = None
    action_index: int | None = None
    r6_id: str | None = None
    legacy: bool = False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_record_line(line: bytes) -> dict[str, Any]:
    """Parse one chain line strictly (UTF-8, a JSON object); raises ``ValueError``."""
    try:
        value = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("nesting too deep") from None
    if not isinstance(value, dict):
        raise ValueError(f"a record must be a JSON object, not {type(value).__name__}")
    return value


def check_line(line: bytes, prev_hash: str, expected_index: int) -> LineCheck:
    """Check one line in full: parse, link to ``prev_hash``, action index."""
    try:
        record = parse_record_line(line)
    except (UnicodeDecodeError, ValueError) as exc:
        detail = f"not a JSON record: {exc}"
        return LineCheck(False, "parse_error", detail, record_id=_sniff_id(line))
    record_id = record.get("recordId")
    record_id = record_id if isinstance(record_id, str) else None
    provenance = record.get("provenance")
    link = provenance.get("prevRecordHash") if isinstance(provenance, dict) else None
    index = provenance.get("actionIndex") if isinstance(provenance, dict) else None
    if not isinstance(link, str) or isinstance(index, bool) or not isinstance(index, int):
        return LineCheck(
            False,
            "parse_error",
            "not an audit record: provenance.prevRecordHash / provenance.actionIndex missing",
            record_id=record_id,
        )
    r6_id = record.get("r6RequestId")
    r6_id = r6_id if isinstance(r6_id, str) else None
    legacy = False
    if link != prev_hash:
        if prev_hash != GENESIS and len(link) == 16 and link == prev_hash[:16]:
            legacy = True
        else:
            return LineCheck(
                False,
                "link_mismatch",
                "prevRecordHash does not match the previous line",
                expected=prev_hash,
                found=link,
                record_id=record_id,
                action_index=index,
            )
    if index != expected_index:
        return LineCheck(
            False,
            "sequence_gap",
            "actionIndex is not consecutive",
            expected=str(expected_index),
            found=str(index),
            record_id=record_id,
            action_index=index,
        )
    return LineCheck(True, record_id=record_id, action_index=index, r6_id=r6_id, legacy=legacy)


def _sniff_id(line: bytes) -> str | None:
    match = _RECORD_ID.search(line, 0, 4096)
    if match is None:
        return None
    try:
        value = json.loads(b'"' + match.group(1) + b'"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


@dataclass
class _Scan:
    """Mutable state of one streaming pass."""

    trusted: int
    anchor: Anchor | None
    count: int = 0
    expected_index: int = 0
    head: str = GENESIS
    legacy: bool = False
    failures: list[_Failure] = field(default_factory=list)
    first: _Failure | None = None
    failure_count: int = 0
    # The previous line, when it was accepted by its tail only (kept for a full re-check).
    tail_checked_line: bytes | None = None
    tail_checked_prev: str = GENESIS
    hash_before_anchor_end: str | None = None
    first_extra_id: str | None = None
    extra_ok: bool = True

    def fail(self, failure: _Failure) -> None:
        self.failure_count += 1
        if len(self.failures) < _MAX_ERRORS:
            self.failures.append(failure)
        if self.first is None or (failure.index, failure.order) < (
            self.first.index,
            self.first.order,
        ):
            self.first = failure


def _recheck_tail_checked(scan: _Scan) -> None:
    """Parse in full the previous line that was accepted by its tail only."""
    line = scan.tail_checked_line
    if line is None:
        return
    scan.tail_checked_line = None
    index = scan.count - 1
    # It was accepted with the action index expected then, which is one before the current one.
    result = check_line(line, scan.tail_checked_prev, scan.expected_index - 1)
    if not result.ok:
        scan.fail(_line_failure(index, result))


def _line_failure(index: int, result: LineCheck) -> _Failure:
    return _Failure(
        index,
        0,
        result.reason or "parse_error",
        result.record_id,
        result.expected,
        result.found,
        result.detail,
    )


def _full_line(scan: _Scan, line: bytes) -> None:
    """Check one line in full and advance the scan."""
    index = scan.count
    anchor = scan.anchor
    if anchor is not None and index == anchor.count:
        scan.hash_before_anchor_end = scan.head
    result = check_line(line, scan.head, scan.expected_index)
    if anchor is not None and index >= anchor.count:
        if index == anchor.count:
            scan.first_extra_id = result.record_id
        scan.extra_ok = scan.extra_ok and result.ok
    if result.ok:
        scan.legacy = scan.legacy or result.legacy
    else:
        _recheck_tail_checked(scan)
        scan.fail(_line_failure(index, result))
    scan.tail_checked_line = None
    if result.action_index is not None:
        scan.expected_index = result.action_index + 1
    else:
        scan.expected_index += 1
    scan.head = hashlib.sha256(line).hexdigest()
    scan.count = index + 1


def _scan_lines(scan: _Scan, lines: list[bytes]) -> None:
    """Process complete lines; writer-made lines in the anchored range take the fast path."""
    position = 0
    total = len(lines)
    while position < total:
        if scan.count < scan.trusted:
            stop = min(total, position + scan.trusted - scan.count)
            position = _tail_checked_run(scan, lines, position, stop)
            if position == total or scan.count >= scan.trusted:
                continue
        _full_line(scan, lines[position])
        position += 1


def _tail_checked_run(scan: _Scan, lines: list[bytes], start: int, stop: int) -> int:
    """Accept lines by their tail (no parse) from ``start`` until one differs or ``stop``.

    Returns the position of the first line not accepted. Sound only inside the anchored range;
    see the module docstring.
    """
    sha256 = hashlib.sha256
    tail = _WRITER_TAIL
    first_index = index = scan.expected_index
    prev_hex = scan.head.encode("ascii")
    prev_prev = prev_hex
    last = None
    for line in islice(lines, start, stop):
        if not line.endswith(tail % (index, prev_hex)):
            break
        last = line
        prev_prev = prev_hex
        prev_hex = hexlify(sha256(line).digest())
        index += 1
    advanced = index - first_index
    if advanced:
        scan.count += advanced
        scan.expected_index = index
        scan.tail_checked_line = last
        scan.tail_checked_prev = prev_prev.decode("ascii")
        scan.head = prev_hex.decode("ascii")
    return start + advanced


def _finish(scan: _Scan, torn: bytes | None) -> None:
    """Torn tail and anchor findings after the last complete line."""
    count = scan.count
    if torn is not None:
        scan.fail(
            _Failure(
                count,
                1,
                "torn_tail",
                _sniff_id(torn),
                None,
                None,
                f"the last {len(torn)} bytes are not a complete line (no final newline)",
            )
        )
    anchor = scan.anchor
    if anchor is None:
        return
    if count < anchor.count:
        scan.fail(
            _Failure(
                count,
                2,
                "truncated",
                None,
                anchor.head,
                scan.head,
                f"{count} records, the anchor counts {anchor.count}",
            )
        )
    elif count == anchor.count:
        if scan.head != anchor.head:
            _recheck_tail_checked(scan)
            scan.fail(
                _Failure(
                    count - 1,
                    2,
                    "anchor_mismatch",
                    None,
                    anchor.head,
                    scan.head,
                    "the last record does not hash to the anchored head",
                )
            )
    else:
        before = GENESIS if anchor.count == 0 else scan.hash_before_anchor_end
        if before != anchor.head:
            _recheck_tail_checked(scan)
            scan.fail(
                _Failure(
                    anchor.count - 1,
                    2,
                    "anchor_mismatch",
                    None,
                    anchor.head,
                    before,
                    "the record at the anchored count does not hash to the anchored head",
                )
            )
        extra = count - anchor.count
        detail = f"{extra} record(s) beyond the {anchor.count} the anchor counts"
        if _is_one_behind(scan):
            detail += (
                "; it is linked to the anchored head: an append was interrupted before its"
                " anchor update (reopening the session adopts it)"
            )
        scan.fail(
            _Failure(
                anchor.count,
                2,
                "extra_records",
                scan.first_extra_id,
                anchor.head,
                scan.head,
                detail,
            )
        )


def _is_one_behind(scan: _Scan) -> bool:
    anchor = scan.anchor
    if anchor is None or scan.count != anchor.count + 1 or not scan.extra_ok:
        return False
    before = GENESIS if anchor.count == 0 else scan.hash_before_anchor_end
    return before == anchor.head


def _anchor_state(scan: _Scan, torn: bytes | None) -> str:
    anchor = scan.anchor
    if anchor is None:
        return "none"
    if scan.count == anchor.count and scan.head == anchor.head:
        return "current"
    if torn is None and _is_one_behind(scan) and scan.failure_count == 1:
        return "behind"
    return "mismatch"


def verify_file(
    path: str | os.PathLike[str],
    anchor: Anchor | Mapping[str, Any] | None = None,
    *,
    full: bool = False,
    size_limit: int | None = None,
) -> ChainReport:
    """Verify the chain file at ``path``, against ``anchor`` when given.

    ``full=True`` parses every line (slower; the same verdict for any chain the writer produced).
    ``size_limit`` verifies only the first that many bytes (a snapshot of a growing file). A
    missing file is an empty chain.
    """
    anchor = Anchor.coerce(anchor)
    trusted = 0 if anchor is None or full else anchor.count
    scan = _Scan(trusted=trusted, anchor=anchor)
    torn: bytes | None = None
    try:
        handle = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below
    except FileNotFoundError:
        handle = None
    except OSError as exc:
        raise AuditError(f"{os.fspath(path)}: cannot read chain ({exc.strerror})") from None
    if handle is not None:
        with handle:
            remaining = size_limit
            carry: list[bytes] = []
            while remaining is None or remaining > 0:
                want = _CHUNK if remaining is None else min(_CHUNK, remaining)
                chunk = handle.read(want)
                if not chunk:
                    break
                if remaining is not None:
                    remaining -= len(chunk)
                lines = chunk.split(b"\n")
                if len(lines) == 1:
                    carry.append(chunk)
                    continue
                if carry:
                    carry.append(lines[0])
                    lines[0] = b"".join(carry)
                    carry = []
                tail = lines.pop()
                if tail:
                    carry.append(tail)
                _scan_lines(scan, lines)
            if carry:
                torn = b"".join(carry)
    _finish(scan, torn)
    first = scan.first
    state = _anchor_state(scan, torn)
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
        errors=tuple(failure.message() for failure in sorted(scan.failures, key=_order)),
        anchor_state=state,
        anchor_count=None if anchor is None else anchor.count,
        anchor_head=None if anchor is None else anchor.head,
        path=os.fspath(path),
        full_parse=full or anchor is None,
    )


def _order(failure: _Failure) -> tuple[int, int]:
    return failure.index, failure.order


def verify_chain(
    storage_dir: str | os.PathLike[str], session_id: str, *, full: bool = False
) -> ChainReport:
    """Verify a stored session's chain against its anchor.

    The anchor and the chain length are read together under the session's shared lock, then the
    chain is verified up to that length without holding the lock, so appenders are not blocked
    and records appended meanwhile are neither counted nor reported. A session whose session file
    exists but whose anchor does not fails with ``anchor_missing``; a chain with neither (such as
    one written by the reference plugin) is verified without anchor (``anchor_state`` ``none``).
    """
    layout = StorageLayout.at(storage_dir)
    paths = layout.paths(session_id)
    chain_exists = paths.chain.exists()
    session_exists = paths.session_file.exists()
    if not (chain_exists or session_exists or paths.anchor.exists()):
        raise SessionNotFoundError(f"no audit session {paths.session_id!r} in {layout.root}")
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
    report = verify_file(paths.chain, anchor, full=full, size_limit=size)
    if anchor is None and (session_exists or anchor_error is not None):
        detail = anchor_error or f"{paths.anchor} is missing; the tail of the chain is unprotected"
        load_session_file(paths.session_file)  # a broken session file is its own clear error
        failure = _Failure(report.record_count, 2, "anchor_missing", None, None, None, detail)
        errors = (*report.errors, failure.message())
        if report.valid:
            report = _replace(
                report,
                valid=False,
                reason="anchor_missing",
                first_bad_index=report.record_count,
                errors=errors,
            )
        else:
            report = _replace(report, errors=errors)
        report = _replace(report, anchor_state="missing")
    return _replace(report, session_id=paths.session_id)


def _replace(report: ChainReport, **changes: Any) -> ChainReport:
    return replace(report, **changes)
