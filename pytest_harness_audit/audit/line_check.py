"""Checking one chain line in full: parse it, then its link, action index and session.

A plainly good line — orjson parses it into a JSON object whose ``provenance`` carries the
expected ``prevRecordHash``, an ``int`` (not ``bool``) ``actionIndex`` equal to the expected
index and, when asked, the session's id — passes on orjson's parse. Every other line is parsed by
the standard library (strict UTF-8, no NaN or Infinity), which decides the verdict and gives the
reason. Both paths agree on the lines the quick one accepts: what orjson parses, the standard
library parses to the same value, except nesting deeper than the interpreter's recursion limit,
which needs more than ``NESTING_BRACKETS`` brackets: such a line takes the standard path.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

from pytest_harness_audit.audit.anchor import GENESIS
from pytest_harness_audit.audit.errors import AuditError
from pytest_harness_audit.audit.storage import sanitize_session_id

#: A line longer than ``NESTING_BYTES`` with at least ``NESTING_BRACKETS`` brackets may nest
#: deeper than the standard library parses: it is never accepted on orjson's parse alone.
NESTING_BYTES = 1_800
NESTING_BRACKETS = 900
_loads = orjson.loads
_DecodeError = orjson.JSONDecodeError
_new_check = object.__new__
_RECORD_ID = re.compile(rb'"recordId":"((?:[^"\\]|\\.){0,64})"')


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


def _passed(record: dict[str, Any], index: int) -> LineCheck:
    """The ``LineCheck`` of a good line, without the frozen dataclass's per-field setattr."""
    check = _new_check(LineCheck)
    record_id = record.get("recordId")
    r6_id = record.get("r6RequestId")
    check.__dict__.update(
        ok=True,
        reason=None,
        detail="",
        expected=None,
        found=None,
        record_id=record_id if type(record_id) is str else None,
        action_index=index,
        r6_id=r6_id if type(r6_id) is str else None,
        legacy=False,
    )
    return check


def check_line(
    line: bytes, prev_hash: str, expected_index: int, session_id: str | None = None
) -> LineCheck:
    """Check one line in full: parse, link to ``prev_hash``, action index, and (when
    ``session_id`` is given) that ``provenance.sessionId`` names that session.

    A plainly good line is parsed by orjson (see the module docstring); anything else, by the
    standard library, which gives the reason.
    """
    if len(line) <= NESTING_BYTES or line.count(b"[") + line.count(b"{") < NESTING_BRACKETS:
        try:
            record = _loads(line)
        except _DecodeError:
            record = None
        if type(record) is dict:
            provenance = record.get("provenance")
            if type(provenance) is dict and provenance.get("prevRecordHash") == prev_hash:
                index = provenance.get("actionIndex")
                if (
                    type(index) is int
                    and index == expected_index
                    and (session_id is None or provenance.get("sessionId") == session_id)
                ):
                    return _passed(record, index)
    try:
        record = parse_record_line(line)
    except (UnicodeDecodeError, ValueError) as exc:
        detail = f"not a JSON record: {exc}"
        return LineCheck(False, "parse_error", detail, record_id=sniff_id(line))
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
    if session_id is not None:
        named = provenance.get("sessionId") if isinstance(provenance, dict) else None
        if not _names_session(named, session_id):
            return LineCheck(
                False,
                "session_mismatch",
                "the record names another session than its file",
                expected=session_id,
                found=named if isinstance(named, str) else repr(named),
                record_id=record_id,
                action_index=index,
            )
    return LineCheck(True, record_id=record_id, action_index=index, r6_id=r6_id, legacy=legacy)


def _names_session(named: object, session_id: str) -> bool:
    if named == session_id:
        return True
    # A reference-plugin id that is not file-name safe names the file of its sanitised form.
    try:
        return isinstance(named, str) and sanitize_session_id(named) == session_id
    except AuditError:
        return False


def sniff_id(line: bytes) -> str | None:
    """The ``recordId`` of a line that does not parse, when one can be read off it."""
    match = _RECORD_ID.search(line, 0, 4096)
    if match is None:
        return None
    try:
        value = json.loads(b'"' + match.group(1) + b'"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None
