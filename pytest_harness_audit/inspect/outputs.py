"""Scanning structured values — tool outputs, MCP results, call parameters — for secrets.

A value is walked to its text leaves: strings and bytes, and numbers read as their decimal text
(a numeric secret passed as an ``int``), inside mappings (keys and values), lists and tuples, up
to :data:`MAX_DEPTH` levels. Each leaf is scanned, within one budget of
:data:`~.secrets.MAX_SCAN_CHARS` characters for the whole value; leaves past the budget or the
depth are counted as unscanned. A finding's ``where`` names its leaf (``content[0].text``).
:func:`redacted` rebuilds the value with every hit replaced by ``[secret:<fingerprint>]``
(mappings and lists copied, other leaves kept; bytes stay bytes, a number with a hit becomes
its redacted text). With a ``whole`` scanner, the leaves are also read joined into one text
(:mod:`._joined`): a value spread over the items of a list or the fields of a payload, each too
short to be a fragment of it, is found too, and every leaf it covers is redacted.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pytest_harness_audit.inspect import _fragment_views, _fragments, _joined, _runs, _skeleton
from pytest_harness_audit.inspect.secrets import (
    MAX_SCAN_CHARS,
    REDACTION,
    ScanResult,
    SecretFinding,
    SecretRegistry,
    redact_spans,
)
from pytest_harness_audit.inspect.spans import Places, ReadMemory

#: Deeper leaves are not scanned (and counted as unscanned).
MAX_DEPTH = 64

Scanner = Callable[[str | bytes, str, int], ScanResult]
"""``scanner(leaf, where, budget)``: how one leaf is scanned (plain or as part of a stream)."""
WholeScanner = Callable[[str], ScanResult]
"""``whole(text)``: how the leaves of a value joined into one text are scanned."""


@dataclass(frozen=True)
class ValueScan:
    """The findings in a structured value and how much of it went unscanned."""

    findings: tuple[SecretFinding, ...]
    unscanned: int
    redacted: Any

    @property
    def exposed(self) -> bool:
        """Whether any secret was found."""
        return bool(self.findings)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,31}")


def _where(parent: str, key: object, index: int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    name = key if isinstance(key, str) and _NAME.fullmatch(key) else f"<{index}>"
    return f"{parent}.{name}" if parent else name


def _key_where(parent: str, index: int) -> str:
    return f"{parent}.<key {index}>" if parent else f"<key {index}>"


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _leaves(value: Any) -> list[tuple[str, str | bytes, int]]:
    """``(where, leaf, depth)`` for every text leaf, in order; too-deep subtrees as ``("", …)``."""
    leaves: list[tuple[str, str | bytes, int]] = []
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        where, item, depth = stack.pop()
        if isinstance(item, (str, bytes)):
            leaves.append((where, item, depth))
        elif _is_number(item):
            leaves.append((where, str(item), depth))
        elif depth >= MAX_DEPTH and isinstance(item, (Mapping, list, tuple)):
            leaves.append((where, "", -1))
        elif isinstance(item, Mapping):
            children: list[tuple[str, Any, int]] = []
            for index, (key, child) in enumerate(item.items()):
                if isinstance(key, str):
                    children.append((_key_where(where, index), key, depth + 1))
                children.append((_where(where, key, index), child, depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, (list, tuple)):
            stack.extend(
                reversed([(_where(where, i, i), child, depth + 1) for i, child in enumerate(item)])
            )
    return leaves


def scan_value(
    value: Any, scanner: Scanner, budget: int = MAX_SCAN_CHARS, *, whole: WholeScanner | None = None
) -> ValueScan:
    """Scan every text leaf of ``value`` with ``scanner``, within ``budget`` characters; with
    ``whole``, the leaves joined too (see the module doc)."""
    findings: list[SecretFinding] = []
    replacements: dict[str, str | bytes] = {}
    unscanned = 0
    left = budget
    leaves = _leaves(value)
    for where, leaf, depth in leaves:
        if depth < 0:
            unscanned += 1
            continue
        if left <= 0:
            unscanned += len(leaf)
            continue
        result = scanner(leaf, where, left)
        left -= len(result.text)
        unscanned += result.unscanned
        if result.findings:
            found = [replace(f, where=where) for f in result.findings]
            findings.extend(found)
            replacements[where] = _redacted_leaf(leaf, result)
    if whole is not None:
        _scan_joined(leaves, whole, findings, replacements)
    if not replacements:
        return ValueScan(tuple(findings), unscanned, value)
    return ValueScan(tuple(findings), unscanned, _rebuild(value, "", replacements, 0))


def _scan_joined(
    leaves: list[tuple[str, str | bytes, int]],
    whole: WholeScanner,
    findings: list[SecretFinding],
    replacements: dict[str, str | bytes],
) -> None:
    """Add the values the joined views of ``leaves`` hold across two leaves or more (a
    finding for each leaf such a value covers, the whole leaf its span), and redact those
    leaves; a value within one leaf is that leaf's scan's."""
    texts: list[_joined.Leaf] = [
        (where, leaf if isinstance(leaf, str) else leaf.decode("latin-1"), "<key " in where)
        for where, leaf, depth in leaves
        if depth >= 0
    ]
    length = {where: len(text) for where, text, _ in texts}
    kinds = {where: leaf for where, leaf, _ in leaves}
    # a value a leaf's own scan found in it alone is that leaf's: a joined match of it reaching
    # into the next leaf (a long enough part, read on past the join) is no value spread over
    # leaves. One a leaf's scan completed from pieces earlier leaves held is theirs too.
    own = {(found.fingerprint, found.where) for found in findings}
    text_of = {where: text for where, text, _ in texts}
    alone: dict[str, frozenset[str]] = {}

    def its_own(fingerprint: str, where: str) -> bool:
        if (fingerprint, where) not in own:
            return False
        if where not in alone:
            alone[where] = frozenset(f.fingerprint for f in whole(text_of[where]).findings)
        return fingerprint in alone[where]

    done: set[tuple[str, str]] = set()
    for view in _joined.views(texts):
        for found in whole(view.text).findings:
            covered = view.covered(found.start, found.end)
            if any(its_own(found.fingerprint, where) for where in covered):
                continue
            marker = REDACTION.format(fingerprint=found.fingerprint)
            for where in covered if len(covered) > 1 else ():
                if (found.fingerprint, where) in done:
                    continue
                done.add((found.fingerprint, where))
                transform = f"{found.transform}+joined"
                findings.append(
                    replace(found, transform=transform, start=0, end=length[where], where=where)
                )
                kind = kinds[where]
                replacements[where] = (
                    marker.encode("latin-1") if isinstance(kind, bytes) else marker
                )


def column_texts(value: Any) -> list[str]:
    """The text leaves of each column of ``value`` joined (see :func:`._joined.columns`): the
    keys of one mapping, the same field of every record of a list, side by side."""
    texts: list[_joined.Leaf] = [
        (where, leaf if isinstance(leaf, str) else leaf.decode("latin-1"), "<key " in where)
        for where, leaf, depth in _leaves(value)
        if depth >= 0
    ]
    return [_joined.JOIN.join(text for _, text, _ in chosen) for chosen in _joined.columns(texts)]


def joined_scanner(registry: SecretRegistry, *, parts: bool = False) -> WholeScanner:
    """How :func:`scan_value` reads joined leaves with ``registry``: one text scanned on its
    own, for a long enough part of a value too (:mod:`._runs`); with ``parts`` (a payload about
    to leave), a near copy of a part counts as well, and a run in the text's decodings."""

    def whole(text: str) -> ScanResult:
        result = registry._scan(text, {}, MAX_SCAN_CHARS, carry_out=False, parts=parts)
        return registry._with_runs(result, "", decoded=parts)

    return whole


