"""A long enough part of a secret sent on its own: a *run* of the value's secret characters.

Sending 24 of the 32 hexadecimal digits of a key leaves 32 bits to guess; the rest of the
matcher only finds a whole value, or one reassembled from parts (:mod:`._fragments`). So the
outgoing streams also look for runs of a value's *core* — the value without its public vendor
prefix (``sk-test-``, ``whsec_``: :func:`._skeleton.body`), when that is a token of letters and
digits of at least :data:`MIN_CORE` characters. A run counts from :func:`run_length` characters:
:data:`LONG_RUN` at most (half a 32-character key), and fewer for a short core — as many as
leave :data:`LEFT_TO_GUESS` characters unsent — but never fewer than :data:`MIN_RUN`. Showing
the last four characters of a key (``…3f8c``), as dashboards do, is no run; nor is a commit id.

Runs are matched on the skeleton of the text (letters and digits, lower-cased: separators,
spaces and zero-width characters between the characters do not hide a run), written forwards,
backwards or through ROT13, with Unicode look-alikes folded first, and on from the skeleton of
the texts sent just before it: a key sent ten characters a message is refused once the run is
long enough, not only at its last part. Every other character of a core (``key[::2]``) is a
run too, and a text is also read taking every second … eighth character (up to seven
characters of filler after each one of the key, ``4abcfabc9abc…``). A payload about to leave
is also read, when nothing else is found, in its decodings: percent-encoding, character
escapes, and the texts its encodings give, layer by layer (base64, hex, base32 …:
:func:`._layers.scan_layers` collects them as it decodes, so this costs no decoding of its
own). One
Aho–Corasick automaton holds every run of every value.

A stream's texts may also hold *pieces* of a value in any order, with other text between them
(the last ten characters first, then the ten before them …): each part of a core at least
:data:`MIN_PIECE` characters long that a text holds — or of every second, third or fourth
character of it, from any place (``key[1::3]``) — is marked at its places in the core, in
the stream's :class:`PieceMemory`, and once the marked places make a run, the text that
completed it is a finding — the pieces are assembled by their position in the value, not by
send order. A whole word of a text shorter than a piece (:data:`MIN_WORD_PIECE` to seven
letters and digits between other characters: ``3f8c 1d7e 9b2a …``, the key's words last
first) is marked too when it is a part of one place of one value alone, in a text of at most
:data:`MAX_WORD_TEXT` such words, and is remembered for the next :data:`WORD_WINDOW` texts of
a stream of sends only. A text whose own pieces
make a run (the columns ``key[0::3] key[1::3] key[2::3]``
in one message) is a finding too, though no run of the value is in it as written — counting
only pieces at one place of the value (a core that repeats itself, ``cdefabcdefab…``, has
pieces at several, and a text holding one would seem to hold them all).
"""

from __future__ import annotations

import codecs
import collections
import re
import threading
from collections.abc import Iterator, Sequence
from urllib.parse import unquote

import ahocorasick_rs

from pytest_harness_audit.inspect import _columns, _escapes, _fold, _skeleton

#: A value's core takes part from this many characters (shorter values are matched whole).
MIN_CORE = 16
#: A run this long always counts.
LONG_RUN = 16
#: A run leaving at most this many characters of a shorter core unsent counts.
LEFT_TO_GUESS = 8
#: No run shorter than this counts.
MIN_RUN = 10
#: A run has at least this many distinct characters.
MIN_DISTINCT = 4
#: Characters of one text looked at for runs (its head).
RUN_SCAN = 1024 * 1024
#: Run hits looked at per text (a text repeating a run cannot cost more).
MAX_HITS = 4096
#: Pieces are also every second, third and fourth character of a core (from any place).
MAX_STRIDE = 4
#: Texts are also read taking every second … every eighth character: up to seven characters
#: of filler after each one (``4abcfabc9abc…``).
MAX_FILLER_STRIDE = 8

