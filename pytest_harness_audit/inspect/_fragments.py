"""A secret reassembled from fragments with other text between them (sends of one stream).

A value can be sent in two parts with chatter around them: ``part 1: sk-live-…`` and then
``part 2: …``. The stream's carried tail (:class:`~._matcher.Carry`) only finds
parts that follow each other directly, so each known value's normalised plain form also gives
its *fragments*: every prefix and every suffix at least :data:`MIN_FRAGMENT` characters long,
cut where the other part is at least as long too. One Aho–Corasick automaton holds them all (so
a scan costs the same whatever the number of secrets); a stream remembers every fragment it
saw, however many texts ago (chatter between the parts does not make them forgotten), and a
fragment whose complement (the other part of the same cut of the same value) was seen earlier —
in an earlier text, or earlier in the same text — is a split value. Either order counts (the
second half may go first), and so do the parts of the value reversed or ROT13-rotated, and the
parts of its body alone (the value without its vendor prefix) (:data:`VARIANTS`). For a message
(``runs``), parts sent in separate texts that together make a long enough run of the value's
secret part (:mod:`._runs`) are found too, before the last part goes. A value of up to
:data:`MAX_MIDDLE_VALUE` characters is also found in three parts: a middle part after its prefix
(or before its suffix) extends it.

Bounded: fragments of :data:`MIN_FRAGMENT` characters or more on both sides, so a short common
word shared by two texts and a value is no finding; at most :data:`MAX_FRAGMENT_HITS` fragment
hits are looked at per text, in its first and last :data:`FRAGMENT_SCAN` / 2 characters;
the memory of a stream holds cuts, never text, so it is no larger than the index's cuts however
long the stream.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from dataclasses import dataclass, field

import ahocorasick_rs

from pytest_harness_audit.inspect import _runs, _skeleton

#: Both parts of a split value are at least this long (normalised).
MIN_FRAGMENT = 8
#: Fragment hits looked at per text (a hostile text repeating a prefix cannot cost more).
MAX_FRAGMENT_HITS = 4096
#: Characters of one text looked at for fragments: its head and its tail, half each.
FRAGMENT_SCAN = 64 * 1024

Cut = tuple[int, int, bool]
"""``(secret, cut, is_prefix)``: the prefix ``value[:cut]`` or the suffix ``value[cut:]``."""
Middle = tuple[int, int, int]
"""``(secret, start, stop)``: the middle part ``value[start:stop]`` of a three-part split."""
#: Values up to this long (normalised) are also matched as three parts: prefix, middle, suffix.
MAX_MIDDLE_VALUE = 64


@dataclass(frozen=True)
class FragmentHit:
    """A fragment found in a normalised text, completing one seen before it."""

    secret: int
    start: int
    end: int


class FragmentIndex:
    """One automaton over the prefixes and suffixes of every value (see the module doc)."""

    def __init__(self, values: list[tuple[int, str]]) -> None:
        keyed: dict[str, list[Cut | Middle]] = {}
        for secret, value in _variants(values):
            for cut in range(MIN_FRAGMENT, len(value) - MIN_FRAGMENT + 1):
                keyed.setdefault(value[:cut], []).append((secret, cut, True))
                keyed.setdefault(value[cut:], []).append((secret, cut, False))
            if len(value) <= MAX_MIDDLE_VALUE:
                for start in range(MIN_FRAGMENT, len(value) - 2 * MIN_FRAGMENT + 1):
                    for stop in range(start + MIN_FRAGMENT, len(value) - MIN_FRAGMENT + 1):
                        keyed.setdefault(value[start:stop], []).append((secret, start, stop))
        #: ``(prefix, suffix, length)``: how long a part of each form, made of parts sent
        #: in separate texts, is a long enough run of the value's secret part (:mod:`._runs`),
        #: and the form's length
        self.enough: dict[int, tuple[int, int, int]] = {}
        for secret, value in values:
            core = _runs.core(value)
            if core is None:
                continue
            run = _runs.run_length(len(core))
            secret_part = _skeleton.body(value) or value
            head = len(value) - len(secret_part)  # the vendor prefix
            whole = (head + run, run, len(value))
            base = secret * VARIANTS
            self.enough[base] = self.enough[base + 2] = whole
            self.enough[base + 1] = (run, head + run, len(value))
            for form in range(_FORMS, VARIANTS):
                self.enough[base + form] = (run, run, len(secret_part))
        self._keys = list(keyed)
        self._cuts = [tuple(keyed[key]) for key in self._keys]
        self.empty = not self._keys
        self._automaton = (
            None
            if self.empty
            else ahocorasick_rs.BytesAhoCorasick(
                [key.encode("utf-8", "surrogatepass") for key in self._keys]
            )
        )

    def cuts(self, normal: str) -> Iterator[tuple[Cut | Middle, int, int]]:
        """``(cut, start, end)`` of every fragment in ``normal`` (character offsets), in order
        of their end, at most :data:`MAX_FRAGMENT_HITS`."""
        if self._automaton is None or not normal:
            return
        data = normal.encode("utf-8", "surrogatepass")
        found = self._automaton.find_matches_as_indexes(data, overlapping=True)
        ascii_text = len(data) == len(normal)
        for key, start, end in found[:MAX_FRAGMENT_HITS]:
            if not ascii_text:
                start = len(data[:start].decode("utf-8", "surrogatepass"))
                end = start + len(self._keys[key])
            for cut in self._cuts[key]:
                yield cut, start, end


#: The forms of a value whose parts are matched: as it is, reversed, rotated by 13 letters; and
#: the same forms of its body (the value without its vendor prefix: :func:`._skeleton.body`),
#: so the secret part alone, sent in parts, is found too.
_FORMS = 3
VARIANTS = 2 * _FORMS


def _variants(values: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Each value's forms, as values of their own numbered ``secret * VARIANTS + form``: each
    half reversed (or rotated) alone is then a part of the value reversed (or rotated)."""
    for secret, value in values:
        base = secret * VARIANTS
        secret_part = _skeleton.body(value)
        for offset, form in ((0, value), (_FORMS, secret_part)):
            if form is not None:
                yield base + offset, form
                yield base + offset + 1, form[::-1]
                yield base + offset + 2, codecs.encode(form, "rot13")


