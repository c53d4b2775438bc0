"""Housekeeping of an audit store: which sessions belong to which test run, and pruning.

A pytest run under ``--harness-audit`` writes ``runs/<stamp>-<pid>.json`` listing its sessions.
Pruning works on *groups*: a run's sessions go together, and a session that no run lists (one
written by the hook or proxy door) is a group of its own. Groups are ordered by the newest
modification time of their files, as pytest orders its basetemps. A session's files are its
chain, anchor, session file, policy, report, checkpoints and pending calls in the store, and
the hook door's continuity witness outside it (:mod:`.continuity_files`): a pruned session the
host resumes is then a new session, not one whose records were lost.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_harness_audit.audit.continuity_files import (
    drop_empty_witness_dir,
    kept_faults,
    witness_path,
)
from pytest_harness_audit.audit.storage import list_sessions
from pytest_harness_audit.errors import UsageError

#: The store's folders whose files are named after a session (``<sid>.<suffix>``).
_SESSION_FOLDERS = ("audit", "sessions", "policies", "reports", "checkpoints")
_RUNS = "runs"
_PENDING = "pending"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass
class SessionGroup:
    """Sessions that are kept or pruned together: one run's, or one lone session."""

    sessions: list[str]
    newest: float
    run_file: Path | None = None
    files: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class PruneResult:
    """What a prune removed and kept."""

    removed_sessions: list[str]
    removed_groups: int
    kept_groups: int


def record_run(storage_dir: str | os.PathLike[str], session_ids: Iterable[str]) -> Path | None:
    """Write ``runs/<stamp>-<pid>.json`` listing a test run's sessions (none: nothing written)."""
    sessions = sorted(set(session_ids))
    if not sessions:
        return None
    runs = Path(storage_dir) / _RUNS
    runs.mkdir(parents=True, exist_ok=True)
    stem = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    text = json.dumps({"sessions": sessions}, indent=1) + "\n"
    for attempt in range(1000):
        path = runs / (f"{stem}.json" if attempt == 0 else f"{stem}-{attempt}.json")
        try:
            with path.open("x", encoding="utf-8") as out:
                out.write(text)
        except FileExistsError:
            continue
        return path
    raise OSError(f"{runs}: no free run file name for {stem}")


def parse_age(text: str) -> float:
    """``30s``, ``15m``, ``2h``, ``7d``, ``1w`` in seconds; a ``UsageError`` naming the value."""
    number, unit = text[:-1], text[-1:]
    if unit not in _UNITS or not number.isdigit():
        raise UsageError(f"--older-than {text!r}: expected a number and s, m, h, d or w (e.g. 7d)")
    return int(number) * _UNITS[unit]


def session_groups(storage_dir: str | os.PathLike[str]) -> list[SessionGroup]:
    """Every group of the store, newest first."""
    root = Path(storage_dir)
    files = _files_by_session(root)
    groups: list[SessionGroup] = []
    claimed: set[str] = set()
    runs = root / _RUNS
    for run_file in sorted(runs.glob("*.json")) if runs.is_dir() else []:
        listed = [sid for sid in _run_sessions(run_file) if sid in files and sid not in claimed]
        claimed.update(listed)
        group_files = [run_file] + [path for sid in listed for path in files[sid]]
        groups.append(SessionGroup(listed, _newest(group_files), run_file, group_files))
    for sid, paths in files.items():
        if sid not in claimed:
            groups.append(SessionGroup([sid], _newest(paths), None, list(paths)))
    groups.sort(key=lambda group: group.newest, reverse=True)
    return groups


def prune(
    storage_dir: str | os.PathLike[str],
    *,
    keep: int | None = None,
    older_than: float | None = None,
    runs_only: bool = False,
    dry_run: bool = False,
    now: float | None = None,
) -> PruneResult:
    """Remove groups beyond the ``keep`` newest and/or older than ``older_than`` seconds.

    With ``runs_only`` (what ``--harness-audit-keep`` uses) lone sessions are never touched.
    """
    if keep is not None and keep < 0:
        raise UsageError(f"--keep {keep}: must be zero or more")
    moment = time.time() if now is None else now
    groups = session_groups(storage_dir)
    if runs_only:
        groups = [group for group in groups if group.run_file is not None]
    doomed: list[SessionGroup] = []
    for index, group in enumerate(groups):
        too_many = keep is not None and index >= keep
        too_old = older_than is not None and moment - group.newest > older_than
        if too_many or too_old:
            doomed.append(group)
    if not dry_run:
        for group in doomed:
            _remove(group)
        if doomed:
            drop_empty_witness_dir(storage_dir)
    removed = [sid for group in doomed for sid in group.sessions]
    return PruneResult(removed, len(doomed), len(groups) - len(doomed))


def _run_sessions(run_file: Path) -> Sequence[str]:
    try:
        data = json.loads(run_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    sessions = data.get("sessions") if isinstance(data, dict) else None
    return [sid for sid in sessions if isinstance(sid, str)] if isinstance(sessions, list) else []


def _files_by_session(root: Path) -> dict[str, list[Path]]:
    sessions = sorted(list_sessions(root), key=len, reverse=True)  # longest id claims first
    found: dict[str, list[Path]] = {sid: [] for sid in sessions}
    for folder in _SESSION_FOLDERS:
        directory = root / folder
        if not directory.is_dir():
            continue
        for entry in directory.iterdir():
            owner = next((sid for sid in sessions if entry.name.startswith(sid + ".")), None)
            if owner is not None and not entry.is_symlink():
                found[owner].append(entry)
    for sid in sessions:
        pending = root / _PENDING / sid
        if pending.is_dir() and not pending.is_symlink():
            found[sid].append(pending)
        witness = witness_path(root, sid)
        if witness.is_file() and not witness.is_symlink():
            found[sid].append(witness)
        found[sid].extend(path for path, _fault in kept_faults(root, sid))
    return found


def _newest(paths: Iterable[Path]) -> float:
    times = [path.lstat().st_mtime for path in paths if path.exists()]
    return max(times, default=0.0)


def _remove(group: SessionGroup) -> None:
    for path in group.files:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
