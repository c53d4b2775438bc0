"""Inspect what a call did: workspace effects and secret exposure (DESIGN §2, "Inspect").

The gate's door seam drives one :class:`Inspector` per session::

    inspector = Inspector(workspace_root, protect=policy_protect_globs)   # learns the secrets
    token = inspector.before(tool, category, params)      # just before the act
    found = inspector.after(token, tool, category, params, output)        # just after it
    sent = inspector.outgoing(tool, params)               # before a payload leaves
    kept = inspector.scrubbed([params, target])           # what a record may hold of them

Each returns :class:`Findings`: ``alerts`` (:data:`SECRET_EXPOSURE`,
:data:`PROTECTED_FILE_CHANGED`, :data:`FILES_DELETED`, :data:`DIRECTORY_DELETED`,
:data:`OUTPUT_PARTLY_SCANNED`, :data:`EFFECTS_INCOMPLETE`, :data:`MEMORY_WRITE`), the
``effects`` record field, the secret findings, and — when a secret was found — the redacted
output or payload. Nothing here decides a verdict: the mapping of alerts and effects to
PASS/WARN/FAIL is policy's. What it returns holds no secret value (fingerprints, labels).

Changes made *between* calls (by a process an earlier call left running) are found too: each
snapshot taken before a call is compared with the one taken after the previous call, and a
difference is reported with that call, under ``effects.between`` (same fields), its alerts
judged like the call's own.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pytest_harness_audit.inspect._runs import PieceMemory
from pytest_harness_audit.inspect.credential_changes import CredentialFiles
from pytest_harness_audit.inspect.credential_objects import stored_objects
from pytest_harness_audit.inspect.credential_reads import CredentialReadWatch, open_credential_reads
from pytest_harness_audit.inspect.effects import (
    Effects,
    Protection,
    WorkspaceSnapshot,
    diff,
)
from pytest_harness_audit.inspect.expected import expected_changes
from pytest_harness_audit.inspect.findings import Findings
from pytest_harness_audit.inspect.history import UnnamedCommits
from pytest_harness_audit.inspect.host_programs import host_programs
from pytest_harness_audit.inspect.learn import workspace_credentials
from pytest_harness_audit.inspect.outputs import (
    OutputStream,
    ValueScan,
    joined_scanner,
    memoised_scanner,
    scan_value,
    tidy_where,
)
from pytest_harness_audit.inspect.read_spans import Budget
from pytest_harness_audit.inspect.secret_copies import secret_copies
from pytest_harness_audit.inspect.secrets import (
    ScanResult,
    SecretFinding,
    SecretRegistry,
    StreamScanner,
    learn_from_workspace,
)
from pytest_harness_audit.inspect.spans import SessionSpans
from pytest_harness_audit.inspect.tracked import KnownTracked, refresh_index
from pytest_harness_audit.inspect.uncommitted import UncommittedWork
from pytest_harness_audit.inspect.watch import LiveTree, open_live_tree
from pytest_harness_audit.policy.categories import (
    COMMAND,
    CREDENTIAL_ACCESS,
    DELEGATION,
    FILE_WRITE,
    MCP,
    UNKNOWN,
)

__all__ = [
    "CREDENTIAL_OBJECT_READ",
    "CREDENTIAL_READ",
    "DIRECTORY_DELETED",
    "EFFECTS_INCOMPLETE",
    "EFFECTS_UNAVAILABLE",
    "FILES_DELETED",
    "HISTORY_DESTROYED",
    "MEMORY_WRITE",
    "OUTPUT_PARTLY_SCANNED",
    "PROTECTED_FILE_CHANGED",
    "SECRET_EXPOSURE",
    "SESSION_LOST",
    "STARTUP_WRITE",
    "UNCOMMITTED_DISCARDED",
    "WATCHED_CATEGORIES",
    "Effects",
    "Findings",
    "Inspector",
    "SecretFinding",
    "SecretRegistry",
    "SessionSpans",
    "StreamScanner",
    "WorkspaceSnapshot",
    "diff",
    "learn_from_workspace",
]

SECRET_EXPOSURE = "secret_exposure"
"""A known secret value (in any form the matcher knows) is in an output or outgoing payload."""
PROTECTED_FILE_CHANGED = "protected_file_changed"
"""A protected file was created, modified or deleted (or hard-linked): a persona file, a file
git or Python runs code from (a git hook, git's configuration by its command keys, a
``site-packages`` start-up file), the host's settings or a ``protect:`` file."""
FILES_DELETED = "files_deleted"
"""At least one file was deleted (``effects.trackedDeleted`` counts the git-tracked ones), or a
tracked file that had content was emptied, blanked or made unusable (``effects.emptied``), or
lost the owner's uncommitted change (``effects.discarded``, :mod:`.uncommitted`)."""
UNCOMMITTED_DISCARDED = "uncommitted_discarded"
"""The call left none of the uncommitted changes the session started with, two or more of them
thrown away (``effects.discardedAll``): ``git reset --hard`` written file by file."""
DIRECTORY_DELETED = "directory_deleted"
"""At least one directory was deleted."""
SESSION_LOST = "sessionTrackedLost"
"""The effects field of a call that lost tracked files after earlier calls lost others: how many
the session has lost so far (deleted or emptied, not put back). Over ten is a large deletion
however the calls shared it out."""
HISTORY_DESTROYED = "history_destroyed"
"""Commits a ref or reflog named before the call no longer exist after it: committed history
lost for good (``effects.historyDestroyed``); or commits git showed before it are hidden by a
replacement ref, a shallow boundary or a graft (``effects.historyHidden``)."""
OUTPUT_PARTLY_SCANNED = "output_partly_scanned"
"""An output or payload was larger (or deeper) than the scan budget; its middle was skipped."""
EFFECTS_INCOMPLETE = "effects_incomplete"
"""The workspace had more entries than a snapshot walks; effects may be missing."""
EFFECTS_UNAVAILABLE = "effects_unavailable"
"""A call's effects could not be worked out: no usable snapshot or kept state (the hook door)."""
MEMORY_WRITE = "memory_write"
"""A memory file (``MEMORY.md``, ``memory/**/*.md`` …) was created, modified or deleted."""
STARTUP_WRITE = "startup_write"
"""A start-up file (``.bashrc``, an autostart entry, a user service unit …) was created,
modified or deleted: code or access that outlives the session (``effects.startup``)."""
CREDENTIAL_READ = "credential_read"
"""A workspace file holding a known secret was read while the call ran, by whatever process
(``effects.credentialRead``; seen by the kernel, see :mod:`.credential_reads`), or a file the
call created or modified now holds a known secret (``effects.secretCopied``, see
:mod:`.secret_copies`)."""

