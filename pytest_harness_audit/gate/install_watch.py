"""The auditor's installation judged by what a call did to it, not only by the call's text.

:mod:`.install_guard` refuses a call whose reading names a path of the auditor's installation.
A route the reading does not follow still reaches it: ``python3 -c`` building the path of a
``.pth`` file in the environment's ``site-packages`` (which then runs code in every later
interpreter of that environment, the auditor's among them), ``pip config --site set`` (the
environment's ``pip.conf``: where its later installs come from), a distribution's
``entry_points.txt`` given a ``pytest11`` plugin (loaded into the next test run). So around each
call that can change files the watch takes the stat of:

* every file of the package itself (the folder :func:`.install_guard.installation_paths` names);
* the entries of the other folders it names (``site-packages``, the standard library, the
  environment's folder with ``pyvenv.cfg`` and ``pip.conf``, the folder of the interpreter and
  of the entry points): a file's stat, a folder's presence, and for a folder its
  ``__init__.py`` (a package's start) or, for a ``*.dist-info`` one, its ``entry_points.txt``
  (a distribution's plugins);
* the files it names (the interpreter, the entry points, the session's policy file);
* what the auditor has loaded from under those folders, however deep (``yaml/constructor.py``),
  with its bytecode (``__pycache__/*.pyc``), and the entries of every folder on ``sys.path``
  that run code at an interpreter's start (``*.pth``, ``sitecustomize``, ``usercustomize``):
  :mod:`.install_modules`.

A difference is a ``tamper_attempt`` judged FAIL, whatever the policy says, with the changed
paths in ``effects.installationChanged``. A command that is nothing but a package installer's
(``pip install``, ``uv sync`` …) is expected to add to the environment's folders: a change of
the package's own files, of the files watched by name or of a module the auditor loaded still
fails; a start-up file it added or changed (a ``.pth`` file, ``sitecustomize``: code every later
interpreter of the environment runs) is judged WARN, alert :data:`STARTUP_ALERT`, with the paths
in ``effects.installationStartup``; anything else it adds is no finding (what the text reading
refuses of installers is :mod:`.install_guard`'s). The change time is compared, which no
``touch`` can set back. Other ``__pycache__`` entries are left out (any interpreter writes them
when it imports, the auditor's own process among them); so is a loaded module's cache file that
now holds what its source compiles to (new, or written again: another process's interpreter
imported the module, maybe while the baseline was taken), and one removed (the source is
compiled again). A module of the environment not loaded yet is left to the text reading.

On Linux the kernel watches all of this (:mod:`.install_events`, one watcher a process), so a
call that changed nothing takes no stamp: ``before`` notes how far the watcher's journal of
changed paths goes, ``after`` reads the paths it names since, kept to those this watch covers
(the paths a stamp keeps; a file also when it was opened for writing and closed, a watched
folder also when its own mode or owner changed). A full stamp is kept as the baseline (one for
every watch of the same paths), taken again at a ``before`` only when something watched changed
since it was taken. When events were lost between ``before`` and ``after`` (the kernel's queue
overflowed, the watches could not be kept) ``after`` compares a new stamp with that baseline,
as without the watcher: what changed is reported as a stamp reports it. Where inotify is missing
or runs short of watches, ``before`` and ``after`` take stamps. The hook door keeps a stamp from
its pre step to its post step (two processes): :meth:`InstallWatch.stamp`; the post step
compares the paths the pre step's stamp kept (its own imports since are not the call's).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from pytest_harness_audit.gate.install_events import (
    InstallEvents,
    Spec,
    Stamp,
    forget_watch,
    inner_file,
    shared_events,
)
from pytest_harness_audit.gate.install_guard import INSTALLATION, data_trees
from pytest_harness_audit.gate.install_modules import (
    LoadedModules,
    compiled_from_source,
    is_startup,
    startup_folders,
)
from pytest_harness_audit.gate.seam import NO_FINDINGS, CallFindings, Outcome
from pytest_harness_audit.gate.store_guard import TAMPER_ALERT
from pytest_harness_audit.inspect import WATCHED_CATEGORIES
from pytest_harness_audit.inspect.effect_set import listed
from pytest_harness_audit.inspect.exec_config import installs_packages

#: Files of the package folder walked at most (an installation is a few hundred).
_MAX_FILES = 5_000
#: Paths listed in a record at most.
_MAX_LISTED = 20
#: New cache files of loaded modules checked against their source at most, for one call.
_MAX_CHECKED = 1_000
#: The alert of a package installer's command that added a file run at every interpreter start.
STARTUP_ALERT = "startup_code_added"


class _Mark(NamedTuple):
    """What ``before`` keeps while the kernel watches: the journal's version then, and the
    baseline stamp (the installation as it was then, for a call whose events were lost)."""

    events: InstallEvents
    version: int
    baseline: Stamp
    spec: Spec


def _folders_of(tree: str, limit: int = 256) -> list[str]:
    """``tree`` and the folders below it (``__pycache__`` left out), at most ``limit``."""
    found: list[str] = []
    for folder, dirs, _ in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found.append(folder)
        if len(found) >= limit:
            break
    return found


def _differ(before: Stamp, now: Stamp) -> list[str]:
    return [path for path in before.keys() | now.keys() if before.get(path) != now.get(path)]


def _stat(path: str) -> tuple[int, int, int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_ctime_ns, info.st_size, info.st_mode)


class InstallWatch:
    """A :class:`~.seam.CallInspector`: the installation's stat before and after each call that
    can change files (see the module doc). ``package``: the package folder, walked whole;
    ``folders``: folders whose entries are kept; ``files``: files kept."""

    def __init__(
        self, package: str, folders: Iterable[str] = (), files: Iterable[str] = ()
    ) -> None:
        self.package = package
        self.folders = tuple(dict.fromkeys(folders))
        self.files = tuple(dict.fromkeys(files))
        self._loaded = LoadedModules()
        self._path: tuple[str, ...] | None = None
        self._startup: frozenset[str] = frozenset()
        self._last: Spec | None = None
        self._roots: tuple[str, ...] = ()

    @classmethod
    def of(cls, paths: Iterable[str]) -> InstallWatch:
        """The watch of the installation paths of an :class:`~.install_guard.InstallGuard`
        (its ``paths``), plus the environment's folder and the folder of the interpreter."""
        package = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        folders: list[str] = [sys.prefix, os.path.dirname(os.path.abspath(sys.executable))]
        files: list[str] = []
        for path in paths:
            real = os.path.realpath(path)
            if real == package or real.startswith(package + os.sep):
                continue
            if os.path.isdir(real):
                folders.append(real)
            else:
                files.append(path)
        # the shipped rules and workspace templates, when they lie outside the package (a
        # checkout): every folder of them, so a file added anywhere in them is an entry seen
        for tree in data_trees():
            real = os.path.realpath(tree)
            if real != package and not real.startswith(package + os.sep):
                folders.extend(_folders_of(real))
        return cls(package, folders, files)

    def stamp(self, spec: Spec | None = None) -> Stamp:
        """The stat of everything watched (by ``spec``, else as it is now), now."""
        _, folders, files, modules, startup = self._spec() if spec is None else spec
        found: Stamp = {path: _stat(path) for path in files}
        found.update((path, _stat(path)) for path in modules)
        count = 0
        for folder, dirs, names in os.walk(self.package):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in names:
                count += 1
                if count > _MAX_FILES:
                    break
                path = os.path.join(folder, name)
                found[path] = _stat(path)
        for folder in startup:
            try:
                entries = [entry for entry in os.scandir(folder) if is_startup(entry.name)]
            except OSError:
                continue
            found.update((entry.path, _stat(entry.path)) for entry in entries)
        for folder in folders:
            # its entries tell what was added or removed; its own change time moves with a
            # `__pycache__` made in it
            own = _stat(folder)
            found[folder] = None if own is None else (own[0], 0, 0, stat.S_IFDIR)
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name == "__pycache__":
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not is_dir:
                    found[entry.path] = (info.st_ino, info.st_ctime_ns, info.st_size, info.st_mode)
                    continue
                # a folder's own change time moves when an import writes its __pycache__
                found[entry.path] = (info.st_ino, 0, 0, stat.S_IFDIR)
                path = inner_file(entry.path)
                found[path] = _stat(path)
        return found

    def _stamp_as(self, before: Stamp) -> Stamp:
        """A stamp now of what ``before`` kept: the files of modules loaded since are left out
        (the auditor's own imports), those it kept are taken again (another process's stamp)."""
        spec = self._spec()
        now = self.stamp(spec)
        for path in spec[3].difference(before):
            del now[path]
        now.update((path, _stat(path)) for path in before.keys() - now.keys())
        return now

    def _own(self, path: str) -> bool:
        """Whether ``path`` is one of the package's files or of the files watched by name."""
        return path in self.files or path.startswith(self.package + os.sep)

    def _covers(self, path: str, spec: Spec) -> bool:
        """Whether a stamp keeps ``path`` (or, for a folder of the watch, its presence)."""
        if path == self.package or self._own(path) or path in self.folders or path in spec[3]:
            return True
        parent = os.path.dirname(path)
        if parent in self.folders or (parent in spec[4] and is_startup(os.path.basename(path))):
            return True
        return os.path.dirname(parent) in self.folders and path == inner_file(parent)

    def _spec(self) -> Spec:
        """What the watch covers now (the modules loaded and ``sys.path`` read again only
        when they changed)."""
        path = tuple(sys.path)
        if path != self._path:
            self._startup, self._path = startup_folders(), path
        spec = self._last
        roots = self._roots if spec is not None and spec[1] is self.folders else None
        if roots is None:
            roots = self._roots = (self.package, *self.folders)
        modules = self._loaded.files(roots)
        if (
            spec is None
            or spec[3] is not modules
            or spec[4] is not self._startup
            or spec[1] is not self.folders
            or spec[2] is not self.files
        ):
            # the same spec object while nothing changed: cheap to compare and look up
            spec = self._last = (self.package, self.folders, self.files, modules, self._startup)
        return spec

    def close(self) -> None:
        """Stop the kernel's watch for this watch (a closed session's watch is kept no more
        when the watches are set again for a new one)."""
        forget_watch(self)

    def before(self, tool: str, category: str, params: Mapping[str, Any]) -> object:
        """For a call of a category that can change files: the watcher's mark, or the stamp
        where the kernel does not watch (see the module doc)."""
        if category not in WATCHED_CATEGORIES:
            return None
        spec = self._spec()
        events = shared_events()
        if events is None or not events.watch(self, spec):
            return self.stamp(spec)
        version = events.mark()
        kept = events.baselines.get(spec)
        since = None if kept is None else events.since(kept[0])
        if kept is None or since is None or any(self._covers(path, spec) for path in since):
            # (a stamp taken by another thread meanwhile is as good: each is the installation
            # at or after its version)
            kept = events.baselines[spec] = (version, self.stamp(spec))
            # the call's span starts now: what changed while the stamp was taken came before it
            version = events.mark()
        return _Mark(events, version, kept[1], spec)

    def after(
        self, token: object, tool: str, category: str, params: Mapping[str, Any], outcome: Outcome
    ) -> CallFindings:
        """``tamper_attempt`` judged FAIL when anything watched changed during the call."""
        if isinstance(token, _Mark):
            spec = token.spec
            since = token.events.since(token.version)
            if since is None:  # events lost: compare with the installation as it was before
                found = _differ(token.baseline, self.stamp(spec))
            else:
                found = list({path for path in since if self._covers(path, spec)})
        elif isinstance(token, dict):
            spec = self._spec()
            found = _differ(token, self._stamp_as(token))
        else:
            return NO_FINDINGS
        if found:
            found = _written_caches(found, spec[3])
        if not found:
            return NO_FINDINGS
        command = params.get("command") if isinstance(params, Mapping) else None
        startup: list[str] = []
        if isinstance(command, str) and installs_packages(command):
            # a package installer's own command adds to the environment, as expected; not
            # what the auditor loaded, and a start-up file it adds is told (one it removes
            # runs nothing)
            startup = sorted(
                path
                for path in found
                if is_startup(os.path.basename(path)) and os.path.lexists(path)
            )
            found = [path for path in found if self._own(path) or path in spec[3]]
            if not found and startup:
                return _startup_added(startup)
        # the files first: a folder's entry changes with the file made in it
        changed = sorted(found, key=lambda path: (path in self.folders, path))
        if not changed:
            return NO_FINDINGS
        effects: dict[str, Any] = listed("installationChanged", changed, _MAX_LISTED)
        if startup:
            effects["installationStartup"] = startup[:_MAX_LISTED]
        return CallFindings(
            alerts=(TAMPER_ALERT,),
            effects=effects,
            verdict="FAIL",
            reason=f"the call changed {INSTALLATION} ({changed[0]})",
            caught_by="effect",
        )


