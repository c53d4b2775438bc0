"""The one read-only view of a chain record, as assertions, verdicts and reports see them."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.audit.tags import DecisionTags, parse_tags
from pytest_harness_audit.policy.patterns import TargetMatcher
from pytest_harness_audit.policy.targets import all_targets, primary_target
from pytest_harness_audit.wording import one_line


@dataclass(frozen=True)
class CallRecord:
    """One record of a session's chain, with the fields tests ask about.

    ``decision`` is the policy decision (``allow``/``warn``/``deny``; ``None`` for records that
    are not calls), ``enforced`` is false for a dry-run deny, ``status`` is the result status
    (``success``/``error``/``blocked``), ``target`` the full primary target where the record
    kept it (the display form otherwise) and ``targets`` every recorded target.
    """

    raw: Mapping[str, Any]

    @property
    def kind(self) -> str:
        """``call``, ``escalation``, ``lift``, ``message`` …"""
        return str(self.raw.get("kind", "call"))

    @property
    def record_id(self) -> str:
        """``audit:<8 hex>``."""
        return str(self.raw.get("recordId", ""))

    @property
    def position(self) -> int:
        """Position in the chain (the action index)."""
        return int(self.raw.get("provenance", {}).get("actionIndex", 0))

    @property
    def tool(self) -> str:
        """Tool name."""
        return str(self.raw.get("tool", ""))

    @property
    def category(self) -> str:
        """Tool category."""
        return str(self.raw.get("category", ""))

    @property
    def constraints(self) -> tuple[str, ...]:
        """``rules.constraints``: ``policy:…``, ``rule:…``, ``enforced:false``, ``immune:…``."""
        return tuple(self.raw.get("rules", {}).get("constraints", ()))

    @functools.cached_property
    def tags(self) -> DecisionTags:
        """The constraint tags, parsed."""
        return parse_tags(self.constraints)

    @property
    def decision(self) -> str | None:
        """Policy decision recorded for the call."""
        return self.tags.decision

    @property
    def rule_id(self) -> str | None:
        """The deciding rule's id (``default`` for the default policy)."""
        return self.tags.rule

    @property
    def enforced(self) -> bool:
        """False when the record says ``enforced:false`` (dry-run)."""
        return self.tags.enforced

    @property
    def quarantined(self) -> bool:
        """Whether the call was blocked by an immune quarantine."""
        return self.tags.quarantined

    @property
    def status(self) -> str:
        """Result status: ``success``, ``error`` or ``blocked``."""
        return str(self.raw.get("result", {}).get("status", ""))

    @property
    def error_message(self) -> str | None:
        """The recorded error or block message."""
        message = self.raw.get("result", {}).get("errorMessage")
        return None if message is None else str(message)

    @property
    def reason(self) -> str | None:
        """Why the gate decided as it did (policy reason or quarantine)."""
        reason = self.raw.get("reason")
        return None if reason is None else str(reason)

    @property
    def target(self) -> str | None:
        """The primary target: full when the parameters were kept (``verbose``), else the
        display form."""
        params = self.params
        if params is not None:
            full = primary_target(params)
            if full is not None:
                return full
        value = self.raw.get("target")
        return None if value is None else str(value)

    @property
    def recorded_target(self) -> str | None:
        """The target as the record keeps it: its display form (first 80 characters and ``…``)."""
        value = self.raw.get("target")
        return None if value is None else str(value)

    @property
    def targets(self) -> tuple[str, ...]:
        """Every recorded target (the primary one first)."""
        values: list[str] = []
        params = self.params
        if params is not None:
            values.extend(all_targets(params))
        elif self.target is not None:
            values.append(self.target)
        for listed in self.raw.get("request", {}).get("targets") or ():
            if str(listed) not in values:
                values.append(str(listed))
        return tuple(values)

    @property
    def params(self) -> Mapping[str, Any] | None:
        """Full parameters, when the audit level kept them (``verbose``)."""
        params = self.raw.get("request", {}).get("params")
        return params if isinstance(params, Mapping) else None

    @property
    def input_hash(self) -> str:
        """SHA-256 of the canonical parameters."""
        return str(self.raw.get("request", {}).get("inputHash", ""))

    @property
    def output_hash(self) -> str | None:
        """SHA-256 of the canonical output."""
        value = self.raw.get("result", {}).get("outputHash")
        return None if value is None else str(value)

    @property
    def alerts(self) -> tuple[str, ...]:
        """Alerts raised on the call (``credential_access``, ``memory_write``)."""
        return tuple(self.raw.get("alerts", ()))

    @property
    def door(self) -> str:
        """How the call arrived: ``scripted``, ``proxy`` or ``hook``."""
        return str(self.raw.get("door", "scripted"))

    def matches(
        self,
        *,
        tool: str | None = None,
        target: str | None = None,
        decision: str | None = None,
        status: str | None = None,
    ) -> bool:
        """Filter: exact tool, decision and status; ``target`` is a glob over every target."""
        if tool is not None and self.tool != tool:
            return False
        if decision is not None and self.decision != decision:
            return False
        if status is not None and self.status != status:
            return False
        if target is not None:
            matcher = TargetMatcher(target, is_regex=False)
            if not any(matcher.matches(t) for t in self.targets):
                return False
        return True

    def describe(self) -> str:
        """One line: ``#3 Bash rm -rf / → deny (deny-destructive-commands) blocked``."""
        if self.kind == "escalation":
            immune = self.raw.get("immune", {})
            return (
                f"#{self.position} immune escalation → {immune.get('level')} "
                f"(trigger {immune.get('trigger')}, score {immune.get('score')})"
            )
        if self.kind == "lift":
            reason = one_line(str(self.raw.get("immune", {}).get("reason")))
            return f"#{self.position} immune lift: {reason}"
        decision = self.decision or "-"
        if decision == "deny" and not self.enforced:
            decision = "deny (dry-run)"
        rule = f" ({self.rule_id})" if self.rule_id else ""
        shown = self.recorded_target
        target = f" {one_line(shown)}" if shown else ""
        return f"#{self.position} {one_line(self.tool)}{target} → {decision}{rule} {self.status}"
