"""The streaming pass of verification: the tail-checked and parsed quick paths, anchor findings.

``verify`` describes what is checked and why the fast path is sound; this module does the work
for it and for the writer (``check_line`` on a record it adopts).
"""

from __future__ import annotations

import hashlib
import json
import os
from binascii import hexlify
from collections.abc import Iterable
from dataclasses import dataclass, field
from io import BytesIO
from itertools import repeat

from pytest_harness_audit.audit import line_check as _line_check
from pytest_harness_audit.audit.anchor import GENESIS, Anchor
from pytest_harness_audit.audit.errors import AuditError
from pytest_harness_audit.audit.line_check import (
    LineCheck,
    check_line,
    parse_record_line,
    sniff_id,
)
from pytest_harness_audit.audit.provenance_parse import all_json, json_validator, provenance_reader

# Small enough that a chunk, its lines and their hashes stay in the processor's cache while the
# passes over them run (a megabyte is read back from memory by each pass).
_CHUNK = 1 << 16
# How the chain writer ends every record (see records.py): provenance last, index, 64-hex link.
_WRITER_TAIL = b',"actionIndex":%d,"prevRecordHash":"%b"}}'
_MAX_ERRORS = 100
_sha256 = hashlib.sha256
# The method itself, not a ``methodcaller``: ``map`` calls it without looking it up per line.
_digest = type(_sha256()).digest
_NEWLINE = b"\n"
__all__ = ["Failure", "LineCheck", "Scan", "check_line", "parse_record_line", "scan_file"]


@dataclass(frozen=True)
class Failure:
    """One defect found: where (``index``), what (``reason``) and the values compared."""

    index: int
    order: int  # 0 = the line's own defect, 1 = torn tail, 2 = anchor finding
    reason: str
    record_id: str | None
    expected: str | None
    found: str | None
    detail: str

    def message(self) -> str:
        """One line: record, reason, detail, expected vs found."""
        who = f"record {self.index}" + (f" ({self.record_id})" if self.record_id else "")
        text = f"{who}: {self.reason}: {self.detail}"
        if self.expected is not None or self.found is not None:
            text += f" (expected {self.expected}, found {self.found})"
        return text


def writer_tail(session_id: str | None) -> bytes:
    """The ``%``-template of the end of every line the writer makes (index, previous hash).

    With ``session_id`` the template also covers ``provenance.sessionId``, so a line of another
    session never takes the fast path.
    """
    if session_id is None:
        return _WRITER_TAIL
    sid = json.dumps(session_id).encode("utf-8").replace(b"%", b"%%")
    return b',"provenance":{"sessionId":' + sid + _WRITER_TAIL


@dataclass
class Scan:
    """Mutable state of one streaming pass.

    ``watch`` lists record counts (ascending) whose head hash is wanted; the pass stores them in
    ``heads`` (a witness or a checkpoint names a count and the head the chain had there).
    """

    trusted: int
    anchor: Anchor | None
    session_id: str | None = None
    tail: bytes = _WRITER_TAIL
    watch: list[int] = field(default_factory=list)
    heads: dict[int, str] = field(default_factory=dict)
    next_watch: int = -1
    count: int = 0
    expected_index: int = 0
    head: str = GENESIS
    legacy: bool = False
    failures: list[Failure] = field(default_factory=list)
    first: Failure | None = None
    failure_count: int = 0
    # The previous line, when it was accepted by its tail only (kept for a full re-check).
    tail_checked_line: bytes | None = None
    tail_checked_prev: str = GENESIS
    hash_before_anchor_end: str | None = None
    first_extra_id: str | None = None
    extra_ok: bool = True
    # A line only this package's writer makes: a full 64-hex link, or a first record with a kind.
    writer_made: bool = False

    def __post_init__(self) -> None:
        self.tail = writer_tail(self.session_id)
        self.watch = sorted(set(self.watch))
        self.note_head()

    def note_head(self) -> None:
        """Keep the head at a watched count; aim at the next watched count."""
        watch = self.watch
        while watch and watch[0] <= self.count:
            if watch[0] == self.count:
                self.heads[self.count] = self.head
            watch.pop(0)
        self.next_watch = watch[0] if watch else -1

    def fail(self, failure: Failure) -> None:
        """Count ``failure``; keep it (up to a cap) and the first one by position."""
        self.failure_count += 1
        if len(self.failures) < _MAX_ERRORS:
            self.failures.append(failure)
        if self.first is None or (failure.index, failure.order) < (
            self.first.index,
            self.first.order,
        ):
            self.first = failure


