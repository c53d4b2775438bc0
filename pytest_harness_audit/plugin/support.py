"""The library side of the plugin's end-of-test check: what the markers (and
``--harness-audit``) require of a session, and the policy of a test's sessions.

Loaded on first use by the hooks and fixtures (it imports the readers and the policy engine), so
a run that uses no harness never pays for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_harness_audit.doors.social import check_refused
from pytest_harness_audit.plugin.markers import (
    MarkerArguments,
    parse_expect_denied,
    parse_expect_escalation,
    parse_expect_refused,
    parse_expect_verdict,
)
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.expectations import check_denied, check_escalation, check_verdict

if TYPE_CHECKING:
    from pytest_harness_audit.plugin.options import AuditOptions
    from pytest_harness_audit.session.harness import Harness
    from pytest_harness_audit.types import Decision


def load_policy(
    name_or_path: str,
    base_dir: Path,
    *,
    default_policy: Decision | None = None,
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
    return problems + [problem for problem in found if problem]
