"""The terminal summary of ``--harness-audit``: one row per session, then totals.

Rows travel from xdist workers to the controller as JSON (``workeroutput``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, get_args

from pytest_harness_audit.types import VerdictName
from pytest_harness_audit.wording import plural

if TYPE_CHECKING:
    from pytest_harness_audit.session.harness import Harness


@dataclass(frozen=True)
class SessionSummary:
    """One row of the terminal summary (also sent from xdist workers to the controller)."""

    nodeid: str
    session_id: str
    calls: int
    denied: int
    warned: int
    chain_valid: bool
    records: int
    verdict: VerdictName
    storage: str
    #: ``R6 chain: …`` when the session's policy says ``showR6Status`` (else empty).
    r6_status: str = ""
    #: The chain's head (SHA-256 of its last record), published where the agent has no hand;
    #: the test process's witness instead when the chain does not hold it.
    head: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionSummary:
        """Inverse of :meth:`to_dict`."""
        return cls(**{key: data[key] for key in cls.__dataclass_fields__ if key in data})


def changed_since_published(summaries: Iterable[SessionSummary]) -> list[str]:
    """One line per session whose stored chain no longer holds the head the run published at
    its test's end (a chain valid then): a later test's agent changed the evidence of an earlier
    session through the store it shares, which that session's own witness, gone with its test,
    can no longer see."""
    from pytest_harness_audit.audit.verify import verify_chain
    from pytest_harness_audit.errors import HarnessAuditError

    lines = []
    for row in summaries:
        if not (row.chain_valid and row.head):
            continue
        try:
            report = verify_chain(row.storage, row.session_id, witness=row.head)
            problem = None if report.valid else report.reason
        except (HarnessAuditError, OSError) as exc:
            problem = str(exc)
        if problem is not None:
            lines.append(
                f"harness-audit: the chain of {row.session_id} ({row.nodeid}) changed after its "
                f"test ended ({problem}; published head {row.head[:12]}): the run's evidence "
                "was tampered with after the fact"
            )
    return lines


def summarise(harness: Harness, nodeid: str) -> SessionSummary:
    """The summary row of a session, read from its verified chain."""
    report = harness.verify()
    calls = harness.calls()
    verdict, _ = harness.judge()
    return SessionSummary(
        nodeid=nodeid,
        session_id=harness.session_id,
        calls=len(calls),
        denied=sum(1 for c in calls if c.decision == "deny" or c.status == "blocked"),
        warned=sum(1 for c in calls if c.decision == "warn"),
        chain_valid=report.valid,
        records=report.record_count,
        verdict=verdict.value,
        storage=str(harness.storage_dir),
        r6_status=_r6_status(harness, report),
        head=harness.published_head().hash,
    )


def unreadable_summary(harness: Harness, nodeid: str) -> SessionSummary:
    """The row of a session whose chain cannot be read at all (a folder where its file was,
    say): invalid, FAIL, no record counted, and the head its own writer kept in memory."""
    witness = harness.witness
    return SessionSummary(
        nodeid=nodeid,
        session_id=harness.session_id,
        calls=0,
        denied=0,
        warned=0,
        chain_valid=False,
        records=0,
        verdict="FAIL",
        storage=str(harness.storage_dir),
        head="" if witness is None else witness.hash,
    )


def encode_summaries(summaries: Iterable[SessionSummary]) -> str:
    """Serialise rows for ``workeroutput``."""
    return json.dumps([s.to_dict() for s in summaries])


def decode_summaries(text: str) -> list[SessionSummary]:
    """Inverse of :func:`encode_summaries`."""
    return [SessionSummary.from_dict(item) for item in json.loads(text)]


#: The widest the test column of the summary gets (a longer test name alone still shows whole).
TEST_WIDTH = 70


def short_test_id(nodeid: str, width: int = TEST_WIDTH) -> str:
    """``nodeid`` cut from the left to at most ``width`` characters, at a ``::`` or ``/``
    boundary (``…/test_containment.py::test_a_human_lifts_the_quarantine``); the test name
    (after the last ``::``) is always kept whole, even when it alone is wider."""
    if len(nodeid) <= width:
        return nodeid
    path, sep, rest = nodeid.partition("::")
    starts = [i for i, char in enumerate(path) if char == "/"]
    if sep:
        offset = len(path) + 2
        starts.append(len(path))
        starts.extend(offset + i for i in _separators(rest))
    for start in starts:
        tail = nodeid[start:]
        if len(tail) + 1 <= width:
            return "…" + tail
    return "…" + (nodeid[starts[-1] :] if starts else nodeid[-(width - 1) :])


def _separators(text: str) -> list[int]:
    """Indexes of each ``::`` in ``text`` outside ``[…]`` parameters."""
    found, depth, index = [], 0, 0
    while index < len(text):
        char = text[index]
        depth += char == "["
        depth -= char == "]" and depth > 0
        if depth == 0 and text.startswith("::", index):
            found.append(index)
            index += 2
            continue
        index += 1
    return found


def format_summary(summaries: Sequence[SessionSummary]) -> list[str]:
    """The terminal summary table, one row per session, then totals."""
    if not summaries:
        return ["no harness sessions"]
    rows = sorted(summaries, key=lambda s: (s.nodeid, s.session_id))
    tests = {s.nodeid: short_test_id(s.nodeid, TEST_WIDTH) for s in rows}
    width = max(len(test) for test in tests.values())
    header = (
        f"{'test':<{width}}  {'calls':>5}  {'denied':>6}  {'warned':>6}  {'chain':<7}  "
        f"{'head':<12}  verdict"
    )
    lines = [header]
    for s in rows:
        test = tests[s.nodeid]
        chain = "valid" if s.chain_valid else "INVALID"
        lines.append(
            f"{test:<{width}}  {s.calls:>5}  {s.denied:>6}  {s.warned:>6}  {chain:<7}  "
            f"{s.head[:12]:<12}  {s.verdict}"
        )
    by_verdict = {v: sum(1 for s in rows if s.verdict == v) for v in get_args(VerdictName)}
    invalid = sum(1 for s in rows if not s.chain_valid)
    lines.append(
        f"{plural(len(rows), 'session')}, {plural(sum(s.calls for s in rows), 'call')}, "
        f"{sum(s.denied for s in rows)} denied, {sum(s.warned for s in rows)} warned; "
        f"verdicts: {by_verdict['PASS']} PASS, {by_verdict['WARN']} WARN, "
        f"{by_verdict['FAIL']} FAIL; chains: {len(rows) - invalid} valid, {invalid} invalid"
    )
    lines.extend(f"{tests[s.nodeid]}: {s.r6_status}" for s in rows if s.r6_status)
    return lines


def _r6_status(harness: Harness, report: Any) -> str:
    """The chain status line of a session whose policy says ``showR6Status``."""
    if not harness.policy.show_r6_status:
        return ""
    from pytest_harness_audit.gate.console import format_status

    return format_status(report.record_count, report.valid, report.head, report.reason)