def _recheck_tail_checked(scan: Scan) -> None:
    """Parse in full the previous line that was accepted by its tail only."""
    line = scan.tail_checked_line
    if line is None:
        return
    scan.tail_checked_line = None
    index = scan.count - 1
    # It was accepted with the action index expected then, which is one before the current one.
    result = check_line(line, scan.tail_checked_prev, scan.expected_index - 1, scan.session_id)
    if not result.ok:
        scan.fail(_line_failure(index, result))


def _line_failure(index: int, result: LineCheck) -> Failure:
    return Failure(
        index,
        0,
        result.reason or "parse_error",
        result.record_id,
        result.expected,
        result.found,
        result.detail,
    )


def _full_line(scan: Scan, line: bytes) -> None:
    """Check one line in full and advance the scan."""
    index = scan.count
    anchor = scan.anchor
    if anchor is not None and index == anchor.count:
        scan.hash_before_anchor_end = scan.head
    result = check_line(line, scan.head, scan.expected_index, scan.session_id)
    if index == 0:
        scan.writer_made = b'"kind":"' in line
    elif result.ok and not result.legacy:
        scan.writer_made = True
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
    if scan.count == scan.next_watch:
        scan.note_head()


def _scan_lines(scan: Scan, lines: list[bytes]) -> None:
    """Process complete lines; writer-made lines in the anchored range take the fast path."""
    position = 0
    total = len(lines)
    while position < total:
        if scan.count < scan.trusted:
            limit = scan.trusted
            if 0 <= scan.next_watch < limit:
                limit = scan.next_watch
            stop = min(total, position + limit - scan.count)
            position = _tail_checked_run(scan, lines, position, stop)
            if scan.count == scan.next_watch:
                scan.note_head()
            if position == stop:
                continue
        if scan.count and (scan.anchor is None or scan.count < scan.anchor.count):
            position = _parsed_run(scan, lines, position, total)
            if position == total:
                continue
        _full_line(scan, lines[position])
        position += 1


def _parsed_run(scan: Scan, lines: list[bytes], start: int, total: int) -> int:
    """Check good lines in full with less bookkeeping than ``_full_line``.

    Inside the anchored range (or without anchor), up to the next watched count; stops before
    the first line that is not plainly good, which ``_full_line`` then checks and reports. A
    plainly good line is what ``check_line`` accepts on orjson's parse with a full-length link:
    every line is parsed, its ``provenance`` read once; the hashes are taken in one pass first.
    With simdjson and the session known, a line that ends in the writer's exact tail (session,
    index, link: ``provenance`` is then the last key, the one orjson reads) is only validated
    (``provenance_parse``); any other line has its ``provenance`` read. The lines that start
    the run with the writer's tail are matched and validated in passes over the run; from the
    first that is not (or from the start, when one of them does not validate), line by line.
    """
    anchor = scan.anchor
    limit = anchor.count if anchor is not None else scan.count + total
    if 0 <= scan.next_watch < limit:
        limit = scan.next_watch
    stop = min(total, start + limit - scan.count)
    if stop <= start:
        return start
    batch = lines[start:stop]
    session_id = scan.session_id
    tail = scan.tail
    nesting_bytes, nesting_brackets = _line_check.NESTING_BYTES, _line_check.NESTING_BRACKETS
    first = index = scan.expected_index
    links = _links(batch, scan.head)
    # with the session known, the writer's tail pins ``provenance`` as the line's last key
    is_json = json_validator() if session_id is not None else None
    position = 0
    if is_json is not None:
        position = _tails_matching(batch, tail, index, links)
        if position and max(map(len, batch[:position])) > nesting_bytes:
            position = _before_deep_nesting(batch, position)
        if position and not all_json(batch[:position]):
            position = 0
        index += position
    read_provenance = provenance_reader()
    for line in batch[position:]:
        if len(line) > nesting_bytes and line.count(b"[") + line.count(b"{") >= nesting_brackets:
            break  # nesting orjson accepts and the standard library may not: ``check_line``
        link = links[position]
        if is_json is not None and line.endswith(tail % (index, link)) and is_json(line):
            position += 1
            index += 1
            continue
        provenance = read_provenance(line)
        if (
            type(provenance) is not dict
            or provenance.get("prevRecordHash") != link.decode("ascii")
            or type(provenance.get("actionIndex")) is not int
            or provenance["actionIndex"] != index
            or (session_id is not None and provenance.get("sessionId") != session_id)
        ):
            break
        position += 1
        index += 1
    advanced = index - first
    if advanced:
        scan.count += advanced
        scan.expected_index = index
        scan.head = links[advanced].decode("ascii")
        scan.writer_made = True
        scan.tail_checked_line = None
        if scan.count == scan.next_watch:
            scan.note_head()
    return start + advanced


