"""What a door prints on stderr about its records: ``auditLevel`` and ``showR6Status``.

* At ``auditLevel: verbose`` every call record is one line::

      [web4] R6 audit:7fb0ae93 Read README.md: allow, success

* At every level a warn, or a deny that was not enforced (dry run), is one line (at
  ``verbose`` this is that record's line)::

      [web4] Policy WARN: Bash curl http://example.com: Network access flagged (audit:16add321)
      [web4] Policy DENY (dry-run): Bash rm -rf /tmp/x: Destructive command (audit:7fb0ae93)

* With ``showR6Status: true`` a door ends its session's output with the chain status line::

      R6 chain: 12 records, valid, head 1a2b3c4d

A line never spans lines: newlines in targets and reasons are shown as ``\\n``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from pytest_harness_audit.audit.verify import verify_chain

#: The prefix of every record line (the reference plugin's log prefix).
PREFIX = "[web4]"


def _one_line(text: object) -> str:
    return str(text).replace("\r", "\\r").replace("\n", "\\n")


def _constraint(record: Mapping[str, Any], name: str) -> str | None:
    rules = record.get("rules")
    constraints = rules.get("constraints", []) if isinstance(rules, Mapping) else []
    for item in constraints:
        if isinstance(item, str) and item.startswith(f"{name}:"):
            return item.split(":", 1)[1]
    return None


def record_line(record: Mapping[str, Any], *, verbose: bool) -> str | None:
    """The stderr line of one call record (None: nothing to print at this level)."""
    request = record.get("request")
    request = request if isinstance(request, Mapping) else {}
    tool = _one_line(request.get("toolName", record.get("tool", "?")))
    target = request.get("target")
    subject = tool if target in (None, "") else f"{tool} {_one_line(target)}"
    decision = _constraint(record, "policy") or "allow"
    reason = _one_line(record.get("reason") or "")
    record_id = record.get("recordId", "?")
    dry_run = decision == "deny" and _constraint(record, "enforced") == "false"
    if decision == "warn" or dry_run:
        label = "WARN" if decision == "warn" else "DENY (dry-run)"
        return f"{PREFIX} Policy {label}: {subject}: {reason} ({record_id})"
    if not verbose:
        return None
    result = record.get("result")
    status = result.get("status", "?") if isinstance(result, Mapping) else "?"
    return f"{PREFIX} R6 {record_id} {subject}: {decision}, {status}"


class RecordConsole:
    """A gate observer printing :func:`record_line` for each call record on ``stream`` (None:
    whatever ``sys.stderr`` is when the record is written, e.g. pytest's capture)."""

    def __init__(self, stream: TextIO | None, audit_level: str) -> None:
        self.stream = stream
        self.verbose = audit_level == "verbose"

    def __call__(self, record: Mapping[str, Any], output: Any = None) -> None:
        """Print the record's line, if it has one at this level (never fails the call)."""
        line = record_line(record, verbose=self.verbose)
        if line is None:
            return
        # a closed or broken stderr must not fail the call
        with contextlib.suppress(OSError, ValueError):
            print(line, file=self.stream or sys.stderr, flush=True)


def consoles(stream: TextIO | None, audit_level: str) -> list[RecordConsole]:
    """The observers a door's gate gets: a :class:`RecordConsole` on ``stream`` (a door's
    stderr) by ``audit_level``, or none without a stream."""
    return [] if stream is None else [RecordConsole(stream, audit_level)]


def status_line(storage_dir: str | os.PathLike[str], session_id: str) -> str:
    """``R6 chain: N records, valid|INVALID (reason), head <8 hex>`` for a stored session."""
    report = verify_chain(storage_dir, session_id)
    return format_status(report.record_count, report.valid, report.head, report.reason)


def format_status(records: int, valid: bool, head: str | None, reason: str | None = None) -> str:
    """The chain status line from a verification's figures."""
    state = "valid" if valid else f"INVALID ({_one_line(reason)})" if reason else "INVALID"
    noun = "record" if records == 1 else "records"
    return f"R6 chain: {records} {noun}, {state}, head {(head or '')[:8] or 'none'}"