#: A part of a core marked in a stream's memory is at least this long (as a fragment is).
MIN_PIECE = 8
#: A whole word of a text (a run of ASCII letters and digits between other characters) this
#: long or longer, and shorter than :data:`MIN_PIECE`, is marked too when it is a part of one
#: place of a core: the key cut into words of four characters sent last word first.
MIN_WORD_PIECE = 3
#: A word marked so has at least this many distinct characters (not ``000``).
MIN_WORD_DISTINCT = 2
#: Such words are marked only in a text with at most this many words of their lengths: a hex
#: dump's hundreds of four-digit words hold some of a key's by chance.
MAX_WORD_TEXT = 64
#: A stream's short words make a run with those of this many texts before them only (its
#: longer pieces, with those of every text): a session's many record ids, each a few words of
#: four hex digits, hold some of a key's by chance, and would add up over it.
WORD_WINDOW = 32
#: A text is read in its decodings for runs only when it has this many characters: the
#: shortest run, base64-encoded.
MIN_ENCODED = 4 * -(-MIN_RUN // 3)

_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~]+")
#: A word of a text, as its skeleton keeps it.
_WORD = re.compile(r"[0-9A-Za-z]+")


def run_length(core: int) -> int:
    """How many characters of a core of ``core`` characters make a run."""
    return max(MIN_RUN, min(LONG_RUN, core - LEFT_TO_GUESS))


def core(value: str) -> str | None:
    """The skeleton of ``value``'s secret part when runs of it are matched (see the module
    doc), else ``None``."""
    part = _skeleton.body(value) or value
    if _TOKEN.fullmatch(part) is None:
        return None
    if not any(c.isdigit() for c in part) or not any(c.isalpha() for c in part):
        return None
    skeleton = _skeleton.skeleton(part)
    return skeleton if len(skeleton) >= MIN_CORE else None


def _written(part: str) -> tuple[str, ...]:
    """``part`` as written, backwards and through ROT13 (the spellings a run is found in)."""
    return (part, part[::-1], codecs.encode(part, "rot13"))


def _decodings(text: str, views: Sequence[str]) -> Iterator[str]:
    """The skeletons of ``text`` percent-decoded, with its character escapes decoded, and of
    ``views`` (the texts its encodings gave: :func:`._layers.scan_layers`)."""
    if "%" in text:
        yield _skeleton.skeleton_text(unquote(text))
    unescaped = _escapes.unescaped(text)
    if unescaped is not None:
        yield _skeleton.skeleton_text(unescaped[0])
    for view in views:
        yield _skeleton.skeleton_text(view)


def _grams(skeleton: str, size: int) -> Iterator[str]:
    for start in range(len(skeleton) - size + 1):
        gram = skeleton[start : start + size]
        if len(set(gram)) >= MIN_DISTINCT:  # not ``0000…``
            yield gram


class PieceMemory:
    """The places of each value's core a stream's texts held (see the module doc).

    Streams of several channels may share one (the inspector's: pieces sent by different
    channels make one run) and scan at once, each under its own lock only: every read and
    update of the places takes ``lock`` (the owner's, when it gives one).
    """

    def __init__(self, lock: threading.Lock | None = None) -> None:
        self.held: dict[int, bytearray] = {}
        self.lock = threading.Lock() if lock is None else lock
        #: ``(text, secret, places)`` of the short words of the latest texts (see
        #: :data:`WORD_WINDOW`), and how many texts were read for words
        self.words: collections.deque[tuple[int, int, range]] = collections.deque()
        self.texts = 0

    def reset(self) -> None:
        """Forget every place."""
        with self.lock:
            self.held.clear()
            self.words.clear()

    def add_words(
        self, found: dict[int, list[range]], sizes: dict[int, tuple[int, int]]
    ) -> set[int]:
        """Note the short words of one more text (``found``: places of each value's core);
        the values of which one of them is now part of a run, with the places held and the
        words of the latest :data:`WORD_WINDOW` texts."""
        made: set[int] = set()
        with self.lock:
            self.texts += 1
            while self.words and self.words[0][0] <= self.texts - WORD_WINDOW:
                self.words.popleft()
            for secret, words in found.items():
                length, size = sizes[secret]
                held = self._with_words(secret, self.held.get(secret, bytearray(length)))
                for places in words:
                    _mark(held, places)
                    self.words.append((self.texts, secret, places))
                if any(_longest(held, places) >= size for places in words):
                    made.add(secret)
        return made

    def add(self, secret: int, length: int, size: int, pieces: Sequence[range]) -> bool:
        """Mark ``pieces`` (places of ``secret``'s core of ``length`` characters) as held;
        whether one of them is now part of a run of ``size`` held places."""
        with self.lock:
            held = self.held.setdefault(secret, bytearray(length))
            for piece in pieces:
                _mark(held, piece)
            seen = self._with_words(secret, held)
            return any(_longest(seen, piece) >= size for piece in pieces)

    def _with_words(self, secret: int, held: bytearray) -> bytearray:
        """A copy of ``held`` with the places of ``secret``'s words in the window marked."""
        seen = bytearray(held)
        for _, other, places in self.words:
            if other == secret:
                _mark(seen, places)
        return seen

    def hold(self, secret: int, length: int, start: int, stop: int) -> None:
        """Mark the places ``start`` to ``stop`` of ``secret``'s core as held."""
        with self.lock:
            held = self.held.setdefault(secret, bytearray(length))
            held[start:stop] = b"\x01" * (stop - start)

    def runs(self) -> list[tuple[int, int, int, int]]:
        """``(secret, core length, start, stop)`` of every run of held places."""
        with self.lock:
            items = [(secret, bytes(held)) for secret, held in self.held.items()]
        found: list[tuple[int, int, int, int]] = []
        for secret, held in items:
            start = None
            for place, mark in enumerate([*held, 0]):
                if mark and start is None:
                    start = place
                elif not mark and start is not None:
                    found.append((secret, len(held), start, place))
                    start = None
        return found