def _outermost(hits: list[FragmentHit]) -> list[FragmentHit]:
    """The hits less repeats and those inside another hit of the same value."""
    kept: list[FragmentHit] = []
    ends: dict[int, int] = {}
    for hit in sorted(set(hits), key=lambda h: (h.start, -h.end, h.secret)):
        if hit.end <= ends.get(hit.secret, -1):
            continue
        ends[hit.secret] = max(ends.get(hit.secret, -1), hit.end)
        kept.append(hit)
    return kept


@dataclass
class FragmentMemory:
    """The fragments a stream saw, in any of its texts so far."""

    seen: set[Cut] = field(default_factory=set)

    def scan(self, index: FragmentIndex, normal: str, runs: bool = False) -> list[FragmentHit]:
        """Split values completed by ``normal`` (the next text of the stream, normalised); with
        ``runs``, also a part long enough to be a run of a value, made of parts of this text
        and earlier ones (a middle part extending a prefix or suffix seen)."""
        hits: list[FragmentHit] = []
        here: dict[Cut, tuple[int, int]] = {}  # cut → span of its first occurrence in this text
        for cut, start, end in index.cuts(normal):
            if type(cut[2]) is int:  # a middle part: it extends a prefix or a suffix seen
                enough = index.enough.get(cut[0]) if runs else None
                if self._extend(cut, start, end, here, enough):
                    hits.append(FragmentHit(cut[0], start, end))
                continue
            secret, at, is_prefix = cut[0], cut[1], bool(cut[2])
            other = (secret, at, not is_prefix)
            pair = here.get(other)
            if pair is not None and pair[1] <= start:
                # earlier in the same text, before this part: both parts are the value's
                hits.append(FragmentHit(secret, pair[0], pair[1]))
                hits.append(FragmentHit(secret, start, end))
            elif other in self.seen:
                hits.append(FragmentHit(secret, start, end))
            here.setdefault((secret, at, is_prefix), (start, end))
        self.seen.update(here)
        found = [FragmentHit(hit.secret // VARIANTS, hit.start, hit.end) for hit in hits]
        return _outermost(found)

    def _extend(
        self,
        middle: Cut | Middle,
        start: int,
        end: int,
        here: dict[Cut, tuple[int, int]],
        enough: tuple[int, int, int] | None,
    ) -> bool:
        """A middle ``value[a:b]`` after the prefix ``value[:a]`` is the prefix ``value[:b]``;
        before the suffix ``value[b:]`` (the parts in reverse order) the suffix ``value[a:]``.
        True when the part so made is ``enough`` (prefix, suffix) to be a run of the value."""
        secret, first, last = middle[0], middle[1], int(middle[2])
        long_enough = False
        for known, made in (
            ((secret, first, True), (secret, last, True)),
            ((secret, last, False), (secret, first, False)),
        ):
            span = here.get(known)
            if (span is not None and span[1] <= start) or known in self.seen:
                here.setdefault(made, (start, end))
                if enough is not None and span is None:  # the parts came in separate texts
                    size = last if made[2] else enough[2] - first
                    long_enough |= size >= (enough[0] if made[2] else enough[1])
        return long_enough

    def reset(self) -> None:
        """Forget every earlier text."""
        self.seen.clear()
