"""A stored report file checked against the chain it was written from.

``harness-audit audit report SESSION`` prints the report file a ``--harness-audit`` run wrote
under ``<storage>/reports/``. That file is a copy, not evidence: nothing links it to the chain,
and a program that finds the storage folder (a path built at run time, a later session of the
same store) can rewrite it. Printed as found, a rewritten file showed ``verdict: PASS`` for a
session whose chain judges FAIL. So before it is printed its document is compared with the
chain as it verifies now: the ``chain`` line, one call line per call record with the record's
tool, decision, status and part of the verdict, and a verdict no milder than the chain's own
(the run may add reasons from outside the chain, never remove one).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.audit.verify import verify_chain
from pytest_harness_audit.readers.report import split_report_file
from pytest_harness_audit.readers.verdict import Verdict, judge, judge_record


def chain_verdict(storage: str | Path, session_id: str) -> tuple[Verdict, list[CallRecord], Any]:
    """The verdict the stored chain gives now, its records and its verification."""
    chain = verify_chain(storage, session_id)
    records = [CallRecord(raw) for raw in iter_records(storage, session_id)]
    problem = "" if chain.valid else f"{chain.reason} at record {chain.first_bad_index}"
    verdict, _ = judge(records, chain_valid=chain.valid, chain_problem=problem)
    return verdict, records, chain


def report_file_problem(storage: str | Path, session_id: str, text: str) -> str | None:
    """Why the report file ``text`` of ``session_id`` is not what its chain holds (the first
    difference, in words), or ``None`` when it matches."""
    verdict, records, chain = chain_verdict(storage, session_id)
    try:
        document = yaml.safe_load(split_report_file(text)[0])
    except yaml.YAMLError:
        document = None
    if not isinstance(document, Mapping):
        return "it is not a report document"
    written = _verdict(document.get("verdict"))
    if written is None or written.rank < verdict.rank:
        return f"it says verdict {document.get('verdict')!r}"
    found = document.get("chain")
    expected = {"valid": chain.valid, "records": chain.record_count}
    if not isinstance(found, Mapping) or {k: found.get(k) for k in expected} != expected:
        return f"its chain line says {found!r}, the chain verifies as {expected}"
    calls = [record for record in records if record.kind in ("call", "message")]
    lines = document.get("calls")
    if not isinstance(lines, list) or len(lines) != len(calls):
        count = len(lines) if isinstance(lines, list) else 0
        return f"it has {count} call lines, the chain {len(calls)} calls"
    for line, record in zip(lines, calls, strict=True):
        if not isinstance(line, Mapping) or _line_fields(line) != _record_fields(record):
            return f"its line of call #{record.position} is not the chain's record"
    return None


def _verdict(value: object) -> Verdict | None:
    try:
        return Verdict.parse(str(value))
    except ValueError:
        return None


def _line_fields(line: Mapping[str, Any]) -> tuple[object, ...]:
    return (
        line.get("position"),
        line.get("tool"),
        line.get("decision"),
        line.get("status"),
        line.get("verdict"),
    )


def _record_fields(record: CallRecord) -> tuple[object, ...]:
    part = judge_record(record)
    return (
        record.position,
        record.tool,
        record.decision,
        record.status,
        None if part is None else part.verdict.value,
    )