def _redacted_leaf(leaf: str | bytes, result: ScanResult) -> str | bytes:
    text = result.redacted()
    if isinstance(leaf, bytes):
        return text.encode("latin-1")
    return text


def _rebuild(value: Any, where: str, replacements: dict[str, str | bytes], depth: int) -> Any:
    if isinstance(value, (str, bytes)) or _is_number(value):
        return replacements.get(where, value)
    if depth >= MAX_DEPTH:
        return value
    if isinstance(value, Mapping):
        rebuilt: dict[Any, Any] = {}
        for index, (key, child) in enumerate(value.items()):
            new_key = (
                replacements.get(_key_where(where, index), key) if isinstance(key, str) else key
            )
            child_where = _where(where, key, index)
            rebuilt[new_key] = _rebuild(child, child_where, replacements, depth + 1)
        return rebuilt
    if isinstance(value, (list, tuple)):
        items = [
            _rebuild(child, _where(where, i, i), replacements, depth + 1)
            for i, child in enumerate(value)
        ]
        return tuple(items) if isinstance(value, tuple) else items
    return value


def redacted(value: Any, findings: tuple[SecretFinding, ...]) -> Any:
    """``value`` with the spans of ``findings`` (from :func:`scan_value`) redacted."""
    by_leaf: dict[str, list[SecretFinding]] = {}
    for finding in findings:
        by_leaf.setdefault(finding.where, []).append(finding)
    replacements: dict[str, str | bytes] = {}
    for where, leaf, depth in _leaves(value):
        if depth >= 0 and where in by_leaf and isinstance(leaf, str):
            replacements[where] = redact_spans(leaf, by_leaf[where])
    return _rebuild(value, "", replacements, 0) if replacements else value


