"""Known secret values, and where they turn up: in tool outputs and in outgoing payloads.

A :class:`SecretRegistry` learns the secret values of a workspace at session start
(:func:`learn_from_workspace`, from its credential files) and takes more from the test
(:meth:`SecretRegistry.add`). It finds them in any text — plain, reversed, hex, base64 at all three
alignments (standard and url-safe, padded or not), percent-encoded, in another case, spread out with
whitespace; rotated (rot13 …), base32, nested base64, UTF-16, with separators changed or spread with
any punctuation, as character codes, or without a vendor prefix (:mod:`._skeleton`), behind
character escapes (:mod:`._escapes`), in the lines of a dump of any radix and width, with or
without offsets (:mod:`._dumps`), nested in other encodings or as lists of numbers
(:mod:`._layers`), with a few characters changed (:mod:`._near`), shifted, XORed or through any
other substitution (:mod:`._substitution`), one word a character (Morse, the NATO alphabet:
:mod:`._token_shapes`) — with multi-pattern passes whose cost does not grow
with the number of secrets (see :mod:`._matcher`), and in any Unicode look-alike form (fullwidth,
zero-width characters, look-alike dashes and letters: :mod:`._fold`). A :class:`StreamScanner`
keeps the normalised tail of earlier texts, so a value split over consecutive sends is found when
its last part is sent, and the fragments of values its latest texts held, so a value sent in two
parts with other text between them is found too (:mod:`._fragments`). Every payload about to leave
(``scan(…, runs=True)``) is also read for a long enough part of a value (:mod:`._runs`).

What leaves this module never holds a value: a :class:`SecretFinding` names the secret by its
fingerprint (the first 16 hex digits of the SHA-256 of its UTF-8 bytes, as the message firewall's
records do) and its label, and :meth:`SecretRegistry.redact` puts ``[secret:<fingerprint>]`` in
place of every hit. The values themselves stay in this process's memory only, as the matcher
needs them; ``repr`` shows counts.

Bounded work: one text is scanned up to :data:`MAX_SCAN_CHARS` characters. A longer text is
scanned at its head and its tail (half the budget each) and the result says how many characters
in between went unscanned. Bytes are cut to the same budget first, then read as Latin-1: one
character per byte, so offsets are byte offsets, redacted bytes round-trip exactly, and a
non-ASCII value is still found through its UTF-8 bytes (one of its forms).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading
from dataclasses import dataclass, field, replace

from pytest_harness_audit.inspect import (
    _escapes,
    _forms,
    _fragment_views,
    _fragments,
    _layers,
    _matcher,
    _near,
    _runs,
    _skeleton,
    _spans,
    _substitution,
)
from pytest_harness_audit.inspect._quick import nothing_in
from pytest_harness_audit.inspect._spans import merged as _merged
from pytest_harness_audit.inspect._spans import outermost as _outermost
from pytest_harness_audit.inspect._spans import redact_spans as redact_spans
from pytest_harness_audit.inspect.learn import credential_values, file_values

#: Characters of one text scanned at most (head and tail halves beyond it).
MAX_SCAN_CHARS = 4 * 1024 * 1024
#: A value the test adds must be at least this long (as the message firewall requires).
MIN_SECRET_LENGTH = 6
#: Values longer than this are matched as pieces of :data:`PIECE_LENGTH` characters, so a
#: partial leak of a long key is found too, and pattern lengths stay bounded.
LONG_VALUE = 128
PIECE_LENGTH = 64
REDACTION = _spans.REDACTION


def fingerprint(value: str) -> str:
    """The first 16 hex digits of the SHA-256 of ``value``'s UTF-8 bytes."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class SecretInfo:
    """What may be shown of a known secret: its fingerprint, label and number of pieces."""

    fingerprint: str
    label: str
    pieces: int = 1