def _before_deep_nesting(batch: list[bytes], stop: int) -> int:
    """The first of ``batch[:stop]`` that may nest deeper than the standard library parses."""
    nesting_bytes, nesting_brackets = _line_check.NESTING_BYTES, _line_check.NESTING_BRACKETS
    for position, line in enumerate(batch[:stop]):
        if len(line) > nesting_bytes and line.count(b"[") + line.count(b"{") >= nesting_brackets:
            return position
    return stop


def _links(batch: list[bytes], head: str) -> list[bytes]:
    """``head`` and the hex SHA-256 of each line: what each line must name, and the new head.

    One pass in C over the lines (``map``), not a Python step per line.
    """
    links = [head.encode("ascii")]
    links += map(hexlify, map(_digest, map(_sha256, batch)))
    return links


def _tails_matching(batch: list[bytes], tail: bytes, first_index: int, links: list[bytes]) -> int:
    """How many lines, from the first, end in the writer's ``tail`` for their index and link."""
    indexes = range(first_index, first_index + len(batch))
    # ``links`` holds one more hash than there are lines: the run's new head.
    expected = map(tail.__mod__, zip(indexes, links, strict=False))
    matches = list(map(bytes.endswith, batch, expected))
    try:
        return matches.index(False)
    except ValueError:
        return len(batch)


def _tail_checked_run(scan: Scan, lines: list[bytes], start: int, stop: int) -> int:
    """Accept lines by their tail (no parse) from ``start`` until one differs or ``stop``.

    Returns the position of the first line not accepted. Sound only inside the anchored range;
    see the module docstring. The hashes, the expected tails and the comparisons are each one
    pass in C over the run (``map``), not a Python step per line.
    """
    if stop <= start:
        return start
    batch = lines[start:stop]
    first_index = scan.expected_index
    links = _links(batch, scan.head)
    advanced = _tails_matching(batch, scan.tail, first_index, links)
    if advanced:
        scan.count += advanced
        scan.expected_index = first_index + advanced
        scan.tail_checked_line = batch[advanced - 1]
        scan.tail_checked_prev = links[advanced - 1].decode("ascii")
        scan.head = links[advanced].decode("ascii")
    return start + advanced


def finish(scan: Scan, torn: bytes | None) -> None:
    """Torn tail and anchor findings after the last complete line."""
    count = scan.count
    if torn is not None:
        scan.fail(
            Failure(
                count,
                1,
                "torn_tail",
                sniff_id(torn),
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
            Failure(
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
                Failure(
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
                Failure(
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
            Failure(
                anchor.count,
                2,
                "extra_records",
                scan.first_extra_id,
                anchor.head,
                scan.head,
                detail,
            )
        )


def _is_one_behind(scan: Scan) -> bool:
    anchor = scan.anchor
    if anchor is None or scan.count != anchor.count + 1 or not scan.extra_ok:
        return False
    before = GENESIS if anchor.count == 0 else scan.hash_before_anchor_end
    return before == anchor.head


def anchor_state(scan: Scan, torn: bytes | None) -> str:
    """``current``, ``behind`` (one interrupted append), ``mismatch`` or ``none`` (no anchor)."""
    anchor = scan.anchor
    if anchor is None:
        return "none"
    if scan.count == anchor.count and scan.head == anchor.head:
        return "current"
    if torn is None and _is_one_behind(scan) and scan.failure_count == 1:
        return "behind"
    return "mismatch"


def scan_file(
    path: str | os.PathLike[str],
    anchor: Anchor | None,
    *,
    full: bool = False,
    size_limit: int | None = None,
    session_id: str | None = None,
    watch: Iterable[int] = (),
) -> tuple[Scan, bytes | None]:
    """Stream the chain file at ``path`` through one pass; return the pass and its torn tail.

    A missing file is an empty chain. ``size_limit`` reads only the first that many bytes.
    """
    trusted = 0 if anchor is None or full else anchor.count
    scan = Scan(trusted=trusted, anchor=anchor, session_id=session_id, watch=list(watch))
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
                pieces = BytesIO(chunk).readlines()
                partial = None if pieces[-1].endswith(b"\n") else pieces.pop()
                if pieces:
                    if carry:
                        carry.append(pieces[0])
                        pieces[0] = b"".join(carry)
                        carry = []
                    # without their newlines (``readlines`` finds them with ``memchr``, where
                    # ``bytes.split`` compares byte by byte)
                    _scan_lines(scan, list(map(bytes.removesuffix, pieces, repeat(_NEWLINE))))
                if partial is not None:
                    carry.append(partial)
            if carry:
                torn = b"".join(carry)
    finish(scan, torn)
    return scan, torn


def failure_order(failure: Failure) -> tuple[int, int]:
    """Sort key of failures: by record, a line's own defect before an anchor finding."""
    return failure.index, failure.order