def memoised_scanner(secrets: SecretRegistry) -> Scanner:
    """A plain scanner of ``secrets`` that scans a text met more than once (within one budget)
    once, and forgets what it scanned when a secret is added meanwhile."""
    memo: dict[object, ScanResult] = {}
    generation = [secrets.generation]

    def scanner(leaf: str | bytes, where: str, budget: int) -> ScanResult:
        if secrets.generation != generation[0]:
            memo.clear()
            generation[0] = secrets.generation
        # a leaf within the budget is scanned whole, whatever the budget
        key: object = leaf if len(leaf) <= budget else (leaf, budget)
        result = memo.get(key)
        if result is None:
            result = memo[key] = secrets.scan(leaf, budget=budget)
        return result

    return scanner


def tidy_where(scan: ValueScan, redact: Callable[[str], str]) -> ValueScan:
    """``scan`` with the ``where`` of its findings redacted: a mapping key could itself be a
    secret."""
    if not any(finding.where for finding in scan.findings):
        return scan
    findings = tuple(replace(f, where=redact(f.where)) for f in scan.findings)
    return ValueScan(findings, scan.unscanned, scan.redacted)


class OutputStream:
    """What the model reads over a session, as one stream: each text scanned whole (the
    registry's one-shot scan), then read for the fragments of a value earlier outputs held, a
    long enough part of one (:mod:`._runs`), beginning in the tail of the output before it, and
    pieces of one in any order. An output holding a value whole is not remembered as its
    fragments (the model reading ``.env`` makes no later mention of ``sk-test-`` a finding).
    Lighter than a :class:`~.secrets.StreamScanner` (no carried tails of every form: the
    fragments and the runs find a value split over outputs)."""

    def __init__(self, registry: SecretRegistry) -> None:
        self._registry = registry
        self._fragments = _fragments.FragmentMemory()
        self._pieces = _runs.PieceMemory()
        self._before = ""
        self._lock = threading.Lock()

    def scan(self, leaf: str | bytes, where: str, budget: int) -> ScanResult:
        """The findings in ``leaf`` (a :data:`Scanner`), the stream's memory taken into
        account and updated."""
        registry = self._registry
        result = registry.scan(leaf, budget=budget)
        with self._lock:
            if not result.findings:  # a value read whole is not remembered as its parts
                result = self._with_fragments(result)
            result = registry._with_runs(result, self._before, memory=self._pieces)
            tail = _skeleton.skeleton_text(result.text[-4 * _runs.LONG_RUN :])
            self._before = tail[-_runs.LONG_RUN :]
        return result

    def _with_fragments(self, result: ScanResult) -> ScanResult:
        """``result`` with the values it completes from fragments earlier outputs held (this
        stream's memory only: what the model read is no part of what was sent)."""
        index = self._registry._fragment_automaton()
        if index.empty:
            return result
        infos = self._registry.secrets()
        hits = _fragment_views.FragmentParts(result.text).hits(index, self._fragments, True)
        found = [
            SecretFinding(infos[s].fingerprint, infos[s].label, "fragment+split", start, end)
            for s, start, end in hits
        ]
        if not found:
            return result
        found.sort(key=lambda f: (f.start, f.end, f.fingerprint))
        return replace(result, findings=tuple(found))

    def memory(self) -> ReadMemory:
        """What the stream remembers of the outputs it read, by place (no text: see
        :class:`~.spans.ReadMemory`), for a door whose next output is read in another process
        (its tail is not carried: the pieces and the cuts find a value read in parts)."""
        infos = self._registry.secrets()
        pieces: set[Places] = set()
        with self._lock:
            for secret, length, start, stop in self._pieces.runs():
                pieces.add((infos[secret].fingerprint, length, start, stop))
            cuts = {
                (infos[s // _fragments.VARIANTS].fingerprint, s % _fragments.VARIANTS, at, bool(p))
                for s, at, p in self._fragments.seen
            }
        return ReadMemory(frozenset(pieces), frozenset(cuts))

    def resume(self, memory: ReadMemory) -> None:
        """Take up what another process's stream read (its :meth:`memory`): the places of the
        values this registry knows; those of a value it does not know are left out."""
        known = {info.fingerprint: index for index, info in enumerate(self._registry.secrets())}
        lengths = _core_lengths(self._registry)
        with self._lock:
            for fingerprint, length, start, stop in memory.pieces:
                secret = known.get(fingerprint)
                if secret is None or lengths.get(secret) != length:
                    continue  # not a value known here, or not its core's places
                self._pieces.hold(secret, length, start, stop)
            for fingerprint, form, at, is_prefix in memory.cuts:
                secret = known.get(fingerprint)
                if secret is not None and form < _fragments.VARIANTS:
                    self._fragments.seen.add((secret * _fragments.VARIANTS + form, at, is_prefix))


def _core_lengths(registry: SecretRegistry) -> dict[int, int]:
    """The length of the core whose places each secret's pieces mark (as :class:`~._runs.RunIndex`
    keeps it: its last value that has one)."""
    with registry._lock:
        values = [(index, secret.values) for index, secret in enumerate(registry._secrets)]
    lengths: dict[int, int] = {}
    for index, forms in values:
        for value in forms:
            skeleton = _runs.core(value)
            if skeleton is not None:
                lengths[index] = len(skeleton)
    return lengths