@dataclass(frozen=True)
class SecretFinding:
    """A known secret found in a text: which one, in which form, and where.

    ``transform`` is ``plain``, ``reversed``, ``hex``, ``base64`` or ``base64url``, or one of
    :mod:`._skeleton`'s (``rot13``, ``rotated``, ``base32``, ``utf16``, ``decimal``, ``escaped``,
    ``body+plain`` …), followed by ``+case_folded``, ``+whitespace_stripped``, ``+url``
    (percent-encoded), ``+separators_ignored`` (found among its letters and digits alone) and
    ``+split`` (it began in an earlier text of the stream) as they apply. ``start``/``end``
    index the scanned text (``start`` is 0 for a split hit); ``where`` names the part of a
    structured output.
    """

    fingerprint: str
    label: str
    transform: str
    start: int
    end: int
    where: str = ""

    def to_record(self) -> dict[str, object]:
        """The finding as a record field (no value in it, by construction)."""
        record: dict[str, object] = {
            "fingerprint": self.fingerprint,
            "label": self.label,
            "transform": self.transform,
            "span": [self.start, self.end],
        }
        if self.where:
            record["where"] = self.where
        return record


@dataclass(frozen=True)
class ScanResult:
    """The findings in one text, the text as scanned, and how much of it went unscanned."""

    findings: tuple[SecretFinding, ...]
    text: str
    unscanned: int = 0
    gap: int = -1
    #: For a payload about to leave: the texts its encodings gave, every layer (base64, hex
    #: …: :func:`._layers.scan_layers`), read for runs of a value (:mod:`._runs`).
    views: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def redacted(self) -> str:
        """The text with every finding's span replaced by ``[secret:<fingerprint>]``.

        For a text scanned at its head and tail only, the unscanned middle is withheld:
        ``head [... N characters not scanned ...] tail``.
        """
        if self.gap < 0:
            return redact_spans(self.text, self.findings)
        head = redact_spans(self.text[: self.gap], [f for f in self.findings if f.end <= self.gap])
        tail_findings = [
            SecretFinding(
                f.fingerprint, f.label, f.transform, f.start - self.gap - 1, f.end - self.gap - 1
            )
            for f in self.findings
            if f.start > self.gap
        ]
        tail = redact_spans(self.text[self.gap + 1 :], tail_findings)
        return f"{head}\n[... {self.unscanned} characters not scanned ...]\n{tail}"


@dataclass
class _Secret:
    info: SecretInfo
    values: tuple[str, ...] = field(repr=False)


def _pieces(value: str) -> tuple[str, ...]:
    if len(value) <= LONG_VALUE:
        return (value,)
    pieces = [value[i : i + PIECE_LENGTH] for i in range(0, len(value), PIECE_LENGTH)]
    if len(pieces[-1]) < PIECE_LENGTH // 4:
        pieces[-2:] = [pieces[-2] + pieces[-1]]
    return tuple(pieces)


