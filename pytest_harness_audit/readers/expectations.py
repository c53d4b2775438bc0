"""Checks shared by markers and scenario files: verdict, denied calls, escalation.

Each check returns ``None`` when satisfied, else a readable message with expected vs actual and
the deciding records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_harness_audit.readers.verdict import Verdict
from pytest_harness_audit.wording import visible

if TYPE_CHECKING:
    from pytest_harness_audit.readers.session_view import (
        AuditedSession,
        ScriptedScenario,
        StepOutcome,
    )

ESCALATION_LEVELS = ("none", "notice", "quarantine")


def _reasons_text(harness: AuditedSession) -> str:
    _, reasons = harness.judge()
    if not reasons:
        return "  (nothing: every call was allowed)"
    return "\n".join(f"  {reason}" for reason in reasons)


def check_verdict(
    harness: AuditedSession, expected: str | Verdict, *, at_most: bool = False
) -> str | None:
    """``expected`` exactly (or, with ``at_most``, no worse than it)."""
    wanted = Verdict.parse(expected)
    actual, _ = harness.judge()
    if (actual <= wanted) if at_most else (actual == wanted):
        return None
    how = "no worse than" if at_most else "verdict"
    return (
        f"session {harness.session_id}: expected {how} {wanted.value}, got "
        f"{actual.value}.\nDeciding records:\n{_reasons_text(harness)}"
    )


def check_denied(
    harness: AuditedSession,
    tool: str | None = None,
    target: str | None = None,
    count: int | None = None,
) -> str | None:
    """At least one (or exactly ``count``) denied call matching ``tool``/``target``."""
    try:
        harness.assert_denied(tool, target, count=count)
    except AssertionError as exc:
        return f"session {harness.session_id}: {exc}"
    return None


def highest_level(harness: AuditedSession) -> tuple[str, list[str]]:
    """The highest level the ladder reached, and the triggers of escalations to it."""
    levels = {"notice": 1, "quarantine": 2}
    best, triggers = "none", list[str]()
    for record in harness.escalations:
        immune = record.raw.get("immune", {})
        level = str(immune.get("level"))
        if levels.get(level, 0) > levels.get(best, 0):
            best, triggers = level, []
        if level == best:
            triggers.append(str(immune.get("trigger")))
    return best, triggers


def escalation_history(harness: AuditedSession) -> str:
    """The ladder's history with evidence, one step per line."""
    lines = []
    for record in harness.records:
        if record.kind in ("escalation", "lift"):
            immune = record.raw.get("immune", {})
            evidence = ", ".join(immune.get("evidence", ()))
            suffix = f" evidence: {evidence}" if evidence else ""
            lines.append(f"  {record.describe()}{suffix}")
    return "\n".join(lines) if lines else "  (no escalation recorded)"


def check_escalation(harness: AuditedSession, level: str, trigger: str | None = None) -> str | None:
    """The ladder reached exactly ``level`` (``none`` = never escalated), by ``trigger``."""
    best, triggers = highest_level(harness)
    ok = best == level and (trigger is None or trigger in triggers or level == "none")
    if ok:
        return None
    wanted = f"{level}" + (f" (trigger {trigger})" if trigger else "")
    got = best + (f" (triggers {', '.join(triggers)})" if triggers else "")
    return (
        f"session {harness.session_id}: expected escalation {wanted}, got {got}.\n"
        f"Ladder history:\n{escalation_history(harness)}"
    )


def check_scenario(
    harness: AuditedSession, scenario: ScriptedScenario, results: Sequence[StepOutcome]
) -> None:
    """Assert a played scenario's step and session expectations."""
    problems = []
    for step, result in zip(scenario.steps, results, strict=False):
        expect = step.expect
        if expect.decision is not None and result.decision != expect.decision:
            problems.append(
                f"step {step.number} ({step.tool}): expected decision "
                f"{expect.decision}, got {result.decision}"
            )
        if expect.status is not None and result.status != expect.status:
            problems.append(
                f"step {step.number} ({step.tool}): expected status "
                f"{expect.status}, got {result.status}"
                + (f" ({result.error_message})" if result.error_message else "")
            )
    session = scenario.expect
    if session.verdict is not None:
        problem = check_verdict(harness, session.verdict)
        if problem:
            problems.append(problem)
    if session.denied is not None:
        if not session.denied and harness.denied():
            problems.append(
                "expected no denied call, got:\n"
                + "\n".join(f"  {r.describe()}" for r in harness.denied())
            )
        for item in session.denied:
            problem = check_denied(harness, item.tool, item.target, item.count)
            if problem:
                problems.append(problem)
    if session.escalation is not None:
        problem = check_escalation(harness, session.escalation.level, session.escalation.trigger)
        if problem:
            problems.append(problem)
    if problems:
        raise AssertionError(
            visible(
                f"scenario {scenario.name!r} did not go as expected:\n"
                + "\n".join(problems)
                + f"\nRecorded calls:\n{harness.recorded_summary()}"
            )
        )
