"""Reading records back: stream a chain's parsed records, oldest first."""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.errors import AuditError, SessionNotFoundError
from pytest_harness_audit.audit.storage import StorageLayout


def iter_file_records(
    path: str | os.PathLike[str], *, strict: bool = False, last: int | None = None
) -> Iterator[dict[str, Any]]:
    """Yield the records of the chain file at ``path``.

    A final line without newline (a torn write) is never yielded. A complete line that is not a
    JSON object is skipped, or raises ``AuditError`` naming file and line when ``strict``.
    ``last=N`` yields only the last N records (memory stays bounded by N). A missing file is an
    empty chain.
    """
    if last is not None:
        yield from deque(iter_file_records(path, strict=strict), maxlen=max(last, 0))
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith(b"\n"):
                return
            try:
                record = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError) as exc:
                if strict:
                    where = f"{os.fspath(path)}:{number}"
                    raise AuditError(f"{where}: not a JSON record ({exc})") from None
                continue
            if isinstance(record, dict):
                yield record
            elif strict:
                raise AuditError(f"{os.fspath(path)}:{number}: a record must be a JSON object")


def chain_path(storage_dir: str | os.PathLike[str], session_id: str) -> Path:
    """The chain file of ``session_id``; ``SessionNotFoundError`` if the session is absent."""
    layout = StorageLayout.at(storage_dir)
    paths = layout.paths(session_id)
    if not (paths.chain.exists() or paths.session_file.exists()):
        raise SessionNotFoundError(f"no audit session {paths.session_id!r} in {layout.root}")
    return paths.chain


def iter_records(
    storage_dir: str | os.PathLike[str], session_id: str, *, strict: bool = False
) -> Iterator[dict[str, Any]]:
    """Yield the records of a stored session, oldest first (see ``iter_file_records``)."""
    return iter_file_records(chain_path(storage_dir, session_id), strict=strict)
