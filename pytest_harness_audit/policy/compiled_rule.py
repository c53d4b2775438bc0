"""A policy rule with its criteria compiled for fast matching (:class:`CompiledRule`)."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy.model import Rule
from pytest_harness_audit.policy.patterns import (
    PatternProgram,
    PatternSyntaxError,
    PatternTimeout,
    TargetMatcher,
    split_patterns,
)
from pytest_harness_audit.policy.prefilter import Requirement, pattern_requirement


class CompiledRule:
    """A rule with its criteria compiled for fast matching."""

    __slots__ = (
        "categories",
        "dry_run_constraints",
        "enforced_constraints",
        "exact",
        "fail_closed",
        "fallbacks",
        "has_patterns",
        "index",
        "max_count",
        "patterns",
        "reason",
        "requirements",
        "requirements_known",
        "rule",
        "tools",
        "uses_set",
        "window_ms",
    )

    def __init__(
        self,
        rule: Rule,
        index: int,
        program: PatternProgram,
        *,
        source: str | None,
    ) -> None:
        self.rule = rule
        self.index = index
        match = rule.match
        self.tools = frozenset(match.tools) if match.tools is not None else None
        self.categories = frozenset(match.categories) if match.categories is not None else None
        self.has_patterns = match.target_patterns is not None
        self.exact: frozenset[str] = frozenset()
        self.fallbacks: tuple[TargetMatcher, ...] = ()
        self.uses_set = False
        self.requirements: tuple[Requirement, ...] | None = ()
        self.requirements_known = True
        self.patterns: tuple[tuple[str, ...], bool] | None = None
        if match.target_patterns is not None:
            is_regex = match.target_patterns_are_regex
            try:
                exact, sources, fallbacks = split_patterns(match.target_patterns, is_regex=is_regex)
                for program_source in sources:
                    program.add(program_source, index)
            except PatternSyntaxError as exc:
                raise PolicyError(
                    str(exc), source=source, rule_id=rule.id, field="match.targetPatterns"
                ) from None
            self.exact, self.fallbacks = exact, tuple(fallbacks)
            if any(matcher.excluded is None for matcher in fallbacks):
                self.requirements = None
            else:  # worked out when a prefilter first needs them (:meth:`pattern_requirements`)
                self.requirements_known = False
                self.patterns = (tuple(match.target_patterns), is_regex)
            self.uses_set = bool(sources)
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

    def pattern_requirements(self) -> tuple[Requirement, ...] | None:
        """What a target this rule's patterns match must be or hold (``None``: unknown).

        Worked out on first use: parsing every pattern costs far more than a call, and a
        policy that decides only a few calls (a hook event's) never builds a prefilter."""
        if not self.requirements_known:
            patterns = self.patterns
            if patterns is not None:
                self.requirements = _requirements(patterns[0], patterns[1])
            self.requirements_known = True
        return self.requirements

    def matches_outside_sets(self, targets: list[str]) -> bool:
        """Whether a target equals a wildcard-free glob or matches a fallback-engine regex."""
        exact = self.exact
        for target in targets:
            if target in exact:
                return True
            for matcher in self.fallbacks:
                try:
                    if matcher.matches(target):
                        return True
                except PatternTimeout:
                    if self.fail_closed:
                        return True
        return False


def _requirements(patterns: Sequence[str], is_regex: bool) -> tuple[Requirement, ...] | None:
    found = []
    for pattern in patterns:
        each = pattern_requirement(pattern, is_regex=is_regex)
        if each is None:
            return None
        found.append(each)
    return tuple(found)


__all__ = ["CompiledRule"]
