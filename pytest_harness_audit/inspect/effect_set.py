"""What changed between two workspace snapshots (:func:`~.effects.diff` makes it)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from pytest_harness_audit.policy.sensitive import is_startup_path

#: Paths listed per kind in :meth:`Effects.to_record`; the rest is counted.
RECORD_LIMIT = 100


def listed(name: str, paths: Sequence[object], limit: int = RECORD_LIMIT) -> dict[str, object]:
    """A record's list of ``paths`` under ``name``, cut to ``limit``, with a ``<name>Count``
    beside it when longer."""
    found: dict[str, object] = {name: list(paths[:limit])}
    if len(paths) > limit:
        found[f"{name}Count"] = len(paths)
    return found


@dataclass(frozen=True)
class Effects:
    """What changed between two snapshots; every path relative to the workspace, sorted."""

    deleted: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    created: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    deleted_dirs: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    #: Files moved out of the work's view (into a virtual environment, a cache, a build output,
    #: an ignored path: :mod:`~.out_of_view`), ``(before, now)`` pairs: also in :attr:`deleted`.
    hidden: tuple[tuple[str, str], ...] = ()
    tracked_deleted: tuple[str, ...] = ()
    #: Tracked files still in the workspace that the index no longer lists and git ignores:
    #: dropped from the project's view (:mod:`~.dropped`); also in :attr:`deleted`.
    dropped: tuple[str, ...] = ()
    complete: bool = True
    #: Memory files created, modified or deleted.
    memory: tuple[str, ...] = ()
    #: Tracked files that had content and are now empty (``: > f``, ``open(f, "w")``): their
    #: content is lost as a deletion's is.
    emptied: tuple[str, ...] = ()
    #: Hooks and start-up files the call's own text installs (``pre-commit install``, ``pip
    #: install``): protected files, expected of that command, so not protected changes.
    installed: tuple[str, ...] = ()
    #: Commits a ref or reflog named before the call that no longer exist after it: committed
    #: history lost for good (:mod:`~.history`).
    history_destroyed: tuple[str, ...] = ()
    #: Regular files now of another type (a symlink, a FIFO, a device): changed whatever the
    #: type; a tracked one whose content can no longer be read is also in :attr:`emptied`.
    replaced: tuple[str, ...] = ()
    #: Tracked files left unusable by their mode (unreadable by their owner, a script git records
    #: as executable no longer runnable) or inside a folder their owner can no longer enter;
    #: also in :attr:`emptied` (:mod:`~.lost_content`).
    unreadable: tuple[str, ...] = ()
    #: Commits hidden after the call that were shown before it: a replacement ref, a shallow
    #: boundary or a graft put over them (``"replace <sha>"``, ``"shallow <sha>"``,
    #: ``"graft <sha>"``; :func:`~.history.hidden_history`).
    history_hidden: tuple[str, ...] = ()
    #: Files created or modified that now hold a known secret and are no credential files:
    #: a secret copied out of its file (:mod:`~.secret_copies`).
    secret_copied: tuple[str, ...] = ()
    #: Tracked files that carried the owner's uncommitted change when the session started and
    #: now hold git's copy again, the change kept nowhere: the owner's work thrown away
    #: (:mod:`~.uncommitted`); also in :attr:`modified`, unless the change was lost when no ref
    #: or reflog named the commits keeping it any more (a stash dropped).
    discarded: tuple[str, ...] = ()
    #: Whether the call left none of the session's uncommitted changes, two or more of them
    #: thrown away: what ``git reset --hard`` does, written file by file.
    discarded_all: bool = False

    @property
    def startup(self) -> tuple[str, ...]:
        """The start-up files created, modified or deleted (``.bashrc``, an autostart entry, a
        user service unit …: :func:`~pytest_harness_audit.policy.sensitive.is_startup_path`),
        however their names were written."""
        changed = {*self.deleted, *self.created, *self.modified}
        return tuple(sorted(path for path in changed if is_startup_path(path)))

    def __bool__(self) -> bool:
        return bool(
            self.deleted
            or self.modified
            or self.created
            or self.deleted_dirs
            or self.history_destroyed
            or self.history_hidden
            or self.unreadable
            or self.discarded
        )

    def outside(self, folders: tuple[str, ...]) -> Effects:
        """These effects without the changes under ``folders`` (paths relative to the
        workspace): what is left when the auditor's own files there are not counted."""
        if not folders:
            return self
        prefixes = tuple(folder.rstrip("/") + "/" for folder in folders)

        def kept(paths: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(p for p in paths if not (p + "/").startswith(prefixes))

        return replace(
            self,
            deleted=kept(self.deleted),
            modified=kept(self.modified),
            created=kept(self.created),
            protected=kept(self.protected),
            deleted_dirs=kept(self.deleted_dirs),
            dropped=kept(self.dropped),
            unreadable=kept(self.unreadable),
            discarded=kept(self.discarded),
        )

    def to_record(self, limit: int = RECORD_LIMIT) -> dict[str, object]:
        """The record's ``effects`` field: non-empty kinds only, each list cut to ``limit``
        paths with a ``<kind>Count`` beside it when longer; ``trackedDeleted`` is a count."""
        record: dict[str, object] = {}
        kinds: Iterable[tuple[str, Sequence[object]]] = (
            ("deleted", self.deleted),
            ("deletedDirs", self.deleted_dirs),
            ("modified", self.modified),
            ("created", self.created),
            ("protected", self.protected),
            ("memory", self.memory),
            ("startup", self.startup),
            ("emptied", self.emptied),
            ("discarded", self.discarded),
            ("replaced", self.replaced),
            ("unreadable", self.unreadable),
            ("historyHidden", self.history_hidden),
            ("secretCopied", self.secret_copied),
            ("installed", self.installed),
            ("renamed", [list(pair) for pair in self.renamed]),
            ("movedOutOfView", [list(pair) for pair in self.hidden]),
            ("droppedFromView", self.dropped),
        )
        for name, paths in kinds:
            if paths:
                record.update(listed(name, paths, limit))
        if self.history_destroyed:
            record.update(listed("historyDestroyed", self.history_destroyed, limit))
        if self.discarded_all:
            record["discardedAll"] = True
        if self.tracked_deleted:
            record["trackedDeleted"] = len(self.tracked_deleted)
        if not self.complete:
            record["incomplete"] = True
        return record
