"""What an audit record may hold: every string of it with the session's known secrets redacted.

Records are read by reviewers and kept as snapshots, so no field may carry a known secret in
clear — not only the parameters, but the tool name, the addresses and group names of a
message, an error that echoes the input, a ``reason`` quoting it, the effects naming files, the
immune records. :class:`RecordScrub` is the audit chain's draft hook
(``chain.builder.scrub``): it hands every string of a draft (mapping keys included, and every
number as its decimal text: a numeric secret passed as an ``int``) to

1. each inspector that can scrub (``scrub_all``: the workspace's known secrets in any form);
2. the session's :class:`~pytest_harness_audit.social.secret_ledger.SecretLedger` (the values
   noted from credential reads and added by the test);
3. the fragment pass: a run of :data:`MIN_FRAGMENT` or more characters of a token-like known
   value, past its vendor prefix, is replaced too. A value split over several messages (one
   half per message, or both halves with other text between them) then leaves no part of it in
   the chain, while a look-alike sharing only the public prefix (``sk-test-``) stays as it is.

Everything is replaced by ``[secret:<fingerprint>]``, as the parameters already were; a
container nested too deep is withheld
(:func:`~pytest_harness_audit.inspect.nested_strings.map_strings`).
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ahocorasick_rs

from pytest_harness_audit.audit.errors import AuditError
from pytest_harness_audit.audit.records import RecordDraft
from pytest_harness_audit.inspect._skeleton import body
from pytest_harness_audit.inspect.nested_strings import WITHHELD, map_strings
from pytest_harness_audit.inspect.secrets import (
    MIN_SECRET_LENGTH,
    REDACTION,
    SecretRegistry,
    fingerprint,
)
from pytest_harness_audit.social.secret_ledger import SecretLedger

#: A run of at least this many characters of a value's secret part is redacted (the length
#: from which the message firewall matches the parts of a split value).
MIN_FRAGMENT = 8
#: A value takes part in the fragment pass from this length (its vendor prefix left out).
MIN_FRAGMENT_VALUE = 16
#: Strings up to this long are remembered with what they scrub to, at most this many.
MEMO_TEXT = 512
MEMO_SIZE = 4096

_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~]+")
# the automaton reads UTF-8: a lone surrogate (a JSON ``"\ud800"`` escape) cannot be
# encoded, so it is read as U+FFFD (one character for one: the spans stay the text's)
_SURROGATE = re.compile("[\ud800-\udfff]")


def fragment_core(value: str) -> str | None:
    """The part of ``value`` whose runs are redacted: the value without its vendor prefix,
    when that is a token (letters and digits, no spaces or URL punctuation) of at least
    :data:`MIN_FRAGMENT_VALUE` characters; ``None`` for other values (a URL, a passphrase)."""
    core = body(value) or value
    if len(core) < MIN_FRAGMENT_VALUE or _TOKEN.fullmatch(core) is None:
        return None
    if not any(c.isdigit() for c in core) or not any(c.isalpha() for c in core):
        return None
    return core


class KeptSecrets(SecretRegistry):
    """A :class:`~pytest_harness_audit.inspect.secrets.SecretRegistry` that also keeps the
    values it learns for the fragment pass (in this process's memory only)."""

    def __init__(self) -> None:
        super().__init__()
        self._kept: list[str] = []

    def add(self, value: str, label: str = "added") -> str | None:
        """Know ``value`` from now on (see the registry's ``add``); return its fingerprint."""
        found = super().add(value, label)
        if found is not None and value not in self._kept:
            self._kept.append(value)
        return found

    def kept(self) -> tuple[str, ...]:
        """Every value added so far, oldest first."""
        return tuple(self._kept)


class FragmentPass:
    """Redacts runs of :data:`MIN_FRAGMENT` characters of known token-like values."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: tuple[str, ...] = ()
        self._automaton: ahocorasick_rs.AhoCorasick | None = None
        self._owners: list[str] = []

    def _current(self, values: tuple[str, ...]) -> ahocorasick_rs.AhoCorasick | None:
        with self._lock:
            if values != self._values:
                grams: dict[str, str] = {}
                for value in values:
                    core = fragment_core(value)
                    if core is None:
                        continue
                    marker = REDACTION.format(fingerprint=fingerprint(value))
                    for start in range(len(core) - MIN_FRAGMENT + 1):
                        grams.setdefault(core[start : start + MIN_FRAGMENT], marker)
                self._owners = list(grams.values())
                self._automaton = ahocorasick_rs.AhoCorasick(list(grams)) if grams else None
                self._values = values
            return self._automaton

    def redact(self, text: str, values: tuple[str, ...]) -> str:
        """``text`` with every run of a known value's core replaced by the value's marker."""
        automaton = self._current(values)
        if automaton is None or len(text) < MIN_FRAGMENT:
            return text
        readable = text if text.isascii() else _SURROGATE.sub("\ufffd", text)
        hits = automaton.find_matches_as_indexes(readable, overlapping=True)
        if not hits:
            return text
        spans: list[list[Any]] = []
        for gram, start, end in sorted(hits, key=lambda hit: hit[1]):
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end, self._owners[gram]])
        parts: list[str] = []
        at = 0
        for start, end, marker in spans:
            parts += [text[at:start], marker]
            at = end
        parts.append(text[at:])
        return "".join(parts)


class RecordScrub:
    """The draft hook of a session's audit chain (see the module doc).

    ``inspectors`` is the gate's list, read at each record (an inspector added later counts);
    ``ledger`` the session's noted secrets; ``kept`` the registry whose values the fragment
    pass uses (``None``: no fragment pass). Each distinct string is scrubbed once per record;
    with ``kept``, short strings (door names, reasons, rule tags) are remembered until a
    secret is added.
    """

    def __init__(
        self,
        inspectors: Sequence[object],
        ledger: SecretLedger | None = None,
        kept: KeptSecrets | None = None,
    ) -> None:
        self._inspectors = inspectors
        self._ledger = ledger
        self._kept = kept
        self._fragments = FragmentPass()
        self._lock = threading.Lock()
        self._memo: dict[str, str] = {}
        self._memo_key: tuple[int, int, int] | None = None

    def __call__(self, draft: RecordDraft) -> RecordDraft:
        """``draft`` with every string it holds (but its output, only hashed) scrubbed."""
        fields: list[Any] = [
            draft.tool,
            draft.category,
            draft.target,
            draft.targets,
            draft.params,
            draft.constraints,
            draft.error_message,
            draft.agent_id,
            draft.extra,
        ]
        texts: dict[str, str] = {}
        map_strings(fields, lambda text: texts.setdefault(text, text), numbers=True)
        done = self._scrubbed(list(texts))
        if WITHHELD not in texts and all(done[text] == text for text in texts):
            return draft
        tool, category, target, targets, params, constraints, error, agent, extra = map_strings(
            fields, done.__getitem__, numbers=True
        )
        return dataclasses.replace(
            draft,
            tool=tool,
            category=category,
            target=target,
            targets=tuple(targets),
            params=params,
            constraints=tuple(constraints),
            error_message=error,
            agent_id=agent,
            extra=extra,
        )

    def text(self, value: str) -> str:
        """``value`` as a record may hold it (every known secret in it redacted)."""
        return self._scrubbed([value])[value]

    def _scrubbed(self, texts: list[str]) -> dict[str, str]:
        """Each of ``texts`` as a record may hold it."""
        memo = self._current_memo()
        done: dict[str, str] = {}
        todo: list[str] = []
        for text in texts:
            known = memo.get(text) if memo is not None else None
            if known is not None:
                done[text] = known
            elif len(text) < MIN_SECRET_LENGTH:
                done[text] = text  # no form of a known value is this short
            else:
                todo.append(text)
        if not todo:
            return done
        results: Sequence[Any] = todo
        for scrub_all in self._scrubbers():
            results = scrub_all(list(results))
        values = self._values()
        for text, result in zip(todo, results, strict=True):
            if not isinstance(result, str):
                raise AuditError("a record's text could not be scrubbed")
            if self._ledger is not None:
                result = str(self._ledger.redact(result))
            if values:
                result = self._fragments.redact(result, values)
            done[text] = result
            if memo is not None and len(text) <= MEMO_TEXT:
                with self._lock:
                    if len(memo) >= MEMO_SIZE:
                        memo.clear()
                    memo[text] = result
        return done

    def _current_memo(self) -> dict[str, str] | None:
        """The remembered results, forgotten when a secret or an inspector was added."""
        if self._kept is None:
            return None
        ledger = len(self._ledger) if self._ledger is not None else 0
        key = (self._kept.generation, ledger, len(self._inspectors))
        with self._lock:
            if key != self._memo_key:
                self._memo = {}
                self._memo_key = key
            return self._memo

    def _scrubbers(self) -> Iterable[Callable[[list[Any]], Sequence[Any]]]:
        for inspector in list(self._inspectors):
            scrub_all = getattr(inspector, "scrub_all", None)
            if callable(scrub_all):
                yield scrub_all

    def _values(self) -> tuple[str, ...]:
        kept = self._kept.kept() if self._kept is not None else ()
        noted = tuple(s.value for s in self._ledger.items()) if self._ledger is not None else ()
        return kept + tuple(v for v in noted if v not in kept) if noted else kept