class SecretRegistry:
    """The secret values of one session: fingerprints outward, a matcher inward.

    Thread-safe: the test thread and a proxy thread may add and scan at the same time.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._secrets: list[_Secret] = []
        self._by_value: dict[str, int] = {}
        self._automaton: _matcher.Automaton | None = None
        self._skeletons: _matcher.Automaton | None = None
        self._fragment_index: _fragments.FragmentIndex | None = None
        self._run_index: _substitution.SendIndex | None = None
        # The fragments every stream of this registry saw: the parts of a value sent on two
        # channels (a message and a tool argument, two arguments of one call) meet here.
        self._shared_memory = _fragments.FragmentMemory()
        self._shared_lock = threading.Lock()
        #: How many values were added: a scan's result holds until it changes.
        self.generation = 0

    def __repr__(self) -> str:
        return f"<SecretRegistry: {len(self._secrets)} secrets>"

    def __len__(self) -> int:
        return len(self._secrets)

    def add(self, value: str, label: str = "added") -> str | None:
        """Know ``value`` from now on; return its fingerprint.

        ``None`` (nothing added) for a value shorter than :data:`MIN_SECRET_LENGTH` characters
        or one that is all whitespace. Adding a known value again keeps its first label.
        """
        if not isinstance(value, str):
            raise TypeError(f"a secret value must be a str, got {type(value).__name__}")
        if len(_matcher.squeeze(value)) < MIN_SECRET_LENGTH:
            return None
        with self._lock:
            known = self._by_value.get(value)
            if known is not None:
                return self._secrets[known].info.fingerprint
            pieces = _pieces(value)
            info = SecretInfo(fingerprint(value), str(label)[:200], len(pieces))
            self._by_value[value] = len(self._secrets)
            self._secrets.append(_Secret(info, pieces))
            self.generation += 1
            self._automaton = None
            self._skeletons = None
            self._fragment_index = None
            self._run_index = None
            return info.fingerprint

    def secrets(self) -> tuple[SecretInfo, ...]:
        """Fingerprint and label of every known secret, in the order they were added."""
        with self._lock:
            return tuple(secret.info for secret in self._secrets)

    def _values(self) -> _forms.Values:
        """The pieces of each known value, in order (what the automata are built from)."""
        return tuple(secret.values for secret in self._secrets)

    def _current(self) -> _matcher.Automaton:
        with self._lock:
            if self._automaton is None:
                self._automaton = _forms.automaton(self._values())
            return self._automaton

    def _skeleton_automaton(self) -> _matcher.Automaton:
        """The automaton of the values' skeletons (separators ignored: :mod:`._skeleton`)."""
        with self._lock:
            if self._skeletons is None:
                self._skeletons = _forms.skeleton_automaton(self._values())
            return self._skeletons

    def _fragment_automaton(self) -> _fragments.FragmentIndex:
        with self._lock:
            if self._fragment_index is None:
                self._fragment_index = _forms.fragment_index(self._values())
            return self._fragment_index

    def _with_runs(
        self,
        result: ScanResult,
        before: str,
        shapes: bool = False,
        memory: _runs.PieceMemory | None = None,
        decoded: bool = False,
    ) -> ScanResult:
        """``result`` with the values a long enough part of which is in its text, or begins in
        ``before`` and ends in it (:mod:`._runs`; with ``decoded``, a payload about to leave,
        in its decodings too), or written through a character substitution
        (:mod:`._substitution`; with ``shapes``, that alone), and that it did not find whole."""
        with self._lock:
            if self._run_index is None:
                pairs = [(i, v) for i, secret in enumerate(self._secrets) for v in secret.values]
                self._run_index = _substitution.SendIndex(pairs)
            index = self._run_index
        known = {f.fingerprint for f in result.findings}
        found = list(result.findings)
        views = result.views if decoded else None
        hits = index.hits(result.text, before, shapes, memory, views, words=decoded)
        for secret, start, end, transform in hits:
            info = self._secrets[secret].info
            if info.fingerprint not in known:
                known.add(info.fingerprint)
                found.append(SecretFinding(info.fingerprint, info.label, transform, start, end))
        if len(found) == len(result.findings):
            return result
        found.sort(key=lambda f: (f.start, f.end, f.fingerprint))
        return replace(result, findings=tuple(found))

    def _forget_shared_fragments(self) -> None:
        with self._shared_lock:
            self._shared_memory.reset()

    def _with_fragments(
        self, result: ScanResult, memory: _fragments.FragmentMemory, runs: bool = False
    ) -> ScanResult:
        """``result`` with the values this text completes from fragments seen before it: in
        ``memory`` (its stream's), then in the memory every stream of this registry shares."""
        index = self._fragment_automaton()
        if index.empty:
            return result
        parts = _fragment_views.FragmentParts(result.text)
        found = list(result.findings)
        # a value split over this stream's texts is not found again in the shared memory
        known = {f.fingerprint for f in found if "+split" not in f.transform}
        for shared in (False, True):
            if shared:
                known = {f.fingerprint for f in found}
                with self._shared_lock:
                    hits = parts.hits(index, self._shared_memory, runs)
            else:
                hits = parts.hits(index, memory, runs)
            for secret, start, end in hits:
                info = self._secrets[secret].info
                if info.fingerprint not in known:  # else: found whole in this text
                    found.append(
                        SecretFinding(info.fingerprint, info.label, "fragment+split", start, end)
                    )
        if len(found) == len(result.findings):
            return result
        found.sort(key=lambda f: (f.start, f.end, f.fingerprint))
        return replace(result, findings=tuple(found))

    def _finding(self, hit: _matcher.Hit, pattern: _matcher.Pattern, text: str) -> SecretFinding:
        info = self._secrets[pattern.secret].info
        transform = _matcher.describe(pattern, hit, text)
        return SecretFinding(info.fingerprint, info.label, transform, hit.start, hit.end)

    def _scan(
        self,
        data: str | bytes,
        carries: dict[str, _matcher.Carry],
        budget: int,
        *,
        carry_out: bool = True,
        parts: bool = False,
    ) -> ScanResult:
        """The findings in ``data``; ``carries`` hold the tails of what was scanned before it
        and, with ``carry_out``, get this text's tails (a one-shot scan drops them). With
        ``parts`` (a payload about to leave), a near copy of a part of a value counts too."""
        text, unscanned, head = _matcher.as_text(data, budget)
        automaton = self._current()
        skeletons = self._skeleton_automaton()
        if automaton.empty:
            return ScanResult((), text, unscanned, head if unscanned else -1)
        one_shot = not carry_out and not carries and not unscanned
        if one_shot and len(text) <= _matcher.CHUNK and nothing_in(automaton, skeletons, text):
            return ScanResult((), text, 0, -1)
        found: dict[tuple[str, int, int], SecretFinding] = {}
        grams: list[_matcher.Hit] = []
        views: list[str] | None = [] if parts else None
        bounds = [(0, head), (head + 1, len(text))] if unscanned else [(0, len(text))]
        for part, (begin, stop) in enumerate(bounds):
            if part:  # nothing spans the gap between head and tail
                carries.clear()
            last_part = part == len(bounds) - 1
            for offset in range(begin, stop, _matcher.CHUNK):
                end = min(offset + _matcher.CHUNK, stop)
                chunk = text[offset:end]
                # a tail is worked out only for a chunk something is scanned on from
                carry_on = end < stop or (carry_out and last_part)
                for hit in itertools.chain(
                    _matcher.scan_chunk(automaton, chunk, offset, carries, carry_on),
                    _escapes.scan_unescaped(automaton, chunk, offset),
                ):
                    if automaton.patterns[hit.pattern].transform == _near.NEAR:
                        grams.append(hit)  # a candidate near copy, verified below
                        continue
                    finding = self._finding(hit, automaton.patterns[hit.pattern], text)
                    found.setdefault((finding.fingerprint, finding.start, finding.end), finding)
                extra = [
                    self._finding(hit, skeletons.patterns[hit.pattern], text)
                    for hit in _skeleton.scan_skeleton(skeletons, chunk, offset, carries, carry_on)
                ]
                for finding in _merged(extra, found.values()):
                    found.setdefault((finding.fingerprint, finding.start, finding.end), finding)
                hits = _layers.scan_layers(automaton, chunk, offset, views)
                decoded = [
                    self._finding(h, automaton.patterns[h.pattern], text)
                    for h in hits
                    if automaton.patterns[h.pattern].transform != _near.NEAR
                ]
                for finding in _layers.uncovered(decoded, found.values()):
                    found.setdefault((finding.fingerprint, finding.start, finding.end), finding)
        values = [(secret.info.fingerprint, secret.values) for secret in self._secrets]
        near = _near.copies(automaton, grams, text, values, found.values(), parts)
        for index, start, end in near:
            info = self._secrets[index].info
            finding = SecretFinding(info.fingerprint, info.label, _near.NEAR, start, end)
            found.setdefault((finding.fingerprint, finding.start, finding.end), finding)
        ordered = sorted(_outermost(found.values()), key=lambda f: (f.start, f.end, f.fingerprint))
        gap = head if unscanned else -1
        return ScanResult(tuple(ordered), text, unscanned, gap, tuple(views or ()))

    def scan(self, data: str | bytes, *, budget: int = MAX_SCAN_CHARS) -> ScanResult:
        """Every known secret in ``data``, in any of the forms the matcher knows (through any
        substitution: within :data:`._substitution.SHAPE_SCAN` characters)."""
        result = self._scan(data, {}, budget, carry_out=False)
        if len(result.text) > _substitution.SHAPE_SCAN:
            return result
        return self._with_runs(result, "", shapes=True)

    def redact(self, text: str) -> str:
        """``text`` with every known secret, in any form, replaced by ``[secret:<fp>]``.

        Texts longer than the scan budget are redacted where they were scanned only.
        """
        result = self.scan(text)
        if not result.findings:
            return text
        if not result.unscanned:
            return result.redacted()
        half = MAX_SCAN_CHARS // 2
        head = redact_spans(text[:half], [f for f in result.findings if f.end <= half])
        tail_findings = [
            SecretFinding(f.fingerprint, f.label, f.transform, f.start - half - 1, f.end - half - 1)
            for f in result.findings
            if f.start > half
        ]
        tail = redact_spans(text[len(text) - half :], tail_findings)
        return head + text[half : len(text) - half] + tail

    def stream(self, pieces: _runs.PieceMemory | None = None) -> StreamScanner:
        """A scanner for consecutive texts of one channel (the sends of a session); its runs
        assembled from pieces in ``pieces`` (shared by channels) or a memory of its own."""
        return StreamScanner(self, pieces)

    def learn_text(self, text: str, source: str) -> int:
        """Add the secrets of the text of a credential file read during the session (its
        path as ``source``; ``cat -n`` numbering is undone); return how many were new."""
        before = len(self)
        for key, value in file_values(text, source):
            self.add(value, f"{source}:{key}"[:200])
        return len(self) - before

    def learn_from_workspace(self, root: str | os.PathLike[str]) -> int:
        """Add the secret values of ``root``'s credential files; return how many were new."""
        before = len(self)
        for label, value in credential_values(root):
            self.add(value, label)
        return len(self) - before


