"""Extended globs (``shopt -s extglob``) as the brace and glob forms the reading expands.

``cat .@(env)``, ``cat .+(e)nv``, ``rm -rf @(app)``: a pattern-list in a word would otherwise be
taken for a subshell after the word. Each is read as a pattern matching at least what bash's
matches (one reading too many, never too few): ``@(a|b)`` → ``{a,b}``, ``?(a|b)`` → ``{,a,b}``,
``+(a|b)`` → ``{a,b}*``, ``*(…)`` and ``!(…)`` → ``*``.
"""

from __future__ import annotations

from typing import Final

#: The characters that open a pattern-list before ``(``.
OPENERS: Final = "?*+@!"


def extglob(opener: str, body: str) -> str:
    """The brace and glob text read for ``<opener>(<body>)``."""
    if opener in "*!" or any(char in body for char in "(){},"):
        return "*"  # (nested lists and braces: any text)
    alternatives = body.split("|")
    if opener == "?":
        return "{," + ",".join(alternatives) + "}"
    listed = alternatives[0] if len(alternatives) == 1 else "{" + ",".join(alternatives) + "}"
    return listed + ("*" if opener == "+" else "")


__all__ = ["OPENERS", "extglob"]
