"""The library side of the pytest plugin: options, marker arguments, end-of-test checks and
the terminal summary. ``plugin.py`` only wires these into pytest hooks."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pytest_harness_audit.doors.social import check_refused, parse_expect_refused
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.expectations import (
    ESCALATION_LEVELS,
    check_denied,
    check_escalation,
    check_verdict,
)
from pytest_harness_audit.readers.verdict import Verdict
from pytest_harness_audit.session.harness import Harness

MARKERS = {
    "expect_verdict": "expect_verdict(verdict): the test's harness sessions must be judged "
    "exactly PASS, WARN or FAIL",
    "expect_denied": "expect_denied(tool=None, target=None, count=None): a matching call must "
    "have been denied (exactly count times, if given)",
    "expect_escalation": "expect_escalation(level, trigger=None): the immune ladder must reach "
    "exactly level (notice, quarantine or none)",
    "expect_refused": "expect_refused(reason=None, to=None): a message send must have been refused",
    "harness_policy": "harness_policy(name_or_path, **overrides): the policy of the test's "
    "harness sessions (preset name or file; overrides: default_policy, "
    "enforce)",
    "harness_workspace": "harness_workspace(template): the workspace template of the test's "
    "harness",
    "harness_agents": "harness_agents(local, *peers): agent names for social-harness sends",
    "harness_snapshot": "harness_snapshot: at the end of the test, compare every harness session's "
    "report with its .audit.yaml snapshot (syrupy; --snapshot-update accepts)",
}


@dataclass(frozen=True)
class AuditOptions:
    """What ``--harness-audit`` and its ini settings say."""

    enabled: bool
    directory: Path
    policy: str
    expect: Verdict


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
    verdict: str
    storage: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionSummary:
        """Inverse of :meth:`to_dict`."""
        return cls(**{key: data[key] for key in cls.__dataclass_fields__})


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
    header = f"{'test':<{width}}  {'calls':>5}  {'denied':>6}  {'warned':>6}  {'chain':<7}  verdict"
    lines = [header]
    for s in rows:
        test = s.nodeid if len(s.nodeid) <= width else "…" + s.nodeid[-(width - 1) :]
        chain = "valid" if s.chain_valid else "INVALID"
        lines.append(
            f"{test:<{width}}  {s.calls:>5}  {s.denied:>6}  {s.warned:>6}  {chain:<7}  {s.verdict}"
        )
    by_verdict = {v: sum(1 for s in rows if s.verdict == v) for v in ("PASS", "WARN", "FAIL")}
    invalid = sum(1 for s in rows if not s.chain_valid)
    lines.append(
        f"{len(rows)} sessions, {sum(s.calls for s in rows)} calls, "
        f"{sum(s.denied for s in rows)} denied, {sum(s.warned for s in rows)} warned; "
        f"verdicts: {by_verdict['PASS']} PASS, {by_verdict['WARN']} WARN, "
        f"{by_verdict['FAIL']} FAIL; chains: {len(rows) - invalid} valid, {invalid} invalid"
    )
    return lines


# -- marker arguments --------------------------------------------------------------------------
def _only(
    name: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    allowed: Sequence[str],
    positional: int,
) -> dict[str, Any]:
    if len(args) > positional:
        raise UsageError(
            f"{name}: takes at most {positional} positional argument(s), got {len(args)}"
        )
    values = dict(zip(allowed, args, strict=False))
    for key, value in kwargs.items():
        if key not in allowed:
            raise UsageError(f"{name}: unknown argument {key!r} (allowed: {', '.join(allowed)})")
        if key in values:
            raise UsageError(f"{name}: {key!r} given twice")
        values[key] = value
    return values


def parse_expect_verdict(args: Sequence[Any], kwargs: Mapping[str, Any]) -> Verdict:
    """``expect_verdict("FAIL")``."""
    values = _only("expect_verdict", args, kwargs, ("verdict",), 1)
    if "verdict" not in values:
        raise UsageError("expect_verdict: needs a verdict: PASS, WARN or FAIL")
    try:
        return Verdict.parse(values["verdict"])
    except ValueError as exc:
        raise UsageError(f"expect_verdict: {exc}") from None


def parse_expect_denied(args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``expect_denied(tool=None, target=None, count=None)``."""
    values = _only("expect_denied", args, kwargs, ("tool", "target", "count"), 2)
    for key in ("tool", "target"):
        if values.get(key) is not None and not isinstance(values[key], str):
            raise UsageError(f"expect_denied: {key} must be a string, got {values[key]!r}")
    count = values.get("count")
    if count is not None and (type(count) is not int or count < 0):
        raise UsageError(f"expect_denied: count must be a non-negative integer, got {count!r}")
    return {"tool": values.get("tool"), "target": values.get("target"), "count": count}


