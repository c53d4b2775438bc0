"""Compiled policy evaluation: rules compiled once, indexed by tool, first match wins."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from typing import Any, Protocol

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy.categories import CREDENTIAL_ACCESS, MCP, builtin_category, \
    mcp_tool_parts
from pytest_harness_audit.policy.evaluation import Evaluation
from pytest_harness_audit.policy.model import PolicySpec, Rule
from pytest_harness_audit.policy.patterns import PatternSyntaxError, PatternTimeout, \
    TargetMatcher
from pytest_harness_audit.policy.sensitive import any_credential
from pytest_harness_audit.policy.targets import all_targets, primary_target


class RateCounter(Protocol):
    """What a rate-limited rule needs from the session: see :class:`SlidingWindowCounter`."""

    def hit(self, key: str, window_ms: float) -> int:
        """Record a matching call; return the number of earlier ones inside the window."""
        ...


class CompiledRule:
    """A rule with its criteria compiled for fast matching."""

    __slots__ = ("categories", "dry_run_constraints", "enforced_constraints", "fail_closed",
                 "matchers", "reason", "rule", "tools", "window_ms", "max_count")

    def __init__(self, rule: Rule, *, source: str | None) -> None:
        self.rule = rule
        match = rule.match
        self.tools = frozenset(match.tools) if match.tools is not None else None
        self.categories = frozenset(match.categories) if match.categories is not None else None
        self.matchers: tuple[TargetMatcher, ...] | None = None
        if match.target_patterns is not None:
            matchers = []
            for pattern in match.target_patterns:
                try:
                    matchers.append(TargetMatcher(pattern,
                                                  is_regex=match.target_patterns_are_regex))
                except PatternSyntaxError as exc:
                    raise PolicyError(str(exc), source=source, rule_id=rule.id,
                                      field="match.targetPatterns") from None
            self.matchers = tuple(matchers)
        self.reason = rule.reason or f"Matched rule: {rule.name}"
        base = (f"policy:{rule.decision}", f"rule:{rule.id}")
        self.enforced_constraints = base
        self.dry_run_constraints = (*base, "enforced:false") if rule.decision == "deny" else base
        # A pattern that timed out counts as a match for deny/warn rules and as a miss for
        # allow rules: hostile input can never buy an allow.
        self.fail_closed = rule.decision != "allow"
        rate = match.rate_limit
        self.max_count = rate.max_count if rate else 0
        self.window_ms = rate.window_ms if rate else 0.0

    def matches_targets(self, targets: list[str]) -> bool:
        """Whether any target matches any pattern (``matchers`` must be set)."""
        assert self.matchers is not None
        for matcher in self.matchers:
            for target in targets:
                try:
                    if matcher.matches(target):
                        return True
                except PatternTimeout:
                    if self.fail_closed:
                        return True
        return False


_ToolEntry = tuple[str, frozenset[str], tuple[CompiledRule, ...]]


class CompiledPolicy:
    """The evaluation engine of a :class:`~pytest_harness_audit.policy.Policy`."""

    def __init__(self, spec: PolicySpec, *, source: str | None) -> None:
        self.spec = spec
        ordered = sorted(spec.rules, key=lambda r: r.priority)  # stable: ties keep file order
        self.rules = tuple(CompiledRule(rule, source=source) for rule in ordered)
        self._tool_globs = tuple(
            (re.compile(fnmatch.translate(glob)), category) for glob, category in
            spec.tool_categories
        )
        self._by_tool: dict[str, _ToolEntry] = {}
        default = spec.default_policy
        self._default_reason = f"Default policy: {default}"
        base = (f"policy:{default}", "rule:default")
        dry = not spec.enforce and default == "deny"
        self._default_constraints = (*base, "enforced:false") if dry else base

    def category_of(self, tool: str) -> str:
        """The category of ``tool``: the policy's ``toolCategories`` first, then built-ins."""
        for pattern, category in self._tool_globs:
            if pattern.match(tool):
                return category
        return builtin_category(tool)

    def _index(self, tool: str) -> _ToolEntry:
        category = self.category_of(tool)
        base = {category}
        if mcp_tool_parts(tool) is not None:
            base.add(MCP)
        categories = frozenset(base)
        candidates = tuple(
            rule for rule in self.rules
            if (rule.tools is None or tool in rule.tools)
            and (rule.categories is None or rule.categories & categories
                 or CREDENTIAL_ACCESS in rule.categories)
        )
        entry = (category, categories, candidates)
        self._by_tool[tool] = entry
        return entry

    def evaluate(self, tool: str, params: Mapping[str, Any], *,
                 rate_counter: RateCounter | None = None,
                 root: str | None = None) -> Evaluation:
        """Evaluate one call: first matching rule in priority order, else the default."""
        entry = self._by_tool.get(tool)
        if entry is None:
            entry = self._index(tool)
        category, categories, candidates = entry
        targets: list[str] | None = None
        credential: bool | None = None
        for rule in candidates:
            rule_categories = rule.categories
            if rule_categories is not None and not rule_categories & categories:
                if credential is None:
                    if targets is None:
                        targets = all_targets(params, root)
                    credential = any_credential(targets)
                if not credential:
                    continue
            if rule.matchers is not None:
                if targets is None:
                    targets = all_targets(params, root)
                if not targets or not rule.matches_targets(targets):
                    continue
            if rule.max_count:
                if rate_counter is None:
                    continue
                if rate_counter.hit(rule.rule.id, rule.window_ms) < rule.max_count:
                    continue
            decision = rule.rule.decision
            enforced = self.spec.enforce or decision != "deny"
            return Evaluation(
                decision, enforced, rule.rule.id, rule.rule.name, rule.rule.priority,
                rule.reason,
                rule.enforced_constraints if enforced else rule.dry_run_constraints,
                category, primary_target(params), targets, params, root)
        default = self.spec.default_policy
        return Evaluation(
            default, self.spec.enforce or default != "deny", None, None, None,
            self._default_reason, self._default_constraints, category, primary_target(params),
            targets, params, root)
