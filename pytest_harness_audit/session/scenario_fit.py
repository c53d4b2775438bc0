"""Whether a scenario's own ``workspace:`` and ``policy:`` fit the session that plays it.

A session's policy and workspace are fixed when it opens: a harness cannot switch either
mid-session. So a scenario that names a different one is refused, in one line naming the
scenario file, the field and both values, instead of running silently under the wrong rules.
"""

from __future__ import annotations

from pathlib import Path

from pytest_harness_audit.doors.scenarios import Scenario
from pytest_harness_audit.errors import HarnessAuditError, UsageError
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.source import resolve_policy
from pytest_harness_audit.session import workspace as workspaces


def _where(scenario: Scenario) -> str:
    return str(scenario.source) if scenario.source is not None else f"scenario {scenario.name!r}"


def _template_dir(template: str | Path | None) -> Path | None:
    try:
        return workspaces.resolve_template(template)[0].resolve()
    except HarnessAuditError:
        return None


def check_scenario_fits(scenario: Scenario, policy: Policy, template: str | Path | None) -> None:
    """Raise :class:`UsageError` when ``scenario`` names a policy or workspace other than the
    session's ``policy`` (compared by rule content) and workspace ``template`` (``None`` is the
    ``empty`` template)."""
    where = _where(scenario)
    if scenario.policy is not None:
        try:
            wanted = resolve_policy(scenario.policy)
        except HarnessAuditError as exc:
            raise UsageError(f"{where}: field 'policy': {exc}") from None
        if wanted.content_hash != policy.content_hash:
            raise UsageError(
                f"{where}: field 'policy': the scenario names {str(scenario.policy)!r}, but the "
                f"session runs policy {policy.name!r} (a session cannot change its policy "
                "mid-session: give the test the scenario's policy, e.g. "
                "harness_factory(scenario=...) or @pytest.mark.harness_policy)"
            )
    if scenario.workspace is not None:
        wanted_dir = _template_dir(scenario.workspace)
        if wanted_dir is None or wanted_dir != _template_dir(template):
            shown = "empty" if template is None else str(template)
            raise UsageError(
                f"{where}: field 'workspace': the scenario names {str(scenario.workspace)!r}, "
                f"but the session's workspace was made from {shown!r} (give the test the "
                "scenario's workspace, e.g. harness_factory(scenario=...) or "
                "@pytest.mark.harness_workspace)"
            )
