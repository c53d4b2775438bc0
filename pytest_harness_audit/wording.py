"""Small wording helpers shared by every printed line."""

from __future__ import annotations

import re

# Characters that act on a terminal: C0 controls but tab and newline (carriage return
# included), DEL, C1 controls, and the bidirectional marks, embeddings, overrides and isolates.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: str) -> str:
    """``text`` with every character that acts on a terminal written as its ``\\uXXXX`` escape
    (also JSON's escape of the same character): what an agent wrote can be printed to a
    reviewer's terminal without erasing, rewriting or reordering what is around it."""
    return _HIDDEN.sub(_escape, text)


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``"1 record"``, ``"2 records"``, ``"0 records"`` (``plural_noun`` for irregular nouns)."""
    return f"{count} {noun if count == 1 else plural_noun or noun + 's'}"