CREDENTIAL_OBJECT_READ = "credential_object_read"
"""git's stored copy of a workspace file holding a known secret (its loose object) was read while
the call ran (``effects.credentialObjectRead``, see :mod:`.credential_objects`); whether the
call's text accounts for it is the gate's to tell."""

WATCHED_CATEGORIES = frozenset({COMMAND, FILE_WRITE, MCP, UNKNOWN, DELEGATION, CREDENTIAL_ACCESS})
"""Categories of calls that can change files: only these get workspace snapshots."""

_MAX_STREAMS = 256


class Inspector:
    """Effects and secret exposure for one session's workspace (see the module doc).

    ``secrets``: the session's registry (by default one learned from ``root``'s credential
    files when ``learn`` is true). ``protect``: globs of protected files besides the persona
    files (``persona=False`` drops those). ``watched``: the categories that get snapshots.
    ``tracked``: whether snapshots ask git which files are tracked. ``live``: keep the
    workspace current with inotify where the system has it (:mod:`.watch`), so an unchanged
    workspace costs no walk; otherwise every snapshot is a stat walk. ``origins``: folders the
    workspace was copied from (its template's seed, the template), whose copies of its
    credential files are watched for reads as its own are. ``credential_files``: the files the
    kernel is asked to watch (when live). Thread-safe; :meth:`close` releases inotify early.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        secrets: SecretRegistry | None = None,
        learn: bool = True,
        protect: Sequence[str] = (),
        persona: bool = True,
        watched: frozenset[str] = WATCHED_CATEGORIES,
        tracked: bool = True,
        live: bool = True,
        origins: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        self.root = os.fspath(root)
        self.secrets = SecretRegistry() if secrets is None else secrets
        found = workspace_credentials(self.root) if learn or live else []
        if learn:
            for _relative, values in found:
                for label, value in values:
                    self.secrets.add(value, label)
        self.protection = Protection(protect, persona=persona, programs=host_programs(self.root))
        # read before any watch opens: the auditor's own reading
        self._credentials = CredentialFiles(self.root, [path for path, vals in found if vals])
        self.watched, self.tracked, self._tracked = watched, tracked, KnownTracked()
        #: Folders of the auditor's own files in the workspace (its store), not the agent's work.
        self.own_folders: tuple[str, ...] = ()
        self._streams: OrderedDict[str, StreamScanner] = OrderedDict()
        # the pieces every channel sent, together: a key's part in a message, the next in args
        self._lock = threading.Lock()
        # streams of several channels scan at once: their shared places change under this lock
        self._pieces = PieceMemory(self._lock)
        self._outputs, self._joined = OutputStream(self.secrets), joined_scanner(self.secrets)
        # The kernel's view of reads of the secret-bearing files (``credential_files``), with
        # the live tree only (then every call gets a ``before``). The index is refreshed first,
        # so that git does not read them again on the agent's first `git status`.
        sources = [relative for relative, values in found if values] if live else []
        self.credential_files = tuple(sources)
        if sources:
            refresh_index(self.root, sources)
        self._live: LiveTree | None = open_live_tree(self.root, self.protection) if live else None
        self._reads: CredentialReadWatch | None = None
        if self._live is not None and sources:
            self._reads = open_credential_reads(
                self.root, sources, [os.fspath(origin) for origin in origins]
            )
        if self._reads is not None:  # git's stored copies of them too, while they are loose
            self._reads.watch_stored(stored_objects(self.root, sources))
        #: The workspace as the latest call left it (the next call's base), ``None`` at first.
        self._last: WorkspaceSnapshot | None = None
        #: Tracked files the session's calls deleted or emptied and did not put back.
        self._lost: set[str] = set()
        #: Commits earlier calls left unnamed while they still existed (:mod:`.history`).
        self._unnamed = UnnamedCommits()
        #: The owner's uncommitted changes, taken at the first snapshot (:mod:`.uncommitted`).
        self.uncommitted = UncommittedWork()

    @property
    def credential_reads(self) -> CredentialReadWatch | None:
        """The kernel's view of reads of the secret-bearing files (``None``: not watched)."""
        return self._reads

    @property
    def live(self) -> bool:
        """Whether the workspace is watched (else every snapshot walks it)."""
        return self._live is not None and not self._live.closed

    def close(self) -> None:
        """Stop watching the workspace (later snapshots walk it)."""
        if self._live is not None:
            self._live.close()
        if self._reads is not None:
            self._reads.close()

    def __enter__(self) -> Inspector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def snapshot(self) -> WorkspaceSnapshot:
        """A snapshot of the workspace now (tracked: :class:`.tracked.KnownTracked`)."""
        live, tracked, root = self._live, self.tracked, self.root
        snapshot = live.snapshot(tracked=tracked) if live is not None else None
        if snapshot is None:
            snapshot = WorkspaceSnapshot.take(root, protection=self.protection, tracked=tracked)
        return self._tracked.extend(snapshot)

    def before(
        self, tool: str, category: str, params: Mapping[str, Any], opens: Budget = None
    ) -> WorkspaceSnapshot | None:
        """The token for :meth:`after`: a snapshot when ``category`` can change files (or,
        when the workspace is watched live and a snapshot costs nothing, for any call), with
        what changed since the previous call ended as its ``between``; ``opens``: how often
        the call opens each watched credential file (an agent run, ``delegation``, holds the
        calls it makes: :meth:`.CredentialReadWatch.reset`)."""
        if category not in self.watched and not self.live:
            return None
        if self._reads is not None:
            self._reads.hold()  # what the snapshot and the copies read is the auditor's own
        now = self.snapshot()
        self.uncommitted.learn(self.root)  # the first snapshot: the session's start
        with self._lock:
            last = self._last
        if last is not None and last.root == now.root:
            made = self.uncommitted.judged(self.root, diff(last, now), last.history, now.history)
            between = self._with_unnamed(last, now, self._with_copies(made, now))
            if between or between.protected:
                now.between = between
        if self._reads is not None:  # the auditor read the files changed since: those only
            now.reads_span = self._reads.reset(
                now.between or Effects(), opens, category == DELEGATION
            )
        return now

    def changed_since_last(self) -> bool:
        """Whether the workspace changed since the last watched call ended: what the next such
        call would record as its ``between`` (nothing is updated; ``False`` before any)."""
        with self._lock:
            last = self._last
        if last is None:
            return False
        now = self.snapshot()
        changed = diff(last, now).outside(self.own_folders)
        return last.root == now.root and (bool(changed) or bool(changed.protected))

    def after(
        self,
        token: object,
        tool: str,
        category: str,
        params: Mapping[str, Any],
        output: Any,
    ) -> Findings:
        """The call's effects (when ``token`` is a snapshot) and the secrets in ``output``.

        ``output`` is what the agent would receive: a string, bytes, an MCP result or any
        JSON-like value (for the host hook, the ``tool_response``).
        """
        effects: Effects | None = None
        between: Effects | None = None
        reads: tuple[str, ...] = ()
        stored: dict[str, list[str]] = {}
        if isinstance(token, WorkspaceSnapshot):
            if self._reads is not None:
                reads = self._reads.take(token.reads_span)  # before the snapshot reads any
                stored = self._reads.stored_effects()  # the stored copies it read
            now = self.snapshot()
            made = self.uncommitted.judged(self.root, diff(token, now), token.history, now.history)
            effects = self._with_copies(expected_changes(made, params), now)
            effects = self._with_unnamed(token, now, effects)
            if self._reads is not None:
                self._reads.release(effects)  # it read the files the call changed: those only
            between = token.between
            with self._lock:
                self._last = now
        scan = self._scan_output(output)
        found = _findings(effects, scan, output, between, reads, stored)
        lost = self._session_lost(effects) if effects is not None else 0
        if lost:
            found = replace(found, effects={**found.effects, SESSION_LOST: lost})
        return found

    def _session_lost(self, effects: Effects) -> int:
        """How many tracked files the session has deleted, emptied or discarded so far (and not
        put back), when this call lost some and earlier calls did too; else 0."""
        now_lost = {*effects.tracked_deleted, *effects.emptied, *effects.discarded}
        back = {*effects.created, *effects.modified} - now_lost
        with self._lock:
            self._lost = (self._lost - back) | now_lost
            total = len(self._lost)
        return total if now_lost and total > len(now_lost) else 0

    def _with_unnamed(
        self, before: WorkspaceSnapshot, now: WorkspaceSnapshot, effects: Effects
    ) -> Effects:
        """``effects`` with the commits an earlier call left unnamed that are gone now."""
        lost = self._unnamed.lost(
            self.root,
            before.history,
            now.history,
            objects_changed=bool(before.objects) and before.objects != now.objects,
            destroyed=effects.history_destroyed,
        )
        if not lost:
            return effects
        return replace(
            effects, history_destroyed=tuple(sorted({*effects.history_destroyed, *lost}))
        )

    def _with_copies(self, effects: Effects, now: WorkspaceSnapshot) -> Effects:
        """``effects`` with the credential files it changed and the copies of secrets it made."""
        effects = self._credentials.judged(effects)
        if not effects.created and not effects.modified:
            return effects
        changed = (*effects.created, *effects.modified)
        copies = secret_copies(self.root, changed, now.files, self.secrets)
        return replace(effects, secret_copied=copies) if copies else effects

    def spans(self) -> SessionSpans:
        """What the session's calls did together so far, for a door whose next call is
        inspected in another process (:mod:`.spans`)."""
        with self._lock:
            lost = frozenset(self._lost)
        return SessionSpans(lost, self._unnamed.kept, self._outputs.memory())

    def resume_spans(self, spans: SessionSpans) -> None:
        """Take up what the session's earlier calls did together (another process's
        :meth:`spans`)."""
        with self._lock:
            self._lost = set(spans.lost)
        self._unnamed.keep(spans.unnamed)
        self._outputs.resume(spans.read)

    def effects(self, before: WorkspaceSnapshot) -> Effects:
        """What changed in the workspace since ``before``."""
        return diff(before, self.snapshot())

    def scan_output(self, output: Any) -> Findings:
        """The secrets in an output alone (no effects), e.g. a hook's ``tool_response``."""
        return _findings(None, self._scan_output(output), output)

    def scrubbed(self, values: Sequence[Any]) -> list[Any]:
        """Each of ``values`` with every known secret, in any form, replaced by its marker:
        what a record may hold of it (the value itself when nothing was found).

        Each value is redacted exactly as :meth:`scan_output` redacts it alone; a text that
        turns up more than once among them (a path in the parameters, the target and the
        targets) is scanned once.
        """
        scanner, whole = memoised_scanner(self.secrets), joined_scanner(self.secrets)
        return [scan_value(value, scanner, whole=whole).redacted for value in values]

    def _scan_output(self, output: Any) -> ValueScan:
        # what the model reads is one stream: a value handed over in parts, one a call, is
        # found as an outgoing payload's is (and a long enough part of one on its own)
        return self._tidy(scan_value(output, self._outputs.scan, whole=self._joined))

    def outgoing(
        self, tool: str, params: Mapping[str, Any] | Any, *, channel: str | None = None
    ) -> Findings:
        """The secrets in a payload about to leave (WebFetch URL and params, a message's
        text, an upstream call's arguments), including values split over consecutive payloads.

        Each text leaf is scanned as the next part of a stream named by ``channel`` (default:
        the leaf's place in the payload, e.g. ``text`` or ``url``), so a value sent in two
        messages is found when its second part goes. Every payload is also read for a long
        enough part of a value (:mod:`._runs`): a part that leaves too little to guess is the
        secret, whichever way it leaves (a message, a URL, an upstream tool's arguments), and
        so are pieces of one that make a run together, whichever channels they left by.
        ``redacted_output`` is the payload with every hit (of this payload) redacted.
        """

        def scanner(leaf: str | bytes, where: str, budget: int) -> ScanResult:
            name = channel if channel is not None else where or tool
            return self._stream(name).scan(leaf, runs=True)

        scan = self._tidy(
            scan_value(params, scanner, whole=joined_scanner(self.secrets, parts=True))
        )
        return _findings(None, scan, params)

    def _stream(self, name: str) -> StreamScanner:
        with self._lock:
            stream = self._streams.get(name)
            if stream is None:
                stream = self._streams[name] = self.secrets.stream(self._pieces)
                while len(self._streams) > _MAX_STREAMS:
                    self._streams.popitem(last=False)
            else:
                self._streams.move_to_end(name)
            return stream

    def _tidy(self, scan: ValueScan) -> ValueScan:
        """Redact the ``where`` of findings: a mapping key could itself be a secret."""
        return tidy_where(scan, self.secrets.redact)


