"""Glob patterns for the ``Glob`` tool and ``Grep``'s ``glob`` filter.

The wildcards are those of the policy globs (DESIGN §4), read by the same tokenizer
(:func:`pytest_harness_audit.policy.glob.translate_glob`) — ``*`` any run of non-``/`` characters,
``?`` one non-``/`` character, ``**`` anything including ``/``, ``**/`` zero or more whole
directories — plus what agents expect of file globs: ``[abc]``/``[!abc]`` classes and
``{a,b}`` alternatives (``**/*.{ts,tsx}``). The whole path must match.
"""

from __future__ import annotations

import re

from pytest_harness_audit.policy.glob import translate_glob

MAX_BRACE_EXPANSIONS = 256
"""A glob whose ``{a,b}`` alternatives expand to more patterns than this is refused."""

# A character class (``[abc]``, ``[!a-z]``); a ``[`` that opens none is a literal.
_CLASS = re.compile(r"(\[[^\]/]+\])")


class GlobSyntaxError(ValueError):
    """A glob pattern that cannot be used (unbalanced or explosive braces)."""


def expand_braces(pattern: str) -> list[str]:
    """Expand ``{a,b}`` alternatives (nested too) into plain patterns, left to right."""
    start = pattern.find("{")
    if start < 0:
        if "}" in pattern:
            raise GlobSyntaxError(f"unbalanced '}}' in glob {pattern!r}")
        return [pattern]
    depth = 0
    options: list[str] = []
    begin = start + 1
    for index in range(start, len(pattern)):
        char = pattern[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                options.append(pattern[begin:index])
                head, tail = pattern[:start], pattern[index + 1 :]
                expanded: list[str] = []
                for option in options:
                    expanded.extend(expand_braces(head + option + tail))
                    if len(expanded) > MAX_BRACE_EXPANSIONS:
                        raise GlobSyntaxError(
                            f"glob {pattern!r} expands to more than {MAX_BRACE_EXPANSIONS} patterns"
                        )
                return expanded
        elif char == "," and depth == 1:
            options.append(pattern[begin:index])
            begin = index + 1
    raise GlobSyntaxError(f"unbalanced '{{' in glob {pattern!r}")


def _translate_one(pattern: str) -> str:
    """The regex of one brace-free glob: the policy glob tokenizer for the wildcards and
    literals, with ``[…]`` classes cut out first."""
    out: list[str] = []
    for index, piece in enumerate(_CLASS.split(pattern)):
        if index % 2:
            body = piece[1:-1]
            negate = body[0] in "!^"
            if negate:
                body = body[1:]
            chars = "".join(char if char == "-" else re.escape(char) for char in body)
            out.append(f"[^/{chars}]" if negate else f"[{chars}]")
        elif piece:
            out.append(translate_glob(piece).regex)
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex that full-matches exactly the posix paths ``pattern`` describes."""
    alternatives = [_translate_one(part) for part in expand_braces(pattern)]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z", re.DOTALL)
