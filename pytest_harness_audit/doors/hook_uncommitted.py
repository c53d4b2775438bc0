"""The owner's uncommitted work, carried between the hook door's processes.

Each host event is a process of its own, so the session's start that
:class:`~pytest_harness_audit.inspect.uncommitted.UncommittedWork` takes the owner's uncommitted
changes at (the first workspace snapshot) is in an earlier process than the calls it judges.
The door keeps that work in the store, out of the agent's reach, one file a session and
workspace root (``hook-uncommitted/uncommitted-<session>-<root hash>.json``, written whole):

* the session's first ``pre`` that snapshots the workspace takes it (one ``git status``; a
  clean repository keeps nothing more) and keeps it, unless one is kept already;
* every ``post`` whose call pre snapshotted takes it up, judges the call (``discarded``,
  ``discardedAll``, as every door) and keeps what the call changed of it: the files thrown
  away or given back, and the places (commits, the index) still holding a change put away, so
  ``git stash`` in one call and ``git stash drop`` in a later one is judged at the drop.

One process at a time reads, judges and writes it (a lock file beside it), so a parallel event
never meets it half kept. The name of each kept state is noted in the session's continuity
witness (:mod:`.hook_between_kept`), as :func:`~.hook_between_kept.keep_noted` orders it: a
first state once written (an event that could not write it, or was stopped before, kept
nothing), a later one's digest before its bytes. A state the witness names and the store no
longer holds was deleted, which is a ``tamper_attempt`` judged FAIL; one that cannot be read (or
lies past the bounds of :mod:`~.inspect.uncommitted`) leaves the call's loss unknown: alert
``effects_unavailable``, WARN when the policy judges effects. Either way the call's record says
so in one line, and the work is taken anew after the call.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.atomic_file import read_own_file, replace_file
from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.audit.locking import exclusive, open_lock_file
from pytest_harness_audit.audit.storage import StorageLayout, sanitize_session_id
from pytest_harness_audit.doors.hook_between_kept import (
    STATE_DELETED,
    STATE_REWRITTEN,
    note_kept,
    rewritten,
    was_kept,
)
from pytest_harness_audit.gate.seam import NO_FINDINGS, CallFindings, Outcome
from pytest_harness_audit.gate.store_guard import TAMPER_ALERT
from pytest_harness_audit.inspect import EFFECTS_UNAVAILABLE
from pytest_harness_audit.inspect.effect_set import Effects
from pytest_harness_audit.inspect.uncommitted import UncommittedWork
from pytest_harness_audit.policy import Policy

#: The store's folder of the kept work.
STATE_FOLDER = "hook-uncommitted"
#: A kept state larger than this is not read (the bounds of :mod:`~.inspect.uncommitted` keep
#: a real one far smaller).
MAX_STATE_BYTES = 16 << 20


def state_path(storage: str | os.PathLike[str], session_id: str, root: str) -> Path:
    """Where the session's uncommitted work of the workspace ``root`` is kept in the store."""
    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = f"uncommitted-{sanitize_session_id(session_id)}-{digest}.json"
    return Path(storage) / STATE_FOLDER / name


class _Unusable(Exception):
    """The kept work cannot be used; ``deleted``: it is gone although the witness noted it."""

    def __init__(self, why: str, *, deleted: bool = False) -> None:
        super().__init__(why)
        self.deleted = deleted


