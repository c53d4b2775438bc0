"""The result of evaluating one tool call against a policy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_harness_audit.policy.targets import all_targets, primary_target

_UNSET = object()


class Evaluation:
    """A policy decision for one call.

    Attributes: ``decision`` (allow|deny|warn|ask), ``enforced``, ``blocked`` (deny and enforced),
    ``rule_id``/``rule_name``/``priority`` (``None`` for the default decision), ``reason``,
    ``constraints`` (``policy:<decision>``, ``rule:<id>``/``rule:default``, ``enforced:false`` in
    dry-run), ``category``, ``target`` (the primary target, full length) and ``targets`` (all
    targets, including normalised paths and paths inside a command).
    """

    __slots__ = (
        "_params",
        "_root",
        "_target",
        "_targets",
        "blocked",
        "category",
        "constraints",
        "decision",
        "enforced",
        "priority",
        "reason",
        "rule_id",
        "rule_name",
    )

    def __init__(
        self,
        decision: str,
        enforced: bool,
        rule_id: str | None,
        rule_name: str | None,
        priority: int | None,
        reason: str,
        constraints: tuple[str, ...],
        category: str,
        targets: list[str] | None,
        params: Mapping[str, Any],
        root: str | None,
    ) -> None:
        self.decision = decision
        self.enforced = enforced
        self.blocked = enforced and decision == "deny"
        self.rule_id = rule_id
        self.rule_name = rule_name
        self.priority = priority
        self.reason = reason
        self.constraints = constraints
        self.category = category
        self._target: str | object | None = _UNSET
        self._targets = targets
        self._params = params
        self._root = root

    @property
    def target(self) -> str | None:
        """The primary target (full length): the first string of ``file_path``, ``path``,
        ``pattern``, ``command``, ``url``, ``to``. Worked out when first asked for: deciding
        does not need it."""
        if self._target is _UNSET:
            self._target = primary_target(self._params)
        return self._target  # type: ignore[return-value]

    @property
    def targets(self) -> tuple[str, ...]:
        """Every target the call was matched on."""
        if self._targets is None:
            self._targets = all_targets(self._params, self._root)
        return tuple(self._targets)

    @property
    def is_default(self) -> bool:
        """Whether no rule matched and the default policy decided."""
        return self.rule_id is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (the CLI's ``--json`` output)."""
        return {
            "decision": self.decision,
            "enforced": self.enforced,
            "blocked": self.blocked,
            "ruleId": self.rule_id,
            "ruleName": self.rule_name,
            "priority": self.priority,
            "reason": self.reason,
            "constraints": list(self.constraints),
            "category": self.category,
            "target": self.target,
            "targets": list(self.targets),
        }

    def __repr__(self) -> str:
        return (
            f"Evaluation(decision={self.decision!r}, enforced={self.enforced!r}, "
            f"rule_id={self.rule_id!r}, category={self.category!r}, "
            f"target={self.target!r})"
        )
