"""Small wording helpers shared by every printed line."""

from __future__ import annotations


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``"1 record"``, ``"2 records"``, ``"0 records"`` (``plural_noun`` for irregular nouns)."""
    return f"{count} {noun if count == 1 else plural_noun or noun + 's'}"
