"""Rules that judge what a call did, after it ran (``match.effects``).

A rule whose ``match`` names ``effects`` is not consulted before a call runs. After the call,
inspection reports what it did (a protected file changed, a secret exposed, files or a
directory deleted); the first such rule, by priority, whose effects, tools and categories all
match decides what that means: ``deny`` fails the session's verdict (the call already ran, so
nothing is blocked), ``warn`` warns, ``allow`` accepts. In dry-run (``enforce: false``) a deny
only warns.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pytest_harness_audit.policy.model import PolicySpec, Rule


@dataclass(frozen=True)
class EffectJudgement:
    """What an effect rule decided for a call's effects."""

    decision: str
    rule_id: str
    reason: str
    effects: tuple[str, ...]
    enforced: bool

    @property
    def verdict(self) -> str | None:
        """``FAIL`` (an enforced deny), ``WARN`` (warn or dry-run deny) or ``None`` (allow)."""
        if self.decision == "deny":
            return "FAIL" if self.enforced else "WARN"
        if self.decision == "warn":
            return "WARN"
        return None


class EffectRules:
    """The effect rules of a policy, in evaluation order."""

    def __init__(self, spec: PolicySpec) -> None:
        self.rules: tuple[Rule, ...] = tuple(
            sorted(
                (rule for rule in spec.rules if rule.match.effects is not None),
                key=lambda rule: rule.priority,
            )
        )
        self._enforce = spec.enforce

    def __bool__(self) -> bool:
        return bool(self.rules)

    def judge(self, effects: Iterable[str], *, tool: str, category: str) -> EffectJudgement | None:
        """The first rule matching ``effects`` of a ``tool`` call of ``category`` (or none)."""
        seen = frozenset(effects)
        if not seen:
            return None
        for rule in self.rules:
            match = rule.match
            wanted = match.effects or ()
            hit = tuple(effect for effect in wanted if effect in seen)
            if not hit:
                continue
            if match.tools is not None and tool not in match.tools:
                continue
            if match.categories is not None and category not in match.categories:
                continue
            reason = rule.reason or rule.name
            return EffectJudgement(rule.decision, rule.id, reason, hit, self._enforce)
        return None
