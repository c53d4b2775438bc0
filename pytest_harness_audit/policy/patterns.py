"""Compiled target patterns: glob or regex, with a guarantee that matching cannot hang.

Every pattern of a rule is compiled once into a :class:`TargetMatcher`. Matching runs in up to
three steps:

1. a *prefilter*: literal text every match must contain, checked with a substring search;
2. RE2 (linear time in the target) for the pattern itself;
3. for the few regex features RE2 does not have (look-around, back-references) the ``regex``
   engine with a timeout, so a hostile pattern or target is bounded. A timed-out match is
   resolved fail-closed by the caller (a deny or warn rule fires, an allow rule does not).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import re2
import regex

from pytest_harness_audit.policy.glob import suffix_literal, translate_glob

try:  # Python 3.11+
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre_parse  # type: ignore[no-redef]

#: Seconds a fallback-engine match may take before it counts as timed out.
FALLBACK_TIMEOUT_S = 0.05

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


class PatternTimeout(Exception):
    """A fallback-engine pattern did not finish within :data:`FALLBACK_TIMEOUT_S`."""


class PatternSyntaxError(ValueError):
    """A pattern does not compile (the message says why)."""


@dataclass(frozen=True)
class _Requirement:
    """Literal alternatives of which at least one occurs in every match."""

    alternatives: tuple[str, ...]

    @property
    def strength(self) -> int:
        return min((len(a) for a in self.alternatives), default=0)


def _best(requirements: Sequence[_Requirement]) -> _Requirement | None:
    usable = [r for r in requirements if r.strength > 0]
    return max(usable, key=lambda r: r.strength) if usable else None


def _requirement_of(items: Any) -> _Requirement | None:
    """Strongest literal requirement of a parsed regex sequence (sound, not complete)."""
    found: list[_Requirement] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            found.append(_Requirement(("".join(run),)))
            run.clear()

    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(arg))
            continue
        flush()
        if name == "SUBPATTERN":
            group_flags = arg[1] | arg[2] if len(arg) >= 3 else 0
            if group_flags:
                continue
            inner = _requirement_of(arg[-1])
            if inner is not None:
                found.append(inner)
        elif name == "BRANCH":
            alternatives: list[str] = []
            for branch in arg[1]:
                requirement = _requirement_of(branch)
                if requirement is None:
                    alternatives = []
                    break
                alternatives.extend(requirement.alternatives)
            if alternatives:
                found.append(_Requirement(tuple(alternatives)))
    flush()
    return _best(found)


def regex_literals(pattern: str) -> tuple[str, ...] | None:
    """Literal alternatives that every match of ``pattern`` contains, or ``None`` if unknown."""
    try:
        parsed = _sre_parse.parse(pattern)
    except Exception:
        return None
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    requirement = _requirement_of(list(parsed))
    return requirement.alternatives if requirement else None


class TargetMatcher:
    """One compiled target pattern.

    ``matches(target)`` returns ``True``/``False`` or raises :class:`PatternTimeout`.
    """

    __slots__ = ("_equal", "_fallback", "_literals", "_re2", "_suffix", "is_regex", "pattern")

    def __init__(self, pattern: str, *, is_regex: bool) -> None:
        self.pattern = pattern
        self.is_regex = is_regex
        self._equal: str | None = None
        self._suffix: str | None = None
        self._re2: Any = None
        self._fallback: Any = None
        if is_regex:
            self._literals = regex_literals(pattern)
            self._compile_regex(pattern)
        else:
            literal = suffix_literal(pattern)
            if literal is not None:
                self._equal, self._suffix = literal, "/" + literal
                self._literals = None
                return
            parts = translate_glob(pattern)
            if not parts.literals or parts.regex == re.escape(pattern):
                self._literals = None
            else:
                self._literals = (max(parts.literals, key=len),)
            if parts.regex == re.escape(pattern):
                self._equal = pattern
                return
            self._re2 = re2.compile(f"(?s)^(?:{parts.regex})$", _RE2_OPTIONS)._regexp

    def _compile_regex(self, pattern: str) -> None:
        try:
            self._re2 = re2.compile(pattern, _RE2_OPTIONS)._regexp
            return
        except re2.error:
            pass
        try:
            self._fallback = regex.compile(pattern, regex.V0)
        except regex.error as exc:
            raise PatternSyntaxError(f"invalid regular expression {pattern!r}: {exc}") from None

    def matches(self, target: str) -> bool:
        """Whether ``target`` matches (glob: whole target; regex: anywhere in it)."""
        equal = self._equal
        if equal is not None:
            if target == equal:
                return True
            suffix = self._suffix
            return suffix is not None and target.endswith(suffix)
        literals = self._literals
        if literals is not None:
            for literal in literals:
                if literal in target:
                    break
            else:
                return False
        compiled = self._re2
        if compiled is not None:
            data = target.encode("utf-8", "surrogatepass")
            return bool(compiled.Match(compiled.Anchor.UNANCHORED, data, 0, len(data))[0][0] >= 0)
        try:
            return self._fallback.search(target, timeout=FALLBACK_TIMEOUT_S) is not None
        except TimeoutError:
            raise PatternTimeout(self.pattern) from None
