"""Where the hook door keeps its continuity witnesses: one small file per session, outside the
store (see :mod:`pytest_harness_audit.doors.hook_continuity`), and their removal with the
sessions they witness (``audit prune``), and how a witness is read and written.

The witnesses of one store share a folder named after the store's absolute path (as named, not
resolved through links), so two stores holding the same session id never share a witness. A
witness is replaced whole (never seen half written); a change of one is a read, change and
write under :func:`witness_lock`, so hook processes of parallel calls never lose each other's
changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.atomic_file import read_own_file, replace_file
from pytest_harness_audit.audit.locking import exclusive
from pytest_harness_audit.audit.storage import sanitize_session_id

#: ``$HARNESS_AUDIT_WITNESS_DIR`` overrides where the witnesses are kept.
WITNESS_ENV = "HARNESS_AUDIT_WITNESS_DIR"
#: A witness's seals of the pending files of its session's calls in flight (the hook door's
#: ``hook_pending_seal``): ``{key: {"sha256": [...], "facts": {...}}}``.
SEALED_KEY = "sealed"
#: A witness's spans: what the session's calls did together so far (the hook door's
#: ``hook_spans``): ``{"lost": [...], "unnamed": [...]}``.
SPANS_KEY = "spans"
#: A witness's names of the protected states the hook door kept between events
#: (``hook_between_kept``): ``[<state file name>, ...]``.
BETWEEN_KEY = "between"
#: A witness's digests of those states, the last two of each (one being written may not be
#: read yet): ``{<state file name>: [<sha256 hex>, ...]}``.
BETWEEN_DIGESTS_KEY = "betweenDigests"


def witness_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$HARNESS_AUDIT_WITNESS_DIR``, else ``$XDG_STATE_HOME/harness-audit/witness``
    (``~/.local/state/…``): beside the default stores, never inside a project."""
    env = os.environ if environ is None else environ
    chosen = env.get(WITNESS_ENV)
    if chosen:
        return Path(chosen)
    state = env.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "harness-audit" / "witness"


def store_witness_dir(
    storage: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> Path:
    """The folder of the witnesses of the store ``storage``, named by the store's path as
    given (absolute), never as resolved: a store replaced by a link to another folder (an old
    copy) must meet the witness of the store it replaced, not a folder of no witness."""
    store = hashlib.sha256(os.path.abspath(storage).encode("utf-8", "surrogateescape"))
    return witness_dir(environ) / store.hexdigest()[:16]


def witness_path(
    storage: str | os.PathLike[str], session_id: str, environ: Mapping[str, str] | None = None
) -> Path:
    """The witness file of ``session_id`` in the store ``storage`` (one folder per store)."""
    return store_witness_dir(storage, environ) / f"{sanitize_session_id(session_id)}.json"


def witnessed_records(
    storage: str | os.PathLike[str], session_id: str, environ: Mapping[str, str] | None = None
) -> int:
    """How many records the session's witness saw in the store (0: none, or no witness to
    read): what verification holds against a store whose session files are all gone."""
    try:
        seen = (read_witness(witness_path(storage, session_id, environ)) or {}).get("count")
    except WitnessUnreadable:
        return 0
    return seen if isinstance(seen, int) and not isinstance(seen, bool) and seen > 0 else 0


def witnessed_sessions(
    storage: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> list[str]:
    """The sessions of the store ``storage`` whose witness saw records, sorted (by the file
    names they are kept under)."""
    try:
        names = [entry.name for entry in store_witness_dir(storage, environ).iterdir()]
    except OSError:
        return []
    ids = [name[: -len(".json")] for name in names if name.endswith(".json")]
    return sorted(sid for sid in ids if witnessed_records(storage, sid, environ))


def keep_fault(
    storage: str | os.PathLike[str],
    session_id: str,
    fault: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
) -> bool:
    """Keep, beside the session's witness, a fault a hook step could not record in the chain
    (its lock held, the chain changed behind it), for the next event to record: a file of its
    own, so neither the witness's lock nor its content is needed. False: it cannot be kept."""
    name = f"{sanitize_session_id(session_id)}.fault-{os.urandom(6).hex()}"
    folder = store_witness_dir(storage, environ)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        replace_file(folder / name, json.dumps(fault, sort_keys=True).encode("utf-8"))
    except OSError:
        return False
    return True


def kept_faults(
    storage: str | os.PathLike[str], session_id: str, environ: Mapping[str, str] | None = None
) -> list[tuple[Path, dict[str, Any]]]:
    """The faults kept for ``session_id`` (:func:`keep_fault`), oldest first; one that cannot
    be read is kept as ``{}`` (its caller still records that a fault was kept)."""
    folder = store_witness_dir(storage, environ)
    own = re.compile(re.escape(sanitize_session_id(session_id)) + r"\.fault-[0-9a-f]{12}")
    try:
        paths = [entry for entry in folder.iterdir() if own.fullmatch(entry.name)]
    except OSError:
        return []
    found: list[tuple[float, Path, dict[str, Any]]] = []
    for path in paths:
        try:
            when = path.lstat().st_mtime
            data = json.loads(read_own_file(path).decode("utf-8"))
        except FileNotFoundError:
            continue  # recorded by a parallel event meanwhile
        except (OSError, ValueError, RecursionError):
            when, data = 0.0, {}
        found.append((when, path, data if isinstance(data, dict) else {}))
    return [(path, data) for _when, path, data in sorted(found, key=lambda item: item[0])]


def drop_empty_witness_dir(
    storage: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> None:
    """Remove the store's witness folder when no witness is left in it."""
    with contextlib.suppress(OSError):
        store_witness_dir(storage, environ).rmdir()


class WitnessUnreadable(Exception):
    """The witness exists and cannot be read, or is not a witness (changed by someone)."""


def read_witness(path: Path) -> dict[str, Any] | None:
    """The witness (``None``: there is none, its folder included: a file put in the folder's
    place holds no witness); raises :class:`WitnessUnreadable`."""
    try:
        data = json.loads(read_own_file(path).decode("utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError, RecursionError) as exc:
        raise WitnessUnreadable(type(exc).__name__) from None
    if not isinstance(data, dict):
        raise WitnessUnreadable("not an object")
    return data


def write_witness(path: Path, data: Mapping[str, Any]) -> None:
    """Replace the witness atomically; a witness that cannot be written is skipped (the hook
    still gates and records)."""
    with contextlib.suppress(OSError):
        replace_file(path, json.dumps(data, sort_keys=True).encode("utf-8"))


@contextmanager
def witness_lock(
    storage: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Hold the exclusive lock of the store's witness folder (the folder itself: a witness is
    replaced whole, so it cannot carry the lock) for one read, change and write of a witness.

    ``OSError``: the folder cannot be made or opened; a lock another process holds for long is
    a :class:`~pytest_harness_audit.audit.errors.ChainError` (:mod:`.locking`)."""
    folder = store_witness_dir(storage, environ)
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    try:
        with exclusive(fd):
            yield
    finally:
        os.close(fd)