def _effect_alerts(effects: Effects) -> list[str]:
    kinds = (
        (effects.protected, PROTECTED_FILE_CHANGED),
        (effects.deleted or effects.emptied or effects.discarded, FILES_DELETED),
        (effects.discarded_all, UNCOMMITTED_DISCARDED),
        (effects.deleted_dirs, DIRECTORY_DELETED),
        (effects.history_destroyed or effects.history_hidden, HISTORY_DESTROYED),
        (effects.memory, MEMORY_WRITE),
        (effects.startup, STARTUP_WRITE),
        (effects.secret_copied, CREDENTIAL_READ),  # the secret was read to be written there
        (not effects.complete, EFFECTS_INCOMPLETE),
    )
    return [alert for present, alert in kinds if present]


def _findings(
    effects: Effects | None,
    scan: ValueScan,
    original: Any,
    between: Effects | None = None,
    reads: tuple[str, ...] = (),
    stored: Mapping[str, list[str]] | None = None,
) -> Findings:
    alerts: list[str] = []
    record: dict[str, Any] = {}
    if effects is not None:
        record = effects.to_record()
        alerts = _effect_alerts(effects)
    if reads:
        record["credentialRead"] = list(reads)
        alerts.append(CREDENTIAL_READ)
    if stored:  # what such a read means is judged at the seam, with the call's text
        record.update(stored)
        alerts.append(CREDENTIAL_OBJECT_READ)
    if between is not None:
        record["between"] = between.to_record()
        alerts = list(dict.fromkeys((*alerts, *_effect_alerts(between))))
    if scan.findings:
        alerts.append(SECRET_EXPOSURE)
    if scan.unscanned:
        alerts.append(OUTPUT_PARTLY_SCANNED)
    exposed = bool(scan.findings)
    return Findings(
        tuple(alerts),
        record,
        scan.findings,
        scan.redacted if exposed else original,
        exposed,
        scan.unscanned,
    )
