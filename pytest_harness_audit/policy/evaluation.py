"""The result of evaluating one tool call against a policy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pytest_harness_audit.policy.targets import all_targets, primary_target

_UNSET: Final = object()


class Outcome:
    """What a decision says, apart from the call it was made for: worked out once per rule and
    tool by a compiled policy, and shared by every :class:`Evaluation` that rule decides."""

    __slots__ = (
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


class Evaluation:
    """A policy decision for one call.

    Attributes: ``decision`` (allow|deny|warn|ask), ``enforced``, ``blocked`` (deny and enforced),
    ``rule_id``/``rule_name``/``priority`` (``None`` for the default decision), ``reason``,
    ``constraints`` (``policy:<decision>``, ``rule:<id>``/``rule:default``, ``enforced:false`` in
    dry-run), ``category``, ``target`` (the primary target, full length) and ``targets`` (all
    targets, including normalised paths and paths inside a command).
    """

    __slots__ = ("_outcome", "_params", "_root", "_target", "_targets")

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
        self._outcome = Outcome(
            decision, enforced, rule_id, rule_name, priority, reason, constraints, category
        )
        self._target: str | object | None = _UNSET
        self._targets = targets
        self._params = params
        self._root = root

    @property
    def decision(self) -> str:
        """``allow``, ``deny``, ``warn`` or ``ask``."""
        return self._outcome.decision

    @property
    def enforced(self) -> bool:
        """``False`` for a denial in dry-run (recorded, not enforced)."""
        return self._outcome.enforced

    @property
    def blocked(self) -> bool:
        """Whether the call is refused: a denial, enforced."""
        return self._outcome.blocked

    @property
    def rule_id(self) -> str | None:
        """The deciding rule's id (``None``: the default decision)."""
        return self._outcome.rule_id

    @property
    def rule_name(self) -> str | None:
        """The deciding rule's name (``None``: the default decision)."""
        return self._outcome.rule_name

    @property
    def priority(self) -> int | None:
        """The deciding rule's priority (``None``: the default decision)."""
        return self._outcome.priority

    @property
    def reason(self) -> str:
        """Why: the rule's reason, ``Matched rule: <name>`` or ``Default policy: <decision>``."""
        return self._outcome.reason

    @property
    def constraints(self) -> tuple[str, ...]:
        """``policy:<decision>``, ``rule:<id>`` (or ``rule:default``), ``enforced:false``."""
        return self._outcome.constraints

    @property
    def category(self) -> str:
        """The category the call was judged in."""
        return self._outcome.category

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
    def target_list(self) -> list[str]:
        """:attr:`targets` as the list the evaluation holds (not to be changed)."""
        targets = self._targets
        if targets is None:
            targets = self._targets = all_targets(self._params, self._root)
        return targets

    @property
    def outcome(self) -> Outcome:
        """What the decision says, apart from the call (:class:`Outcome`)."""
        return self._outcome

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


class Decided(Evaluation):
    """An :class:`Evaluation` made from an :class:`Outcome` the policy worked out beforehand:
    what the engine returns (one object and four fields per call)."""

    __slots__ = ()

    def __init__(
        self,
        outcome: Outcome,
        targets: list[str] | None,
        params: Mapping[str, Any],
        root: str | None,
    ) -> None:
        self._outcome = outcome
        self._target = _UNSET
        self._targets = targets
        self._params = params
        self._root = root
