"""The plugin's markers: their help lines and the parsers of their arguments.

The markers are registered in ``pytest_configure``, so they work under ``--strict-markers``. A
parser loads the module it needs when a test actually carries its marker, never at import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, get_args

import pytest

from pytest_harness_audit.errors import HarnessAuditError, UsageError
from pytest_harness_audit.types import VerdictName

if TYPE_CHECKING:
    from pytest_harness_audit.policy import Policy

#: Every marker of the plugin and its help line (``pytest --markers``).
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
    "harness_approvals": "harness_approvals(table, name='scripted'): answer calls a rule decided "
    "ask by {tool glob: approve|reject|escalate|terminate|('modify', params)}, first match wins",
    "harness_snapshot": "harness_snapshot: at the end of the test, compare every harness session's "
    "report with its .audit.yaml snapshot (syrupy; --snapshot-update accepts)",
}

#: Marker arguments as pytest holds them: one ``(args, kwargs)`` per mark, by marker name.
MarkerArguments = Mapping[str, list[tuple[Sequence[Any], Mapping[str, Any]]]]


def register_markers(config: pytest.Config) -> None:
    """Declare every marker of the plugin (``--strict-markers`` then accepts them)."""
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", text if text.startswith(name) else f"{name}: {text}")


def verdict_name(value: object) -> VerdictName:
    """``value`` as a verdict name (case-insensitive; a ``Verdict`` is its name); otherwise the
    ``ValueError`` of :meth:`Verdict.parse <pytest_harness_audit.readers.verdict.Verdict.parse>`.
    """
    if isinstance(value, str) and value.upper() in get_args(VerdictName):
        return cast(VerdictName, value.upper())
    from pytest_harness_audit.readers.verdict import Verdict

    return Verdict.parse(value).value


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


def parse_expect_verdict(args: Sequence[Any], kwargs: Mapping[str, Any]) -> VerdictName:
    """``expect_verdict("FAIL")``."""
    values = _only("expect_verdict", args, kwargs, ("verdict",), 1)
    if "verdict" not in values:
        raise UsageError("expect_verdict: needs a verdict: PASS, WARN or FAIL")
    try:
        return verdict_name(values["verdict"])
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
    from pytest_harness_audit.readers.expectations import ESCALATION_LEVELS

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


def parse_expect_refused(args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``expect_refused(reason=None, to=None)`` (the social door's parser)."""
    from pytest_harness_audit.doors.social import parse_expect_refused as parse

    return parse(args, kwargs)


def parse_harness_agents(args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """``harness_agents("alice", "bob")`` (the social door's parser)."""
    from pytest_harness_audit.doors.social import parse_harness_agents as parse

    return parse(args, kwargs)


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
    from pytest_harness_audit.policy.source import resolve_policy

    return resolve_policy(args[0], base_dir=base_dir, **kwargs)


def parse_harness_approvals(
    args: Sequence[Any], kwargs: Mapping[str, Any]
) -> tuple[Callable[..., Any], str]:
    """``harness_approvals({"Write": "approve", "Bash*": "reject"}, name="reviewer")``: the
    approver of the test's harness sessions and its id."""
    values = _only("harness_approvals", args, kwargs, ("table", "name"), 2)
    table, name = values.get("table"), values.get("name", "scripted")
    if not isinstance(table, Mapping):
        raise UsageError(
            f"harness_approvals: needs a mapping of tool glob to answer, got {table!r}"
        )
    if not isinstance(name, str) or not name:
        raise UsageError(f"harness_approvals: name must be a non-empty string, got {name!r}")
    from pytest_harness_audit.gate.approvals import table_approver

    try:
        return table_approver(table, "harness_approvals"), name
    except ValueError as exc:
        raise UsageError(str(exc)) from None


#: The markers whose arguments are checked at collection and read at the end of the test.
MARKER_PARSERS: dict[str, Callable[[Sequence[Any], Mapping[str, Any]], object]] = {
    "expect_verdict": parse_expect_verdict,
    "expect_denied": parse_expect_denied,
    "expect_escalation": parse_expect_escalation,
    "expect_refused": parse_expect_refused,
    "harness_agents": parse_harness_agents,
    "harness_approvals": parse_harness_approvals,
}


def check_marker_arguments(items: Iterable[pytest.Item]) -> None:
    """Refuse bad marker arguments up front: a ``pytest.UsageError`` naming the test.

    The set-up markers are checked too: ``harness_workspace`` must name a template that exists
    and ``harness_policy`` a policy that loads (each distinct value is loaded once).
    """
    checked: set[tuple[str, str]] = set()
    for item in items:
        try:
            for name, parse in MARKER_PARSERS.items():
                for mark in item.iter_markers(name):
                    parse(mark.args, mark.kwargs)
            _check_setup_markers(item, checked)
        except HarnessAuditError as exc:
            raise pytest.UsageError(f"{item.nodeid}: {exc}") from None


def _check_setup_markers(item: pytest.Item, checked: set[tuple[str, str]]) -> None:
    workspace = item.get_closest_marker("harness_workspace")
    if workspace is not None:
        if len(workspace.args) != 1 or workspace.kwargs:
            raise UsageError("harness_workspace: needs one template name or directory")
        key = ("harness_workspace", str(workspace.args[0]))
        if key not in checked:
            from pytest_harness_audit.session.workspace import resolve_template

            try:
                resolve_template(workspace.args[0])
            except HarnessAuditError as exc:
                raise UsageError(f"harness_workspace: {exc}") from None
            checked.add(key)
    policy = item.get_closest_marker("harness_policy")
    if policy is not None:
        base_dir = Path(str(item.path)).parent
        key = ("harness_policy", repr((policy.args, sorted(policy.kwargs.items()), base_dir)))
        if key not in checked:
            try:
                parse_harness_policy(policy.args, policy.kwargs, base_dir)
            except UsageError:
                raise
            except HarnessAuditError as exc:
                raise UsageError(f"harness_policy: {exc}") from None
            checked.add(key)


def marker_arguments(item: pytest.Item) -> MarkerArguments:
    """The arguments of every checked marker on ``item`` (closest first)."""
    return {name: [(m.args, m.kwargs) for m in item.iter_markers(name)] for name in MARKER_PARSERS}


def closest_argument(node: pytest.Item, name: str) -> Any:
    """The first positional argument of the closest ``name`` marker, or ``None``."""
    mark = node.get_closest_marker(name)
    return mark.args[0] if mark is not None and mark.args else None
