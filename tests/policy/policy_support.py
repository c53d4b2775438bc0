"""Small builders shared by the policy tests."""

from __future__ import annotations

from typing import Any

from pytest_harness_audit.policy import Evaluation, Policy


def rule(
    rule_id: str = "r",
    *,
    decision: str = "deny",
    priority: int = 1,
    name: str | None = None,
    reason: str | None = None,
    **match: Any,
) -> dict[str, Any]:
    """A rule document; keyword arguments are the ``match`` criteria (camelCase keys)."""
    out: dict[str, Any] = {
        "id": rule_id,
        "name": name if name is not None else f"Rule {rule_id}",
        "priority": priority,
        "decision": decision,
        "match": match,
    }
    if reason is not None:
        out["reason"] = reason
    return out


def policy(*rules: dict[str, Any], **top: Any) -> Policy:
    """A policy of ``rules``; keyword arguments are top-level keys (``defaultPolicy`` …)."""
    return Policy.from_dict({**top, "rules": list(rules)})


def glob_policy(*patterns: str) -> Policy:
    """One deny rule matching ``patterns`` as globs, for any tool."""
    return policy(rule("glob", targetPatterns=list(patterns)))


def regex_policy(*patterns: str, decision: str = "deny") -> Policy:
    """One rule matching ``patterns`` as regexes, for any tool."""
    return policy(
        rule("regex", decision=decision, targetPatterns=list(patterns), targetPatternsAreRegex=True)
    )


def hits(p: Policy, target: str, *, key: str = "pattern", tool: str = "Grep") -> bool:
    """Whether ``target`` (given as parameter ``key``) makes a rule of ``p`` fire."""
    return not p.evaluate(tool, {key: target}).is_default


def decide(p: Policy, tool: str, **params: Any) -> tuple[str, str | None]:
    """``(decision, rule_id)`` of one call."""
    evaluation: Evaluation = p.evaluate(tool, params)
    return evaluation.decision, evaluation.rule_id