class HookUncommitted(UncommittedWork):
    """:class:`UncommittedWork` kept in the store between events (module doc), and the seam
    inspector that reports, in the call's record, a kept work that could not be used."""

    def __init__(
        self,
        root: str,
        policy: Policy,
        storage: str | os.PathLike[str],
        session_id: str | None,
    ) -> None:
        super().__init__(learns=session_id is not None)
        self.policy = policy
        self.storage = os.fspath(storage)
        self.session_id = session_id or ""
        self.path = state_path(storage, self.session_id, root)
        #: Why the kept work could not be used at this post (``None``: it could).
        self.problem: _Unusable | None = None
        self._read: bytes | None = None  # the kept state as read

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The lock of the kept work (``OSError``, or ``ChainError`` when held for long)."""
        StorageLayout.at(self.storage).ensure_dirs()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_lock_file(self.path.with_suffix(".lock"))
        try:
            with exclusive(fd):
                yield
        finally:
            os.close(fd)

    def learn(self, root: str) -> None:
        """At pre's snapshot: take and keep the work, unless the session kept one already (or
        kept one that is gone: the post says so)."""
        if not self.learns:
            return
        with contextlib.suppress(OSError, ChainError), self._locked():
            if os.path.lexists(self.path) or was_kept(self.storage, self.session_id, self.name):
                return
            super().learn(root)
            self._keep()

    @property
    def name(self) -> str:
        """The kept state's file name (what the witness notes)."""
        return self.path.name

    def _keep(self) -> None:
        data = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")).encode()
        if data == self._read:  # a call that changed none of it writes nothing
            note_kept(self.storage, self.session_id, self.name, data)
        elif os.path.lexists(self.path):  # its new digest before its bytes
            note_kept(self.storage, self.session_id, self.name, data)
            replace_file(self.path, data)
        else:  # a first one is noted once written: one never written was never kept
            replace_file(self.path, data)
            note_kept(self.storage, self.session_id, self.name, data)

    def _resume(self) -> bool:
        """Take up the kept work; ``False``: none was kept (:class:`_Unusable`: not usable)."""
        try:
            data = read_own_file(self.path)
        except FileNotFoundError:
            if was_kept(self.storage, self.session_id, self.name):
                raise _Unusable(f"{self.name}: {STATE_DELETED}", deleted=True) from None
            return False
        except OSError as exc:
            raise _Unusable(f"{self.name}: {type(exc).__name__}") from None
        if rewritten(self.storage, self.session_id, self.name, data):
            raise _Unusable(f"{self.name}: {STATE_REWRITTEN}", deleted=True)
        self._read = data
        if len(data) > MAX_STATE_BYTES:
            raise _Unusable(f"{self.name}: larger than {MAX_STATE_BYTES} bytes")
        try:
            self.resume(json.loads(data))
        except (ValueError, RecursionError) as exc:
            raise _Unusable(f"{self.name}: {exc}") from None
        return True

    def judged(
        self,
        root: str,
        effects: Effects,
        before: frozenset[str] | None,
        after: frozenset[str] | None,
    ) -> Effects:
        """At post: the call judged with the kept work, which is kept anew; a work none kept
        (pre could not write it) is taken now, after the call, for the calls to come."""
        found = effects
        if not self.learns:
            return found
        try:
            with self._locked():
                try:
                    resumed = self._resume()
                except _Unusable as exc:
                    self.problem = exc
                    resumed = False
                if resumed:
                    found = super().judged(root, effects, before, after)
                else:  # the work as the call left it: the next calls are judged
                    super().learn(root)
                self._keep()
        except (OSError, ChainError) as exc:  # what was judged stands, the problem is said
            if self.problem is None or not self.problem.deleted:  # a deletion is said first
                self.problem = _Unusable(f"{self.name}: {exc}")
        return found

    def before(self, tool: str, category: str, params: Mapping[str, Any]) -> object:
        """Nothing to look at before (:meth:`learn` runs at pre's snapshot)."""
        return None

    def after(
        self, token: object, tool: str, category: str, params: Mapping[str, Any], outcome: Outcome
    ) -> CallFindings:
        """The call's finding when the kept work could not be used (run after the workspace's
        inspection, whose :meth:`judged` found it)."""
        problem, self.problem = self.problem, None
        if problem is None:
            return NO_FINDINGS
        if problem.deleted:
            why = f"the uncommitted work's kept state was deleted or rewritten ({problem})"
            return CallFindings((TAMPER_ALERT,), {"unknown": why}, "FAIL", why, "effect")
        why = f"uncommitted work thrown away unknown: its kept state is unusable ({problem})"
        if self.policy.effect_rules:
            return CallFindings((EFFECTS_UNAVAILABLE,), {"unknown": why}, "WARN", why, "effect")
        return CallFindings((EFFECTS_UNAVAILABLE,), {"unknown": why})


__all__ = ["MAX_STATE_BYTES", "STATE_FOLDER", "HookUncommitted", "state_path"]