class StreamScanner:
    """Scans consecutive texts as one stream, so a value split over them is found.

    The fragments of values are also matched across every stream of the registry (the
    latest texts of all of them), so parts sent on two channels are found too.

    The normalised tail of what was scanned (as long as the longest pattern, less one) is kept
    from one text to the next; a value that began in an earlier text is reported with
    ``+split`` and a span from 0 to its end in the current text, which is what can still be
    redacted.
    """

    def __init__(self, registry: SecretRegistry, pieces: _runs.PieceMemory | None = None) -> None:
        self._registry = registry
        self._carries: dict[str, _matcher.Carry] = {}
        self._memory = _fragments.FragmentMemory()
        self._pieces = _runs.PieceMemory() if pieces is None else pieces
        self._lock = threading.Lock()

    def scan(
        self, data: str | bytes, *, runs: bool = False, budget: int = MAX_SCAN_CHARS
    ) -> ScanResult:
        """The findings in ``data`` (its first ``budget`` characters), including values that
        began in earlier texts; with ``runs``, a long enough part of a value too (``run``)."""
        with self._lock:
            for carry in self._carries.values():
                carry.forget_positions()
            skeleton = self._carries.get("skeleton")
            before = skeleton.text if skeleton is not None else ""
            result = self._registry._scan(data, self._carries, budget, parts=runs)
            result = self._registry._with_fragments(result, self._memory, runs)
            if not runs:
                return result
            return self._registry._with_runs(result, before, memory=self._pieces, decoded=True)

    def reset(self) -> None:
        """Forget the earlier texts (the fragments every stream of the registry saw too)."""
        with self._lock:
            self._carries.clear()
            self._memory.reset()
            self._pieces.reset()
        self._registry._forget_shared_fragments()


def learn_from_workspace(
    root: str | os.PathLike[str], registry: SecretRegistry | None = None
) -> SecretRegistry:
    """A registry (``registry``, or a new one) knowing the secrets of ``root``'s credential
    files: ``KEY=value`` lines, JSON/YAML string values, PEM private-key bodies (see
    :mod:`.learn` for what counts)."""
    registry = SecretRegistry() if registry is None else registry
    registry.learn_from_workspace(root)
    return registry
