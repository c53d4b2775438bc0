"""The session file ``sessions/<sessionId>.json``: metadata, replaced atomically.

Besides the Soft LCT and the repairs, it lists the writers that have the chain open
(``writers``: pid, host, a token; each removes itself when it closes) and the head the last
writer saw when it closed (``anchor``). Both vouch for a record past the anchor: it is adopted as
an interrupted append only when a writer that never closed has died since, or when that head copy
names it (see ``vouch_for``).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.atomic_file import replace_file
from pytest_harness_audit.audit.clock import utc_timestamp
from pytest_harness_audit.audit.errors import AuditError

SESSION_FORMAT = "harness-audit-session/1"


def load_session_file(path: Path) -> dict[str, Any] | None:
    """The parsed session file, or ``None`` if it does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise AuditError(f"{path}: session file is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise AuditError(f"{path}: session file must hold a JSON object")
    return data


def readable_session_file(path: Path) -> dict[str, Any] | None:
    """The parsed session file; ``None`` if it does not exist or another hand garbled it (a
    writer closing leaves it as found, for verification to report)."""
    try:
        return load_session_file(path)
    except AuditError:
        return None


def write_session_file(path: Path, data: dict[str, Any], *, fsync: bool = True) -> None:
    """Replace the session file atomically (temporary file, fsync unless told not to, rename)."""
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False) + "\n"
    replace_file(path, text.encode("utf-8"), fsync=fsync)


PREVIEW_BYTES = 120


def torn_tail_entry(
    *, by: str, offset: int, fragment: bytes, record_count: int, head: str
) -> dict[str, Any]:
    """The ``repairs`` entry describing a removed torn final line."""
    return {
        "at": utc_timestamp(),
        "action": "removed torn final line",
        "by": by,
        "offset": offset,
        "removedBytes": len(fragment),
        "removedSha256": hashlib.sha256(fragment).hexdigest(),
        "removedPreview": fragment[:PREVIEW_BYTES].decode("utf-8", "replace"),
        "recordCount": record_count,
        "head": head,
    }


def note_repair(path: Path, entry: dict[str, Any]) -> None:
    """Append ``entry`` to the session file's ``repairs`` list (creating the file if needed)."""
    data = load_session_file(path) or {}
    repairs = data.get("repairs")
    if not isinstance(repairs, list):
        repairs = []
    repairs.append(entry)
    data["repairs"] = repairs
    write_session_file(path, data)


def writer_entry(token: str) -> dict[str, Any]:
    """The ``writers`` entry of a chain object of this process."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "token": token}


def _writers(data: dict[str, Any] | None) -> list[dict[str, Any]]:
    value = data.get("writers") if data is not None else None
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def writer_gone(entry: dict[str, Any]) -> bool:
    """True when the writer of ``entry`` has died without closing (or may have: another host)."""
    pid = entry.get("pid")
    if entry.get("host") != socket.gethostname():
        return True
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return True
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:  # a killed child that nobody has waited for yet is a zombie: dead all the same
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    fields = stat.rsplit(")", 1)[-1].split()
    return bool(fields) and fields[0] in ("Z", "X")


def join_writers(data: dict[str, Any], entry: dict[str, Any]) -> None:
    """Forget writers that died, then list ``entry`` (call after any roll-forward)."""
    data["writers"] = [item for item in _writers(data) if not writer_gone(item)] + [entry]


def leave_writers(data: dict[str, Any], token: str) -> None:
    """Remove this process's entry of ``token``."""
    pid = os.getpid()
    data["writers"] = [
        item
        for item in _writers(data)
        if not (item.get("token") == token and item.get("pid") == pid)
    ]


def vouch_for(data: dict[str, Any] | None, count: int, head: str) -> str | None:
    """Why a record past the anchor (making ``count`` records with ``head``) is a writer's own.

    ``None`` when nothing in the session file says so: every writer closed cleanly and none
    recorded that head — the record was appended by something else than the chain writer.
    """
    snapshot = data.get("anchor") if data is not None else None
    if isinstance(snapshot, dict) and (snapshot.get("recordCount"), snapshot.get("head")) == (
        count,
        head,
    ):
        return "the session file's head copy names it"
    return dead_writer(data)


def dead_writer(data: dict[str, Any] | None) -> str | None:
    """Which writer of the session died without closing it (``None`` when none did).

    Only such a writer can leave bytes past the anchor: a live one holds the lock while it
    writes. Anything else that put them there wrote behind the writers' backs.
    """
    for entry in _writers(data):
        if writer_gone(entry):
            return f"writer pid {entry.get('pid')} died without closing the session"
    return None