def _written_caches(found: list[str], modules: frozenset[str]) -> list[str]:
    """``found`` but the cache files of loaded modules that are no change: gone (the module is
    compiled again from its source), or holding what the source compiles to (new, or written
    again: a cache file loaded as it is must hold exactly that, whoever wrote it)."""
    kept: list[str] = []
    checked = 0
    for path in found:
        if path not in modules or not path.endswith(".pyc") or "__pycache__" not in path:
            kept.append(path)
            continue
        if _stat(path) is None:
            continue
        # new or written again (an interpreter that writes bytecode imported the module, maybe
        # while the baseline was being taken): what the source compiles to is no change
        if checked < _MAX_CHECKED:
            checked += 1
            if compiled_from_source(path):
                continue
        kept.append(path)
    return kept


def _startup_added(paths: list[str]) -> CallFindings:
    listed = paths[:_MAX_LISTED]
    return CallFindings(
        alerts=(STARTUP_ALERT,),
        effects={"installationStartup": listed},
        verdict="WARN",
        reason=f"a package installer added code every interpreter start runs ({listed[0]})",
        caught_by="effect",
    )


def kept_stamp(kept: Any) -> Stamp | None:
    """A stamp as a door kept it in JSON (``path → [size, time, inode, mode]`` or ``None``);
    ``None`` when it is not one."""
    if not isinstance(kept, Mapping):
        return None
    stamp: Stamp = {}
    for path, info in kept.items():
        if info is None:
            stamp[str(path)] = None
        elif isinstance(info, list) and len(info) == 4 and all(isinstance(n, int) for n in info):
            stamp[str(path)] = (info[0], info[1], info[2], info[3])
        else:
            return None
    return stamp


__all__ = ["STARTUP_ALERT", "InstallWatch", "Stamp", "kept_stamp"]
