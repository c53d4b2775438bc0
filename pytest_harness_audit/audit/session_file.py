"""The session file ``sessions/<sessionId>.json``: metadata, replaced atomically."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

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


def write_session_file(path: Path, data: dict[str, Any]) -> None:
    """Replace the session file atomically (temporary file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2, sort_keys=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


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
