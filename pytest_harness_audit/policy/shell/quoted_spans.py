"""Quoted strings replaced as ``expression.sub`` replaces them, each character scanned a bounded
number of times.

A string expression (``'…'``, ``"…"`` with its escapes) tried from every quote of a text that
never closes scans on to the text's end from each of them: 20,000 unclosed quotes took seconds.
A string that does not close from one quote closes from no later quote of the same kind either
(what follows it is read the same way from both), so each kind is tried until it first fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable


def sub_quoted(
    expression: re.Pattern[str], replace: Callable[[re.Match[str]], str], text: str
) -> str:
    """``expression.sub(replace, text)`` for an ``expression`` whose every match starts with a
    quote (``'`` or ``"``) and closes with the same quote, reading from no quote of a kind after
    one of that kind that closed nowhere."""
    quotes = _Quotes(text)
    out: list[str] = []
    done = 0
    start = quotes.next(0)
    while start >= 0:
        match = expression.match(text, start)
        if match is None:
            quotes.closes_nowhere(text[start])
            start = quotes.next(start + 1)
            continue
        out.append(text[done:start])
        out.append(replace(match))
        done = match.end()
        start = quotes.next(done)
    out.append(text[done:])
    return "".join(out)


class _Quotes:
    """The next quote of each kind still tried, each found by a scan that only moves on."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found = {"'": -1, '"': -1}  # the place last found (-1: before the start)

    def next(self, start: int) -> int:
        places = []
        for kind, place in self.found.items():
            if place < start:
                place = self.text.find(kind, start)
                self.found[kind] = place if place >= 0 else len(self.text)
            if self.found[kind] < len(self.text):
                places.append(self.found[kind])
        return min(places, default=-1)

    def closes_nowhere(self, kind: str) -> None:
        del self.found[kind]


__all__ = ["sub_quoted"]
