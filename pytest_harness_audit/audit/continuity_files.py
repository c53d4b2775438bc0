"""Where the hook door keeps its continuity witnesses: one small file per session, outside the
store (see :mod:`pytest_harness_audit.doors.hook_continuity`), and their removal with the
sessions they witness (``audit prune``).

The witnesses of one store share a folder named after the store's resolved path, so two stores
holding the same session id never share a witness.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from pytest_harness_audit.audit.storage import sanitize_session_id

#: ``$HARNESS_AUDIT_WITNESS_DIR`` overrides where the witnesses are kept.
WITNESS_ENV = "HARNESS_AUDIT_WITNESS_DIR"


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
    """The folder of the witnesses of the store ``storage``."""
    store = hashlib.sha256(os.path.realpath(storage).encode("utf-8", "surrogateescape"))
    return witness_dir(environ) / store.hexdigest()[:16]


def witness_path(
    storage: str | os.PathLike[str], session_id: str, environ: Mapping[str, str] | None = None
) -> Path:
    """The witness file of ``session_id`` in the store ``storage`` (one folder per store)."""
    return store_witness_dir(storage, environ) / f"{sanitize_session_id(session_id)}.json"


def drop_empty_witness_dir(
    storage: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> None:
    """Remove the store's witness folder when no witness is left in it."""
    with contextlib.suppress(OSError):
        store_witness_dir(storage, environ).rmdir()
