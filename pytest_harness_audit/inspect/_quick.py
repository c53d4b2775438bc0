"""The shortcut of a one-shot scan: whether a text of one chunk provably holds no known
value, found with the few searches that decide it (:func:`nothing_in`)."""

from __future__ import annotations

from pytest_harness_audit.inspect import _dumps, _escapes, _layers, _matcher, _skeleton


def nothing_in(automaton: _matcher.Automaton, skeletons: _matcher.Automaton, chunk: str) -> bool:
    """Whether scanning ``chunk`` alone (one chunk, nothing carried into it) provably finds
    nothing: the plain and skeleton views are searched here as :func:`._matcher.scan_chunk`
    and :func:`._skeleton.scan_skeleton` search them, and a chunk with a decoded view (percent
    escapes, character escapes, dump lines) is left to the full scan; nested encodings
    (:mod:`._layers`) are scanned here."""
    if _matcher.percent_escaped(chunk):
        return False
    if _escapes.unescaped(chunk) is not None or _dumps.has_dump_lines(chunk):
        return False
    if next(automaton.matches(_matcher.normalise(chunk)), None) is not None:
        return False
    if next(skeletons.matches(_skeleton.skeleton_text(chunk)), None) is not None:
        return False
    return not _layers.scan_layers(automaton, chunk, 0)