Piece = tuple[int, int, int]
"""``(secret, place, step)``: a part of a core at every ``step``-th place from ``place``."""


def _places(place: int, step: int) -> range:
    return range(place, place + step * (MIN_PIECE - 1) + 1, step)


def _longest(held: bytearray, places: range) -> int:
    """The length of the longest run of held places through one of ``places`` (all held)."""
    longest = 0
    for at in places:
        start = stop = at
        while start > 0 and held[start - 1]:
            start -= 1
        while stop < len(held) and held[stop]:
            stop += 1
        longest = max(longest, stop - start)
    return longest


def _mark(held: bytearray, places: range) -> None:
    for at in places:
        held[at] = 1


def _placed(entries: tuple[Piece, ...]) -> frozenset[int]:
    """The values ``entries`` (a gram's places) place the gram at once only."""
    counts: dict[int, int] = {}
    for secret, _, _ in entries:
        counts[secret] = counts.get(secret, 0) + 1
    return frozenset(secret for secret, count in counts.items() if count == 1)


def _word_places(values: list[tuple[int, str]]) -> dict[str, tuple[int, int]]:
    """``word: (secret, place)`` for each part of a core shorter than a piece that is at one
    place of one value only (see :data:`MIN_WORD_PIECE`)."""
    seen: dict[str, set[tuple[int, int]]] = {}
    for secret, value in values:
        skeleton = core(value)
        if skeleton is None:
            continue
        for size in range(MIN_WORD_PIECE, MIN_PIECE):
            for start in range(len(skeleton) - size + 1):
                word = skeleton[start : start + size]
                if len(set(word)) >= MIN_WORD_DISTINCT:
                    seen.setdefault(word, set()).add((secret, start))
    return {word: next(iter(at)) for word, at in seen.items() if len(at) == 1}


def _alone(pieces: set[range], length: int, size: int) -> bool:
    """Whether ``pieces`` (each at one place of a core of ``length`` characters) make a run
    of ``size`` on their own."""
    here = bytearray(length)
    for piece in pieces:
        _mark(here, piece)
    return any(_longest(here, piece) >= size for piece in pieces)


