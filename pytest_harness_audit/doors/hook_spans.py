"""The session's spans carried between the hook door's processes.

Each host event is a process of its own, so what the session's calls did together (tracked
files lost over several calls, commits left unnamed for a later call to prune:
:mod:`~pytest_harness_audit.inspect.spans`) would start empty at every ``post``. The door keeps
it in the session's continuity witness (:mod:`.hook_continuity`, key ``spans``), where the
pending files' seals live: outside the store, out of a project's reach, removed with its
session. A ``post`` takes it up before the call is judged and hands on what the call changed,
rebased on what parallel calls handed on meanwhile (one read, change and write under the
witness lock). A witness that cannot be read or written leaves the spans empty: the call is
judged on its own, as before.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from pytest_harness_audit.audit.continuity_files import (
    SPANS_KEY,
    WitnessUnreadable,
    read_witness,
    witness_lock,
    witness_path,
    write_witness,
)
from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.inspect import Inspector, SessionSpans


def _stored(storage: Path, session_id: str) -> SessionSpans:
    try:
        witness = read_witness(witness_path(storage, session_id))
    except WitnessUnreadable:
        return SessionSpans()
    return SessionSpans.from_json((witness or {}).get(SPANS_KEY))


def resume_spans(storage: Path, session_id: str, inspector: Inspector) -> SessionSpans:
    """Give ``inspector`` the session's spans; return them (the seed :func:`hand_on` needs)."""
    seed = _stored(storage, session_id)
    inspector.resume_spans(seed)
    return seed


def hand_on(storage: Path, session_id: str, inspector: Inspector, seed: SessionSpans) -> None:
    """Keep what the call changed of the spans it started from (``seed``) for the next."""
    spans = inspector.spans()
    if spans == seed:
        return
    path = witness_path(storage, session_id)
    with contextlib.suppress(OSError, ChainError), witness_lock(storage):
        try:
            witness = read_witness(path) or {}
        except WitnessUnreadable:
            witness = {}  # written anew, as the next event's note of it does
        stored = SessionSpans.from_json(witness.get(SPANS_KEY))
        merged = spans.rebased(seed, stored)
        write_witness(path, {**witness, SPANS_KEY: merged.to_json()})
