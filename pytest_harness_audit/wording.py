"""Small wording helpers shared by every printed line."""

from __future__ import annotations

import re

# Characters that act on a terminal: C0 controls but tab and newline (carriage return
# included), DEL, C1 controls, the bidirectional marks, embeddings, overrides and isolates, and
# the line and paragraph separators (line breaks to some readers).
#: (``HIDDEN.pattern`` is one character class: other modules extend it.)
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: str) -> str:
    """``text`` with every character that acts on a terminal written as its ``\\uXXXX`` escape
    (also JSON's escape of the same character): what an agent wrote can be printed to a
    reviewer's terminal without erasing, rewriting or reordering what is around it."""
    return HIDDEN.sub(_escape, text)


def one_line(text: str) -> str:
    """``text`` with its line breaks written as ``\\n`` and ``\\r``: what an agent wrote, shown
    on a line of its own, cannot add lines that look like the tool's."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``"1 record"``, ``"2 records"``, ``"0 records"`` (``plural_noun`` for irregular nouns)."""
    return f"{count} {noun if count == 1 else plural_noun or noun + 's'}"
