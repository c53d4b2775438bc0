"""The library side of the plugin's end-of-test check: what the markers (and
``--harness-audit``) require of a session.

Loaded by the end-of-test hook once a test has made a harness session (it imports the readers
and the social door), so a run that uses no harness never pays for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_harness_audit.doors.social import check_refused
from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.plugin.markers import (
    MarkerArguments,
    parse_expect_denied,
    parse_expect_escalation,
    parse_expect_refused,
    parse_expect_verdict,
)
from pytest_harness_audit.readers.expectations import (
    ESCALATION_LEVELS,
    check_denied,
    check_escalation,
    check_verdict,
    highest_level,
)
from pytest_harness_audit.wording import visible

if TYPE_CHECKING:
    from pytest_harness_audit.plugin.options import AuditOptions
    from pytest_harness_audit.session.harness import Harness


#: The markers read from the chain's records: an invalid chain's records prove none of them.
RECORD_MARKERS = ("expect_denied", "expect_refused", "expect_escalation")

#: Where a session stood when the test's markers were checked: (valid, record count, head).
CheckedState = tuple[bool, int, str]


def checked_state(harness: Harness) -> CheckedState:
    """What a later change of the session (a call, a rewrite) is told apart from."""
    try:
        report = harness.verify()
    except HarnessAuditError as exc:  # unreadable: the check that met it failed the test
        return False, -1, str(exc)
    return report.valid, report.record_count, report.head


def _chain_problem(harness: Harness, markers: MarkerArguments) -> str:
    report = harness.verify()
    text = (
        f"session {harness.session_id}: audit chain invalid: "
        f"{report.reason} at record {report.first_bad_index} "
        f"(expected {report.expected}, found {report.found})"
    )
    reading = [name for name in RECORD_MARKERS if markers.get(name)]
    if reading:
        text += (
            f"\n({', '.join(reading)} not checked: the records of a chain that does not verify "
            "prove nothing)"
        )
    return text


def end_of_test_problems(
    harness: Harness, markers: MarkerArguments, options: AuditOptions, *, finished: bool = True
) -> list[str]:
    """Everything the markers (and ``--harness-audit``) require of one session, unmet.

    ``finished=False`` (the test body stopped early, by a skip or an xfail, or the session
    changed after the check): only what no further call could undo — a verdict worse than the
    one expected, an invalid chain, more denials than ``count``, a higher escalation.
    """
    found: list[str | None] = []
    valid = harness.verify().valid
    if not valid and (options.enabled or any(markers.get(name) for name in RECORD_MARKERS)):
        found.append(_chain_problem(harness, markers))
    verdict_marks = markers.get("expect_verdict", [])
    if verdict_marks:
        for args, kwargs in verdict_marks:
            wanted = parse_expect_verdict(args, kwargs)
            found.append(check_verdict(harness, wanted, at_most=not finished))
    elif options.enabled:
        problem = check_verdict(harness, options.expect, at_most=True)
        if problem:
            found.append(
                problem + "\n(the suite default harness_audit_expect applies; "
                "mark the test with expect_verdict to expect otherwise)"
            )
    if valid:
        found.extend(_record_problems(harness, markers, finished))
    # Records hold what agents wrote: a control character in a target must not act on the
    # terminal that prints the failure (erase the line of a denied call).
    return [visible(problem) for problem in found if problem]


def _record_problems(
    harness: Harness, markers: MarkerArguments, finished: bool
) -> list[str | None]:
    """The markers read from the records (of a chain that verifies)."""
    found: list[str | None] = []
    for args, kwargs in markers.get("expect_denied", []):
        wanted = parse_expect_denied(args, kwargs)
        count = wanted["count"]
        if finished or (
            count is not None and len(harness.denied(wanted["tool"], wanted["target"])) > count
        ):
            found.append(check_denied(harness, **wanted))
    if finished:
        for args, kwargs in markers.get("expect_refused", []):
            problem = check_refused(harness.records, **parse_expect_refused(args, kwargs))
            if problem:
                found.append(f"session {harness.session_id}: {problem}")
    for args, kwargs in markers.get("expect_escalation", []):
        wanted = parse_expect_escalation(args, kwargs)
        if finished or _above(highest_level(harness)[0], wanted["level"]):
            found.append(check_escalation(harness, **wanted))
    return found


def _above(level: str, expected: str) -> bool:
    return ESCALATION_LEVELS.index(level) > ESCALATION_LEVELS.index(expected)