def parse_expect_escalation(args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``expect_escalation(level, trigger=None)``."""
    values = _only("expect_escalation", args, kwargs, ("level", "trigger"), 2)
    level = values.get("level")
    if level not in ESCALATION_LEVELS:
        raise UsageError(
            f"expect_escalation: level must be one of {', '.join(ESCALATION_LEVELS)}; got {level!r}"
        )
    trigger = values.get("trigger")
    if trigger is not None and not isinstance(trigger, str):
        raise UsageError(f"expect_escalation: trigger must be a string, got {trigger!r}")
    return {"level": level, "trigger": trigger}


def parse_harness_policy(args: Sequence[Any], kwargs: Mapping[str, Any], base_dir: Path) -> Policy:
    """``harness_policy("safety")``, ``harness_policy("rules.yaml", enforce=False)``."""
    if len(args) != 1 or not isinstance(args[0], str):
        raise UsageError("harness_policy: needs one preset name or policy file path")
    allowed = ("default_policy", "enforce")
    for key in kwargs:
        if key not in allowed:
            raise UsageError(
                f"harness_policy: unknown override {key!r} (allowed: {', '.join(allowed)})"
            )
    return load_policy(args[0], base_dir, **kwargs)


def load_policy(
    name_or_path: str,
    base_dir: Path,
    *,
    default_policy: str | None = None,
    enforce: bool | None = None,
) -> Policy:
    """A preset by name, else a policy file (relative to ``base_dir``), with overrides."""
    if name_or_path in Policy.preset_names():
        return Policy.preset(name_or_path, default_policy=default_policy, enforce=enforce)
    path = Path(name_or_path)
    if not path.is_absolute():
        path = base_dir / path
    policy = Policy.load(path)
    if default_policy is None and enforce is None:
        return policy
    data = policy.to_dict()
    if default_policy is not None:
        data["defaultPolicy"] = default_policy
    if enforce is not None:
        data["enforce"] = enforce
    return Policy.from_dict(data, source=str(path), name=policy.name)


def end_of_test_problems(
    harness: Harness,
    markers: Mapping[str, list[tuple[Sequence[Any], Mapping[str, Any]]]],
    options: AuditOptions,
) -> list[str]:
    """Everything the markers (and ``--harness-audit``) require of one session, unmet."""
    problems: list[str] = []
    if options.enabled:
        report = harness.verify()
        if not report.valid:
            problems.append(
                f"session {harness.session_id}: audit chain invalid: "
                f"{report.reason} at record {report.first_bad_index} "
                f"(expected {report.expected}, found {report.found})"
            )
    verdict_marks = markers.get("expect_verdict", [])
    if verdict_marks:
        for args, kwargs in verdict_marks:
            problem = check_verdict(harness, parse_expect_verdict(args, kwargs))
            if problem:
                problems.append(problem)
    elif options.enabled:
        problem = check_verdict(harness, options.expect, at_most=True)
        if problem:
            problems.append(
                problem + "\n(the suite default harness_audit_expect applies; "
                "mark the test with expect_verdict to expect otherwise)"
            )
    for args, kwargs in markers.get("expect_denied", []):
        problem = check_denied(harness, **parse_expect_denied(args, kwargs))
        if problem:
            problems.append(problem)
    for args, kwargs in markers.get("expect_refused", []):
        problem = check_refused(harness.records, **parse_expect_refused(args, kwargs))
        if problem:
            problems.append(f"session {harness.session_id}: {problem}")
    for args, kwargs in markers.get("expect_escalation", []):
        problem = check_escalation(harness, **parse_expect_escalation(args, kwargs))
        if problem:
            problems.append(problem)
    return problems
