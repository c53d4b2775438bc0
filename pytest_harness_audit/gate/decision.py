"""The gate's answer for one call, before it runs."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_harness_audit.immune.records import Quarantine
from pytest_harness_audit.policy import Evaluation
from pytest_harness_audit.policy.ratelimit import RateHits

BLOCK_PREFIX = "[blocked] "


@dataclass
class GateDecision:
    """The gate's answer for one call, before it runs.

    ``blocked`` calls must not run; ``message`` is what the agent reads then
    (``[blocked] [web4-policy] <reason>`` or ``[blocked] [web4-immune] quarantined: <why>``).
    ``rate_hits`` are the rate-limited rules the decision counted (its record carries them).
    """

    tool: str
    params: Mapping[str, Any]
    evaluation: Evaluation
    blocked: bool
    message: str
    constraints: tuple[str, ...]
    alerts: tuple[str, ...]
    quarantine: Quarantine | None = None
    started: float = field(default_factory=time.perf_counter)
    rate_hits: RateHits | None = None
    #: The record's kind: ``call`` for tool calls; other kinds (``agent``) are not judged.
    kind: str = "call"
    #: The target the record shows when it is not the policy's (an agent run's program).
    shown_target: str | None = None
    #: Fields the decision adds to the record (what a pre-act inspection found).
    record_extra: Mapping[str, Any] | None = None

    @property
    def category(self) -> str:
        """The call's category."""
        return self.evaluation.category

    @property
    def reason(self) -> str:
        """Why: the quarantine's, else the policy's reason."""
        return self.quarantine.why if self.quarantine is not None else self.evaluation.reason


def failed_closed(
    tool: str, params: Mapping[str, Any], error: str, root: str | None
) -> GateDecision:
    """The refusal of a call the gate could not judge (``error``: its internal error): the gate
    fails closed."""
    reason = f"internal gate error, refused: {error}"
    evaluation = Evaluation(
        "deny",
        True,
        "gate-error",
        "Gate error",
        None,
        reason,
        ("policy:deny", "rule:gate-error"),
        "unknown",
        [],
        {},
        root,
    )
    safe_params = params if isinstance(params, Mapping) else {}
    return GateDecision(
        str(tool),
        safe_params,
        evaluation,
        True,
        f"{BLOCK_PREFIX}[web4-policy] {reason}",
        evaluation.constraints,
        ("gate_error",),
    )


#: Why a call whose parameters the gate did not read whole is refused.
UNREAD_REASON = (
    "the call's parameters hold more values, or values nested deeper, than the gate reads: "
    "a call is not judged by a part of it, so it is refused"
)


def built_in_refusal(
    tool: str,
    params: Mapping[str, Any],
    evaluation: Evaluation,
    rule: tuple[str, str],
    reason: str,
    alerts: tuple[str, ...],
    root: str | None,
) -> GateDecision:
    """The refusal of a call by a rule built into the gate (``rule``: its id and name), which
    no policy overrides; the call keeps its category and targets."""
    rule_id, rule_name = rule
    refused = Evaluation(
        "deny",
        True,
        rule_id,
        rule_name,
        None,
        reason,
        ("policy:deny", f"rule:{rule_id}"),
        evaluation.category,
        list(evaluation.targets),
        params,
        root,
    )
    return GateDecision(
        tool,
        params,
        refused,
        True,
        f"{BLOCK_PREFIX}[web4-policy] {reason}",
        refused.constraints,
        alerts,
    )


def unread_refusal(
    tool: str,
    params: Mapping[str, Any],
    evaluation: Evaluation,
    alerts: tuple[str, ...],
    root: str | None,
) -> GateDecision:
    """The refusal of a call whose parameters were not all read (their targets end with
    :data:`~pytest_harness_audit.policy.param_targets.UNREAD_PARAMETERS`): the gate fails
    closed, as for a call it cannot judge."""
    rule = ("unread-parameters", "Parameters not read whole")
    return built_in_refusal(tool, params, evaluation, rule, UNREAD_REASON, alerts, root)