class RunIndex:
    """The runs of a list of ``(secret, value)`` pairs, in one automaton."""

    def __init__(self, values: list[tuple[int, str]]) -> None:
        owners: dict[str, set[int]] = {}
        places: dict[str, list[Piece]] = {}
        #: each value's core length and run length
        self._sizes: dict[int, tuple[int, int]] = {}
        for secret, value in values:
            skeleton = core(value)
            if skeleton is None:
                continue
            size = run_length(len(skeleton))
            self._sizes[secret] = (len(skeleton), size)
            # pieces of the core, and of every second, third or fourth character of it (from
            # each place): ``key[0::3]``, ``key[1::3]``, ``key[2::3]`` sent apart make the key
            for step in range(1, MAX_STRIDE + 1):
                for phase in range(step):
                    part = skeleton[phase::step]
                    for start in range(len(part) - MIN_PIECE + 1):
                        gram = part[start : start + MIN_PIECE]
                        if len(set(gram)) >= MIN_DISTINCT:
                            piece = (secret, phase + step * start, step)
                            spellings = _written(gram) if step == 1 else (gram,)
                            for spelling in spellings:
                                places.setdefault(spelling, []).append(piece)
            # the core itself, and every other character of it (``key[::2]``), each also
            # backwards and rotated
            for part in (skeleton, skeleton[::2], skeleton[1::2]):
                for spelling in _written(part):
                    for gram in _grams(spelling, size):
                        owners.setdefault(gram, set()).add(secret)
            for spelling in _columns.transposed(value, skeleton):  # read column by column
                for gram in _grams(spelling, size):
                    owners.setdefault(gram, set()).add(secret)
        self._grams = list(owners)
        #: the length of the shortest run: a text shorter than it holds none
        self._shortest = min(map(len, self._grams), default=0)
        self._owners = [tuple(sorted(owners[gram])) for gram in self._grams]
        self.empty = not self._grams
        self._automaton = None if self.empty else ahocorasick_rs.AhoCorasick(self._grams)
        self._piece_grams = list(places)
        self._places = [tuple(places[gram]) for gram in self._piece_grams]
        # the values each gram is at one place of (a core repeating itself, ``cdefabcdefab…``,
        # has grams at several: such a gram alone does not say which part of it a text holds)
        self._placed = [_placed(entries) for entries in self._places]
        self._pieces = ahocorasick_rs.AhoCorasick(self._piece_grams) if places else None
        self._words = _word_places(values)

    def hits(
        self,
        text: str,
        before: str = "",
        memory: PieceMemory | None = None,
        views: Sequence[str] | None = None,
        *,
        words: bool = False,
    ) -> list[tuple[int, int, int]]:
        """``(secret, start, end)`` of the first run of each value found in ``text``; a run
        may begin in ``before`` (the skeleton of the texts sent just before it), and then
        starts at 0. With ``memory`` (a stream's), pieces of a value its earlier texts held in
        any order that this text completes to a run are found too (its whole words shorter
        than a piece only with ``words``: a stream of sends, not of what the model reads, where
        the words of many short dumps, each holding a few of a key's by chance, would add
        up); with ``views`` (a payload about
        to leave: the texts its encodings gave), runs in the text's decodings when nothing else
        is found."""
        if self._automaton is None or not text:
            return []
        text = text[:RUN_SCAN]
        skeleton = _skeleton.skeleton_text(text)
        found = self._hits(before, skeleton, text)
        if memory is not None:
            for secret, span in self._assembled(skeleton, text, memory, words).items():
                found.setdefault(secret, span)
        if not found and not text.isascii():
            # look-alike letters folded: the span is the whole text (positions do not map)
            skeleton = _skeleton.skeleton_text(_fold.fold(text))
            found = {secret: (0, len(text)) for secret in self._hits(before, skeleton, None)}
        if not found:
            # filler after each character (``s1x2y…``): the span is the whole text
            found = dict.fromkeys(self._filler_hits(skeleton), (0, len(text)))
        if views is not None and not found and len(text) >= MIN_ENCODED:
            # a run encoded (base64, hex, percent-encoded, escaped …): the whole text
            for view in _decodings(text, views):
                for secret in self._hits("", view, None):
                    found.setdefault(secret, (0, len(text)))
        return [(secret, start, end) for secret, (start, end) in found.items()]

    def _filler_hits(self, skeleton: str) -> list[int]:
        """The values with a run in a view of ``skeleton`` taking every second … eighth
        character, in the order the views and their matches come, each view's first
        :data:`MAX_HITS` matches read. The views are searched in one pass, joined by a space
        (no run holds one, so no match spans two views)."""
        views: list[str] = []
        for stride in range(2, MAX_FILLER_STRIDE + 1):
            if -(-len(skeleton) // stride) < self._shortest:
                break  # every view from here on is shorter than a run
            views.extend(skeleton[offset::stride] for offset in range(stride))
        if not views:
            return []
        assert self._automaton is not None
        ends: list[int] = []  # where each view ends in the joined text
        at = -1
        for view in views:
            at += len(view) + 1
            ends.append(at)
        found: dict[int, None] = {}
        index = 0
        read = 0  # matches read in the current view
        joined = " ".join(views)
        for gram, _, end in self._automaton.find_matches_as_indexes(joined, overlapping=True):
            while end > ends[index]:
                index += 1
                read = 0
            read += 1
            if read > MAX_HITS:
                continue
            for secret in self._owners[gram]:
                found.setdefault(secret)
        return list(found)

    def _hits(self, before: str, view: str, text: str | None) -> dict[int, tuple[int, int]]:
        assert self._automaton is not None
        found: dict[int, tuple[int, int]] = {}
        pieces = None
        carried = len(before)
        matches = self._automaton.find_matches_as_indexes(before + view, overlapping=True)
        for gram, start, end in matches[:MAX_HITS]:
            if end <= carried:
                continue  # found in the earlier texts alone
            for secret in self._owners[gram]:
                if secret in found:
                    continue
                if text is None:
                    found[secret] = (0, 0)
                    continue
                if pieces is None:
                    pieces = _skeleton.skeleton_pieces(text)
                first = pieces.start(start - carried) if start >= carried else 0
                found[secret] = (first, pieces.end(end - carried))
        return found

    def _word_hits(self, text: str) -> tuple[list[tuple[int, range, int, int]], int]:
        """``(secret, places, start, end)`` of each whole word of ``text`` (start and end in
        its skeleton) shorter than a piece that is a part of one place of a core alone, and
        how many words of those lengths the text has."""
        hits: list[tuple[int, range, int, int]] = []
        if not self._words:
            return hits, 0
        at = short = 0
        for count, match in enumerate(_WORD.finditer(text)):
            if count >= MAX_HITS:
                break
            width = match.end() - match.start()
            if MIN_WORD_PIECE <= width < MIN_PIECE:
                short += 1
                place = self._words.get(match.group().lower())
                if place is not None:
                    hits.append((place[0], range(place[1], place[1] + width), at, at + width))
            at += width
        return hits, short

    def _assembled(
        self, skeleton: str, text: str, memory: PieceMemory, words: bool
    ) -> dict[int, tuple[int, int]]:
        """The values whose pieces in ``skeleton`` make a run, alone or with the places
        ``memory`` held, with the span of their pieces in ``text``. Only pieces shorter than a
        run are remembered: a text holding a run (or the whole value) is a finding of its own,
        and a value read whole must not make every later piece of it a finding. Whole words
        shorter than a piece make a run in this text, and are remembered with ``words`` only."""
        if self._pieces is None:
            return {}
        spans: dict[int, tuple[int, int]] = {}
        places: dict[int, set[range]] = {}
        placed: dict[int, set[range]] = {}  # the pieces at one place of their value
        matches = self._pieces.find_matches_as_indexes(skeleton, overlapping=True)
        for gram, start, end in matches[:MAX_HITS]:
            for secret, place, step in self._places[gram]:
                places.setdefault(secret, set()).add(_places(place, step))
                if secret in self._placed[gram]:
                    placed.setdefault(secret, set()).add(_places(place, step))
                first, last = spans.get(secret, (start, end))
                spans[secret] = (min(first, start), max(last, end))
        word_hits, short_words = self._word_hits(text)
        if short_words > MAX_WORD_TEXT:
            word_hits = []
        short_words_of: dict[int, list[range]] = {}  # remembered in a window of their own
        for secret, word, start, end in word_hits:
            places.setdefault(secret, set()).add(word)
            short_words_of.setdefault(secret, []).append(word)
            placed.setdefault(secret, set()).add(word)
            first, last = spans.get(secret, (start, end))
            spans[secret] = (min(first, start), max(last, end))
        found: dict[int, tuple[int, int]] = {}
        pieces = None
        made_of_words = memory.add_words(short_words_of, self._sizes) if words else set()
        forgotten = {word for found_words in short_words_of.values() for word in found_words}
        for secret, at in places.items():
            length, size = self._sizes[secret]
            here = bytearray(length)
            for piece in at:
                _mark(here, piece)
            short = [
                piece for piece in at if _longest(here, piece) < size and piece not in forgotten
            ]
            made = _alone(placed.get(secret, set()), length, size)
            if short:
                made = memory.add(secret, length, size, short) or made
            if made or secret in made_of_words:
                if pieces is None:
                    pieces = _skeleton.skeleton_pieces(text)
                start, end = spans[secret]
                found[secret] = (pieces.start(start), pieces.end(end))
        return found
