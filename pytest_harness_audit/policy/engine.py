"""Compiled policy evaluation: rules compiled once, indexed by tool, first match wins.

All target patterns of a policy are compiled into two RE2 sets (anchored globs, unanchored
regexes). A call's targets go through each set once, which says at a stroke which rules'
patterns match; the rules are then walked in priority order for the other criteria.

Most calls match no pattern at all. Before deriving targets, a call without a command goes
through its tool's :class:`~.prefilter.Prefilter`: when the raw text of its target parameters
holds none of the literals its tool's patterns require, only the rules without patterns are
walked (the same decision, rule and targets as the full path; see the differential tests).
A tool's prefilter is built after its first :data:`PREFILTER_AFTER` calls: working out what
every pattern requires costs tens of milliseconds, which a hook event deciding one call would
pay on every tool call.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy.categories import (
    COMMAND,
    CREDENTIAL_ACCESS,
    DEFAULT_COMMAND_TOOLS,
    MCP,
    UNKNOWN,
    builtin_category,
    mcp_tool_parts,
)
from pytest_harness_audit.policy.compiled_rule import CompiledRule
from pytest_harness_audit.policy.evaluation import Decided, Evaluation, Outcome
from pytest_harness_audit.policy.model import PolicySpec
from pytest_harness_audit.policy.patterns import (
    PatternProgram,
    PatternSyntaxError,
)
from pytest_harness_audit.policy.prefilter import (
    Prefilter,
    Requirement,
    python_regex_requirement,
    screen,
    worth_matching,
)
from pytest_harness_audit.policy.sensitive import CREDENTIAL_PATTERN, any_credential
from pytest_harness_audit.policy.shell.powershell import is_powershell, posix_params
from pytest_harness_audit.policy.targets import call_targets

#: Calls of one tool a policy decides on the full path before it builds the tool's prefilter.
PREFILTER_AFTER: Final = 64
#: What every credential-looking path holds, once worked out (:func:`_credential_requirement`).
_CREDENTIAL_REQUIREMENT: Final[list[Requirement | None]] = []


def _credential_requirement() -> Requirement | None:
    """What every credential-looking path holds (``None``: the check cannot be prefiltered)."""
    if not _CREDENTIAL_REQUIREMENT:
        _CREDENTIAL_REQUIREMENT.append(python_regex_requirement(CREDENTIAL_PATTERN))
    return _CREDENTIAL_REQUIREMENT[0]


try:  # the optional compiled build (the mypyc build hook, pyproject.toml) reads this decorator
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - plain Python without mypy installed: nothing reads it

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls


class RateCounter(Protocol):
    """What a rate-limited rule needs from the session: see :class:`SlidingWindowCounter`."""

    def hit(self, key: str, window_ms: float) -> int:
        """Record a matching call; return the number of earlier ones inside the window."""
        ...


class _ToolEntry:
    """What evaluation needs to know about one tool name, worked out once per policy.

    ``plain`` are the candidate rules without target patterns (always walked); a rule with
    patterns is walked only when a target matches it, which the RE2 sets say at a stroke.

    A call no pattern can match (``static``: the tool has no pattern rule and no rule that needs
    a credential check; or cleared by the ``prefilter``) is decided by ``plain`` alone, with no
    credential read: by the rate-limited rules of ``cleared_rate`` that reach their limit, else
    by ``cleared``, the first of the others (worked out here, not per call).
    """

    __slots__ = (
        "candidates",
        "categories",
        "category",
        "cleared",
        "cleared_rate",
        "default",
        "is_command",
        "is_uncategorised",
        "outcomes",
        "outside",
        "pattern_indexes",
        "plain",
        "plain_indexes",
        "plain_order",
        "prefilter",
        "set_owners",
        "static",
        "unscreened",
        "uses_set",
    )

    def __init__(
        self,
        category: str,
        categories: frozenset[str],
        candidates: tuple[CompiledRule, ...],
        default: Outcome,
        enforce: bool,
        prefilter_after: int,
    ) -> None:
        self.category = category
        self.categories = categories
        self.is_command = category == COMMAND
        self.is_uncategorised = category in (UNKNOWN, MCP)
        self.candidates = candidates
        self.uses_set = any(rule.uses_set for rule in candidates)
        self.plain = tuple(rule for rule in candidates if not rule.has_patterns)
        self.plain_indexes = frozenset(rule.index for rule in self.plain)
        self.plain_order = [rule.index for rule in self.plain]
        self.pattern_indexes = frozenset(rule.index for rule in candidates if rule.has_patterns)
        self.outside = tuple(
            rule for rule in candidates if rule.has_patterns and (rule.exact or rule.fallbacks)
        )
        #: The rule owning each pattern of the policy's RE2 sets, by pattern index, when it is
        #: one of this tool's (else -1): set by the policy (:meth:`CompiledPolicy._index`).
        self.set_owners: list[int] = []
        self.prefilter: Prefilter | None = None
        #: Calls still to be decided on the full path before the prefilter is built (``-1``:
        #: it never is): building it parses every pattern, which pays only over many calls.
        self.unscreened = prefilter_after if self.pattern_indexes and prefilter_after >= 0 else -1
        self.default = default
        #: The outcome of each candidate rule, by rule index.
        self.outcomes: dict[int, Outcome] = {
            rule.index: _outcome(rule, category, enforce) for rule in candidates
        }
        # without the credential check, a rule of other categories never matches
        reachable = [
            rule
            for rule in self.plain
            if rule.categories is None or not rule.categories.isdisjoint(categories)
        ]
        self.static = not self.pattern_indexes and len(reachable) == len(self.plain)
        rate: list[CompiledRule] = []
        self.cleared = default
        for rule in reachable:
            if not rule.max_count:
                self.cleared = self.outcomes[rule.index]
                break
            rate.append(rule)
        self.cleared_rate = tuple(rate)

    def count_call(self) -> Prefilter | None:
        """Count one call of this tool; the prefilter once :attr:`unscreened` calls have gone
        the full path (then built, once), else ``None``."""
        if self.unscreened > 0:
            self.unscreened -= 1
            return None
        self.unscreened = -1
        self.prefilter = _prefilter(self.candidates, self.categories)
        return self.prefilter


def _outcome(rule: CompiledRule, category: str, enforce: bool) -> Outcome:
    decision = rule.rule.decision
    enforced = enforce or decision != "deny"
    return Outcome(
        decision,
        enforced,
        rule.rule.id,
        rule.rule.name,
        rule.rule.priority,
        rule.reason,
        rule.enforced_constraints if enforced else rule.dry_run_constraints,
        category,
    )


def _prefilter(
    candidates: tuple[CompiledRule, ...], categories: frozenset[str]
) -> Prefilter | None:
    """The prefilter of a tool's pattern rules, plus the credential path requirement when a rule
    without patterns fires on a credential path only; ``None`` when a pattern requires nothing."""
    found: list[Requirement] = []
    for rule in candidates:
        if rule.has_patterns:
            requirements = rule.pattern_requirements()
            if requirements is None:
                return None
            found.extend(requirements)
        elif rule.categories is not None and not rule.categories & categories:
            credential = _credential_requirement()
            if credential is None:  # pragma: no cover - the pattern is analysable
                return None
            found.append(credential)
    return Prefilter(found)


@mypyc_attr(allow_interpreted_subclasses=True)  # Policy, in plain Python, extends it
class CompiledPolicy:
    """The evaluation engine behind :class:`~pytest_harness_audit.policy.Policy`."""

    #: Whether calls may be cleared by the prefilter (``False``: every call takes the full path,
    #: as the differential tests compare). Read when a tool is first seen.
    prefilter_enabled = True
    #: How many calls of a tool take the full path before its prefilter is built (``0``: from
    #: the first call). Read when a tool is first seen.
    prefilter_after = PREFILTER_AFTER

    def __init__(self, spec: PolicySpec, *, source: str | None) -> None:
        self.spec = spec
        # stable: ties keep file order; rules on effects judge calls after they ran (effects.py)
        ordered = sorted(
            (rule for rule in spec.rules if rule.match.effects is None), key=lambda r: r.priority
        )
        self._program = PatternProgram()
        self.compiled_rules = tuple(
            CompiledRule(rule, index, self._program, source=source)
            for index, rule in enumerate(ordered)
        )
        try:
            self._program.compile()
        except PatternSyntaxError as exc:
            raise PolicyError(str(exc), source=source, field="rules") from None
        self._tool_globs = (
            tuple(
                (re.compile(fnmatch.translate(glob)), category)
                for glob, category in spec.tool_categories
            )
            + tuple((re.compile(fnmatch.translate(glob)), COMMAND) for glob in spec.command_tools)
            + tuple(
                (re.compile(fnmatch.translate(glob), re.IGNORECASE), COMMAND)
                for glob in DEFAULT_COMMAND_TOOLS
            )
        )
        self._by_tool: dict[str | tuple[str, str], _ToolEntry] = {}
        default = spec.default_policy
        self._default_reason = f"Default policy: {default}"
        base = (f"policy:{default}", "rule:default")
        self._default_enforced = spec.enforce or default != "deny"
        self._default_constraints = base if self._default_enforced else (*base, "enforced:false")
        self._enforce = spec.enforce

    def category_of(self, tool: str) -> str:
        """The category of ``tool``: the policy's ``toolCategories`` first, then its
        ``commandTools`` and the built-in command tools (``mcp__*__run`` …: ``command``), then
        the built-in table."""
        for pattern, category in self._tool_globs:
            if pattern.match(tool):
                return category
        return builtin_category(tool)

    def _index(self, tool: str, category: str | None = None) -> _ToolEntry:
        """Work out (once) the category and the candidate rules of a tool name."""
        key: str | tuple[str, str] = tool
        if category is None:
            category = self.category_of(tool)
        else:
            key = (tool, category)
        base = {category}
        if mcp_tool_parts(tool) is not None:
            base.add(MCP)
        categories = frozenset(base)
        candidates = tuple(
            rule
            for rule in self.compiled_rules
            if (rule.tools is None or tool in rule.tools)
            and (
                rule.categories is None
                or rule.categories & categories
                or CREDENTIAL_ACCESS in rule.categories
            )
        )
        default = Outcome(
            self.spec.default_policy,
            self._default_enforced,
            None,
            None,
            None,
            self._default_reason,
            self._default_constraints,
            category,
        )
        enabled = self.prefilter_enabled
        entry = self._by_tool[key] = _ToolEntry(
            category,
            categories,
            candidates,
            default,
            self._enforce,
            self.prefilter_after if enabled else -1,
        )
        if not enabled:
            entry.static = False
        entry.set_owners = [
            owner if owner in entry.pattern_indexes else -1 for owner in self._program.owners
        ]
        return entry

    def _matched_walk(
        self, entry: _ToolEntry, candidates: list[str], targets: list[str]
    ) -> list[CompiledRule]:
        """The rules to walk when a pattern of one of ``entry``'s rules matches a target (of
        ``candidates``, for the RE2 sets): those rules and the rules without patterns, in
        priority order; empty when no pattern matches."""
        hits: list[int] = []
        if entry.uses_set:
            owners = entry.set_owners
            program = self._program
            for target in candidates:
                for pattern in program.matching(target.encode("utf-8", "surrogatepass")):
                    owner = owners[pattern]
                    if owner >= 0 and owner not in hits:
                        hits.append(owner)
        for rule in entry.outside:
            if rule.index not in hits and rule.matches_outside_sets(targets):
                hits.append(rule.index)
        if not hits:
            return []
        hits.extend(entry.plain_order)
        hits.sort()
        rules = self.compiled_rules  # a rule's index is its place in them
        return [rules[index] for index in hits]

    def evaluate(
        self,
        tool: str,
        params: Mapping[str, Any] | None = None,
        *,
        rate_counter: RateCounter | None = None,
        root: str | None = None,
        category: str | None = None,
    ) -> Evaluation:
        """Decide one call: the first matching rule in priority order, else the default.

        ``rate_counter`` is the session's counter (rate-limited rules need one and never fire
        without it); ``root`` is the workspace root (no trailing slash), for path
        normalisation; ``category`` overrides the tool's classification (a plugin's).
        """
        if params is None:
            params = {}
        elif len(tool) == 10 and is_powershell(tool):  # cmdlets read as the POSIX commands
            params = posix_params(params)
        if category is None:
            entry = self._by_tool.get(tool)
            if entry is None:
                entry = self._index(tool)
        else:
            entry = self._by_tool.get((tool, category)) or self._index(tool, category)
        prefilter = entry.prefilter
        if prefilter is None and entry.unscreened >= 0:
            prefilter = entry.count_call()
        known: list[str] | None = None
        clear = entry.static
        if not clear and prefilter is not None:
            clear, known = screen(prefilter, params, root)
        if clear:
            outcome = entry.cleared
            if entry.cleared_rate and rate_counter is not None:
                for rule in entry.cleared_rate:
                    if rate_counter.hit(rule.rule.id, rule.window_ms) >= rule.max_count:
                        outcome = entry.outcomes[rule.index]
                        break
            evaluation: Evaluation = Decided(outcome, None, params, root)
        else:
            evaluation = self._decide(entry, params, rate_counter, root, known)
        if entry.is_command:
            return self._judged_as_command(evaluation, tool, params, root)
        if entry.is_uncategorised:
            return self._judged_as_uncategorised(evaluation, tool, params, root)
        return evaluation

    def _judged_as_command(
        self, evaluation: Evaluation, tool: str, params: Mapping[str, Any], root: str | None
    ) -> Evaluation:
        """The evaluation of a call in the ``command`` category (a subclass may judge the
        command further: :class:`~pytest_harness_audit.policy.Policy` by its views)."""
        return evaluation

    def _judged_as_uncategorised(
        self, evaluation: Evaluation, tool: str, params: Mapping[str, Any], root: str | None
    ) -> Evaluation:
        """The evaluation of a call of a tool with no category (``unknown``, ``mcp``): a subclass
        may judge it further (:class:`~pytest_harness_audit.policy.Policy`: as a write of the
        files it names)."""
        return evaluation

    def _decide(
        self,
        entry: _ToolEntry,
        params: Mapping[str, Any],
        rate_counter: RateCounter | None,
        root: str | None,
        known: list[str] | None = None,
    ) -> Evaluation:
        """The full path: derive the targets, match them, walk the rules they select.

        ``known``: the call's targets, when the prefilter has derived and scanned them already
        (:func:`~.prefilter.screen`) and found they may match."""
        targets: list[str] | None = None
        files: list[str] | None = None
        credential: bool | None = None
        walk: Sequence[CompiledRule] = entry.plain
        prefilter = entry.prefilter
        if entry.pattern_indexes:
            if known is not None:
                targets = candidates = known
            else:
                targets, files = call_targets(params, root)
                # a command's targets are known only once read; one scan of them for the
                # required literals spares the RE2 sets every target that cannot match
                candidates = targets if prefilter is None else worth_matching(prefilter, targets)
            if candidates:
                walk = self._matched_walk(entry, candidates, targets) or walk
        for rule in walk:
            rule_categories = rule.categories
            if rule_categories is not None and rule_categories.isdisjoint(entry.categories):
                # only credential_access can still match: checked last, being the dearest
                if credential is None:
                    if targets is None:
                        targets, files = call_targets(params, root)
                    # a command is a credential access by the files it acts on, not its text
                    credential = any_credential(targets if files is None else files)
                if not credential:
                    continue
            if rule.max_count:
                if rate_counter is None:
                    continue
                if rate_counter.hit(rule.rule.id, rule.window_ms) < rule.max_count:
                    continue
            return Decided(entry.outcomes[rule.index], targets, params, root)
        return Decided(entry.default, targets, params, root)
