"""Lints of a policy's rule order that `harness-audit policy` prints before its output.

The first matching rule in priority order decides a call, so a ``warn`` or ``allow`` rule placed
before a ``deny`` rule that matches the same calls takes them: the denial never happens. Each
such pair is one warning line naming the file, both rules and their priorities.

The check is simple and errs towards warning: the earlier rule masks the later one when

* both judge the same moment (both call rules, or both effect rules with an effect in common);
* their tools and categories may meet: either side leaves them open, or the lists share a
  name, or a category that a call carries beside its own is involved (``credential_access``
  for a call on a credential path; ``mcp`` and ``unknown`` tools judged as writes, ``mcp`` as
  reads too);
* and the earlier rule's targets are no narrower than it takes to match the later one's: the
  earlier rule names no target patterns, the later names none (so it takes every target the
  earlier takes), or both name the same patterns. Different patterns are taken as disjoint.
"""

from __future__ import annotations

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.categories import (
    CREDENTIAL_ACCESS,
    FILE_READ,
    FILE_WRITE,
    MCP,
    UNKNOWN,
)
from pytest_harness_audit.policy.model import Rule

#: The decisions that, ranked first, keep a later ``deny`` from deciding.
MASKING = ("warn", "allow")
#: Categories a call of the key's category is also judged under.
ALSO_JUDGED_AS = {MCP: frozenset({FILE_READ, FILE_WRITE}), UNKNOWN: frozenset({FILE_WRITE})}


def _names_meet(first: tuple[str, ...] | None, second: tuple[str, ...] | None) -> bool:
    return first is None or second is None or not set(first).isdisjoint(second)


def _categories_meet(first: tuple[str, ...] | None, second: tuple[str, ...] | None) -> bool:
    if first is None or second is None or not set(first).isdisjoint(second):
        return True
    if CREDENTIAL_ACCESS in first or CREDENTIAL_ACCESS in second:
        return True
    return _judged_into(first, second) or _judged_into(second, first)


def _judged_into(own: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """Whether a call of one of ``own`` is also judged under one of ``other``."""
    return any(not ALSO_JUDGED_AS.get(category, frozenset()).isdisjoint(other) for category in own)


def masks(earlier: Rule, later: Rule) -> bool:
    """Whether ``earlier`` (ranked first) may take calls that ``later``, a deny, would block."""
    if earlier.decision not in MASKING or later.decision != "deny":
        return False
    first, second = earlier.match, later.match
    if (first.effects is None) != (second.effects is None):
        return False  # one judges before the call, the other after it
    if first.effects is not None and not _names_meet(first.effects, second.effects):
        return False
    if not _names_meet(first.tools, second.tools):
        return False
    if not _categories_meet(first.categories, second.categories):
        return False
    if first.target_patterns is None or second.target_patterns is None:
        return True
    return (first.target_patterns, first.target_patterns_are_regex) == (
        second.target_patterns,
        second.target_patterns_are_regex,
    )


def masking_lints(policy: Policy, source: str) -> list[str]:
    """One warning line for each ``warn``/``allow`` rule ranked before a ``deny`` it may mask,
    naming ``source`` (the policy's file)."""
    rules = policy.rules
    lines = []
    for index, earlier in enumerate(rules):
        for later in rules[index + 1 :]:
            if masks(earlier, later):
                lines.append(
                    f"harness-audit: warning: {source}, rule {earlier.id!r} "
                    f"(priority {earlier.priority}, {earlier.decision}) comes before deny rule "
                    f"{later.id!r} (priority {later.priority}) and may match the same calls: "
                    f"the first match decides, so the {earlier.decision} masks the deny"
                )
    return lines
