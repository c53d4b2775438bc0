"""The terminal summary of ``--harness-audit``: one row per session, then totals.

Rows travel from xdist workers to the controller as JSON (``workeroutput``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, get_args

from pytest_harness_audit.types import VerdictName

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
    #: The chain's head (SHA-256 of its last record), published where the agent has no hand.
    head: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionSummary:
        """Inverse of :meth:`to_dict`."""
        return cls(**{key: data[key] for key in cls.__dataclass_fields__ if key in data})


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
        head=report.head,
    )


def encode_summaries(summaries: Iterable[SessionSummary]) -> str:
    """Serialise rows for ``workeroutput``."""
    return json.dumps([s.to_dict() for s in summaries])


def decode_summaries(text: str) -> list[SessionSummary]:
    """Inverse of :func:`encode_summaries`."""
    return [SessionSummary.from_dict(item) for item in json.loads(text)]


def format_summary(summaries: Sequence[SessionSummary]) -> list[str]:
    """The terminal summary table, one row per session, then totals."""
    if not summaries:
        return ["no harness sessions"]
    rows = sorted(summaries, key=lambda s: (s.nodeid, s.session_id))
    width = min(max(len(s.nodeid) for s in rows), 70)
    header = (
        f"{'test':<{width}}  {'calls':>5}  {'denied':>6}  {'warned':>6}  {'chain':<7}  "
        f"{'head':<12}  verdict"
    )
    lines = [header]
    for s in rows:
        test = s.nodeid if len(s.nodeid) <= width else "…" + s.nodeid[-(width - 1) :]
        chain = "valid" if s.chain_valid else "INVALID"
        lines.append(
            f"{test:<{width}}  {s.calls:>5}  {s.denied:>6}  {s.warned:>6}  {chain:<7}  "
            f"{s.head[:12]:<12}  {s.verdict}"
        )
    by_verdict = {v: sum(1 for s in rows if s.verdict == v) for v in get_args(VerdictName)}
    invalid = sum(1 for s in rows if not s.chain_valid)
    lines.append(
        f"{len(rows)} sessions, {sum(s.calls for s in rows)} calls, "
        f"{sum(s.denied for s in rows)} denied, {sum(s.warned for s in rows)} warned; "
        f"verdicts: {by_verdict['PASS']} PASS, {by_verdict['WARN']} WARN, "
        f"{by_verdict['FAIL']} FAIL; chains: {len(rows) - invalid} valid, {invalid} invalid"
    )
    return lines
