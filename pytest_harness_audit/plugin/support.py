"""The library side of the plugin's end-of-test check: what the markers (and
``--harness-audit``) require of a session.

Loaded by the end-of-test hook once a test has made a harness session (it imports the readers
and the social door), so a run that uses no harness never pays for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_harness_audit.doors.social import check_refused
from pytest_harness_audit.plugin.markers import (
    MarkerArguments,
    parse_expect_denied,
    parse_expect_escalation,
    parse_expect_refused,
    parse_expect_verdict,
)
from pytest_harness_audit.readers.expectations import check_denied, check_escalation, check_verdict
from pytest_harness_audit.wording import visible

if TYPE_CHECKING:
    from pytest_harness_audit.plugin.options import AuditOptions
    from pytest_harness_audit.session.harness import Harness


def _chain_problems(harness: Harness) -> list[str]:
    report = harness.verify()
    if report.valid:
        return []
    return [
        f"session {harness.session_id}: audit chain invalid: "
        f"{report.reason} at record {report.first_bad_index} "
        f"(expected {report.expected}, found {report.found})"
    ]


def end_of_test_problems(
    harness: Harness, markers: MarkerArguments, options: AuditOptions
) -> list[str]:
    """Everything the markers (and ``--harness-audit``) require of one session, unmet."""
    problems = _chain_problems(harness) if options.enabled else []
    found: list[str | None] = []
    verdict_marks = markers.get("expect_verdict", [])
    if verdict_marks:
        for args, kwargs in verdict_marks:
            found.append(check_verdict(harness, parse_expect_verdict(args, kwargs)))
    elif options.enabled:
        problem = check_verdict(harness, options.expect, at_most=True)
        if problem:
            found.append(
                problem + "\n(the suite default harness_audit_expect applies; "
                "mark the test with expect_verdict to expect otherwise)"
            )
    for args, kwargs in markers.get("expect_denied", []):
        found.append(check_denied(harness, **parse_expect_denied(args, kwargs)))
    for args, kwargs in markers.get("expect_refused", []):
        problem = check_refused(harness.records, **parse_expect_refused(args, kwargs))
        if problem:
            found.append(f"session {harness.session_id}: {problem}")
    for args, kwargs in markers.get("expect_escalation", []):
        found.append(check_escalation(harness, **parse_expect_escalation(args, kwargs)))
    # Records hold what agents wrote: a control character in a target must not act on the
    # terminal that prints the failure (erase the line of a denied call).
    return [visible(problem) for problem in problems + [p for p in found if p]]
