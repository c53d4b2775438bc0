"""Compiled target patterns: glob or regex, with a guarantee that matching cannot hang.

Patterns run on RE2, whose matching time is linear in the target. The few regex features RE2
lacks (look-around, back-references) run on the ``regex`` engine with a timeout, so a hostile
pattern or target is bounded; a timed-out match is resolved fail-closed by the caller (a deny or
warn rule fires, an allow rule does not).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

import re2
import regex

from pytest_harness_audit.policy.glob import translate_glob

try:  # Python 3.11+
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre_parse

#: Seconds a fallback-engine match may take before it counts as timed out.
FALLBACK_TIMEOUT_S = 0.05

RE2_OPTIONS: Final = re2.Options()
RE2_OPTIONS.log_errors = False


class PatternTimeout(Exception):
    """A fallback-engine pattern did not finish within :data:`FALLBACK_TIMEOUT_S`."""


class PatternSyntaxError(ValueError):
    """A pattern does not compile (the message says why)."""


def whole_target_source(pattern: str) -> str:
    """The RE2 source of a glob matching whole targets only (``.`` also matches newlines), for a
    search anywhere: ``\\A`` and ``\\z`` anchor it as ``ANCHOR_BOTH`` would, so a glob and
    regexes can share one :class:`PatternProgram`."""
    return "\\A(?s:" + translate_glob(pattern).regex + ")\\z"


def re2_supports(pattern: str) -> bool:
    """Whether RE2 can compile ``pattern``."""
    try:
        re2.compile(pattern, RE2_OPTIONS)
    except re2.error:
        return False
    return True


def encode(target: str) -> bytes:
    """UTF-8 bytes of a target, as RE2 wants them (lone surrogates kept, never an error)."""
    return target.encode("utf-8", "surrogatepass")


def check_regex(pattern: str) -> None:
    """Raise :class:`PatternSyntaxError` unless RE2 or the fallback engine compiles ``pattern``."""
    if not re2_supports(pattern):
        try:
            regex.compile(pattern, regex.V0)
        except regex.error as exc:
            raise PatternSyntaxError(f"invalid regular expression {pattern!r}: {exc}") from None


# `^(?!` then plain characters, escaped punctuation, groups and `|` only: text both engines
# read alike (no classes, POSIX or otherwise, no flags, no repeats)
_PREFIXES_SHAPE: Final = re.compile(r"\^\(\?!(?:[\w/.:,;@%+=~ -]|\\[^\w\s]|[|()])*\)", re.ASCII)


def excluded_prefixes(pattern: str) -> tuple[str, ...] | None:
    """The prefixes of a regex ``^(?!P1|P2…)`` whose alternatives are plain text: it matches
    exactly the targets starting with none of them (``^(?!/srv/app/)``: every target outside
    ``/srv/app/``). ``None`` for any other pattern (flags, classes, anything after the
    look-ahead), so both engines read it alike."""
    if not _PREFIXES_SHAPE.fullmatch(pattern):
        return None
    try:
        parsed = _sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    items = list(parsed)
    if parsed.state.flags & ~re.UNICODE or len(items) != 2:
        return None
    (first, where), (second, (direction, body)) = items
    if str(first) != "AT" or str(where) != "AT_BEGINNING" or str(second) != "ASSERT_NOT":
        return None
    if direction != 1:
        return None
    found = _strings(body)
    return None if found is None else tuple(sorted(found))


_MAX_STRINGS: Final = 64


def _strings(items: Any) -> set[str] | None:
    """Every string a sequence of plain text, alternations and one-character classes matches;
    ``None`` for anything else (repeats, anchors, flags, look-around) or too many strings."""
    found = {""}
    for op, value in items:
        kind = str(op)
        if kind == "LITERAL":
            part: set[str] | None = {chr(value)}
        elif kind == "IN":
            part = {chr(v) for o, v in value if str(o) == "LITERAL"}
            if len(part) != len(value):
                return None
        elif kind == "BRANCH":
            part = set()
            for branch in value[1]:
                each = _strings(branch)
                if each is None:
                    return None
                part |= each
        elif kind == "SUBPATTERN" and not value[1] and not value[2]:
            part = _strings(value[3])
        else:
            return None
        if part is None:
            return None
        found = {a + b for a in found for b in part}
        if len(found) > _MAX_STRINGS:
            return None
    return found


class TargetMatcher:
    """One compiled target pattern (glob: whole target; regex: anywhere in it).

    ``matches(target)`` returns ``True``/``False`` or raises :class:`PatternTimeout`.
    """

    __slots__ = ("_anchor", "_fallback", "_program", "excluded", "is_regex", "pattern")

    def __init__(self, pattern: str, *, is_regex: bool) -> None:
        self.pattern = pattern
        self.is_regex = is_regex
        self._program: Any = None
        self._fallback: Any = None
        #: The prefixes of a regex ``^(?!P…)`` (:func:`excluded_prefixes`), matched without the
        #: fallback engine's timer; else ``None``.
        self.excluded = excluded_prefixes(pattern) if is_regex else None
        source = pattern if is_regex else whole_target_source(pattern)
        try:
            self._program = re2.compile(source, RE2_OPTIONS)._regexp
        except re2.error:
            if not is_regex:  # cannot happen: globs translate to plain RE2 syntax
                raise
            try:
                self._fallback = regex.compile(pattern, regex.V0)
            except regex.error as exc:
                raise PatternSyntaxError(f"invalid regular expression {pattern!r}: {exc}") from None
            return
        self._anchor = self._program.Anchor.UNANCHORED

    @property
    def bounded_only(self) -> bool:
        """Whether this pattern runs on the timeout-bounded fallback engine, not RE2."""
        return self._fallback is not None

    def matches(self, target: str) -> bool:
        """Whether ``target`` matches."""
        program = self._program
        if program is not None:
            data = encode(target)
            return bool(program.Match(self._anchor, data, 0, len(data))[0][0] >= 0)
        if self.excluded is not None:
            return not target.startswith(self.excluded)
        try:
            return self._fallback.search(target, timeout=FALLBACK_TIMEOUT_S) is not None
        except TimeoutError:
            raise PatternTimeout(self.pattern) from None


class PatternProgram:
    """Many patterns in one RE2 set: one pass over a target says which of them match.

    Regexes are searched for anywhere in a target; globs join the same set anchored at both
    ends (:func:`whole_target_source`), so one pass serves both kinds."""

    def __init__(self) -> None:
        self._set = re2._re2.Set(re2._re2.RE2.Anchor.UNANCHORED, RE2_OPTIONS)
        self.owners: list[int] = []

    def add(self, source: str, owner: int) -> None:
        """Add a pattern (RE2 source) on behalf of ``owner`` (a rule index)."""
        if self._set.Add(source.encode("utf-8")) < 0:
            raise PatternSyntaxError(f"pattern does not compile: {source!r}")
        self.owners.append(owner)

    def compile(self) -> bool:
        """Finish building; returns whether any pattern was added."""
        if not self.owners:
            return False
        if not self._set.Compile():
            raise PatternSyntaxError("the patterns of this policy do not compile together")
        return True

    def matching(self, data: bytes) -> list[int]:
        """The indexes (in the order added) of every pattern matching ``data``."""
        found: list[int] = self._set.Match(data)
        return found

    def owners_matching(self, data: bytes, into: set[int]) -> None:
        """Add the owners of every pattern matching ``data`` to ``into``."""
        owners = self.owners
        for index in self.matching(data):
            into.add(owners[index])


def split_patterns(
    patterns: Sequence[str], *, is_regex: bool
) -> tuple[frozenset[str], list[str], list[TargetMatcher]]:
    """Sort a rule's patterns into (exact strings, RE2 sources for a :class:`PatternProgram`,
    fallback matchers)."""
    exact: set[str] = set()
    sources: list[str] = []
    fallbacks: list[TargetMatcher] = []
    for pattern in patterns:
        if not is_regex:
            if "*" in pattern or "?" in pattern:
                sources.append(whole_target_source(pattern))
            else:
                exact.add(pattern)
        elif re2_supports(pattern):
            sources.append(pattern)
        else:
            fallbacks.append(TargetMatcher(pattern, is_regex=True))
    return frozenset(exact), sources, fallbacks
