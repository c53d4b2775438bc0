"""Glob patterns with the settled semantics of DESIGN §4.

``*`` is any run of non-``/`` characters, ``?`` one non-``/`` character, ``**`` any characters
including ``/``; ``**/`` matches zero or more whole directories (so ``**/.env`` matches ``.env``
and ``/p/.env`` but not ``/p/prod.env``). Every other character is literal, and the whole target
must match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_TOKEN: Final = re.compile(r"\*\*/|\*\*|\*|\?|[^*?]+")


@dataclass(frozen=True)
class GlobParts:
    """A glob translated for matching: an anchored regex and the literals every match contains."""

    regex: str
    literals: tuple[str, ...]


def translate_glob(pattern: str, *, whole_directories: bool = True) -> GlobParts:
    """Translate ``pattern`` into a full-match regex and the literal runs it requires.

    ``whole_directories=False`` gives the reference engine's reading, where ``**/`` is ``.*``
    (so ``**/.env`` also matches ``prod.env``): only the benchmark's comparison uses it.
    """
    out: list[str] = []
    literals: list[str] = []
    for token in _TOKEN.findall(pattern):
        if token == "**/":
            out.append("(?:.*/)?" if whole_directories else ".*")
        elif token == "**":
            out.append(".*")
        elif token == "*":
            out.append("[^/]*")
        elif token == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(token))
            literals.append(token)
    return GlobParts(regex="".join(out), literals=tuple(literals))


def suffix_literal(pattern: str) -> str | None:
    """If ``pattern`` is ``**/<literal>`` (no other wildcard), return ``<literal>``.

    Such globs — the commonest in policies (``**/.env``, ``**/SOUL.md``) — match a target that
    equals the literal or ends with ``/`` + literal, a check that needs no regex at all.
    """
    if not pattern.startswith("**/"):
        return None
    rest = pattern[3:]
    if not rest or "*" in rest or "?" in rest:
        return None
    return rest
