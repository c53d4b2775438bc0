"""Digests of the host's settings files and folders (:mod:`.hook_host_settings`): what counts
in a JSON file, and a folder's listing and contents, read without blocking and bounded."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

_MAX_BYTES = 16 << 20
#: Entries a folder digest walks; past that, what it saw and the count so far.
FOLDER_ENTRY_LIMIT = 2000
_FOLDER_BYTES = 8 << 20
#: The per-project keys of ``~/.claude.json`` that count in its digest (``allowedTools`` is
#: compared on its own: :mod:`.hook_host_permissions`).
PROJECT_KEYS = ("mcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers")


def read_bytes(path: str) -> bytes | str | None:
    """The file's first bytes; ``None`` when absent, a text saying why it cannot be read."""
    try:
        # never blocks on a FIFO put in a settings file's place
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            return f"not a file: {stat.filemode(mode)}"
        try:
            return handle.read(_MAX_BYTES + 1)
        except OSError as exc:
            return f"unreadable: {exc.strerror}"


def read_json(path: str) -> Any:
    """The file's JSON document (``None``: absent, unreadable or not JSON)."""
    data = read_bytes(path)
    if not isinstance(data, bytes):
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def file_digest(path: str, keys: tuple[str, ...] | None) -> str | None:
    """The digest of ``keys`` of a JSON file (``None``: every key), ``None`` when absent or
    when none of ``keys`` has a value."""
    data = read_bytes(path)
    if not isinstance(data, bytes):
        return data
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return "invalid: " + hashlib.sha256(data).hexdigest()  # the host may read it otherwise
    if not isinstance(document, dict):
        return "not an object: " + hashlib.sha256(data).hexdigest()
    counted = document if keys is None else {key: document.get(key) for key in keys}
    projects = counted.get("projects") if keys is not None else None
    if isinstance(projects, dict):
        # the host adds an entry for every project it opens: only the tools one names count
        named = {
            name: {key: entry[key] for key in PROJECT_KEYS if entry.get(key)}
            for name, entry in projects.items()
            if isinstance(entry, dict)
        }
        counted["projects"] = {name: keys for name, keys in named.items() if keys}
    if keys is not None and not any(counted.values()):
        return None  # nothing that counts: as if there were no file
    text = json.dumps(counted, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def folder_digest(path: str) -> str | None:
    """One digest of a folder's listing and contents (links by their target, never followed
    below the folder itself), bounded: :data:`FOLDER_ENTRY_LIMIT` entries, and past
    ``_FOLDER_BYTES`` read in all, a file by its size and change time."""
    try:
        if not stat.S_ISDIR(os.stat(path).st_mode):
            return file_digest(path, None)  # a file in the folder's place
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    digest, count, budget = hashlib.sha256(), 0, _FOLDER_BYTES
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            # ``relative`` starts with "/": joined as is, it would name a folder under the root
            with os.scandir(os.path.join(path, relative.lstrip("/"))) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            digest.update(f"\0{relative}: unreadable: {exc.strerror}".encode())
            continue
        for entry in entries:
            count += 1
            if count > FOLDER_ENTRY_LIMIT:
                return f"over {FOLDER_ENTRY_LIMIT} entries: {digest.hexdigest()}"
            name = f"{relative}/{entry.name}".encode("utf-8", "surrogateescape")
            digest.update(b"\0" + name + b"\0")
            try:
                if entry.is_symlink():
                    digest.update(b"l" + os.fsencode(os.readlink(entry.path)))
                elif entry.is_dir(follow_symlinks=False):
                    digest.update(b"d")
                    pending.append(f"{relative}/{entry.name}")
                elif entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    digest.update(b"f%d" % info.st_size)
                    if budget > 0:
                        data = read_bytes(entry.path)
                        content = data if isinstance(data, bytes) else str(data).encode()
                        budget -= len(content)
                        digest.update(hashlib.sha256(content).digest())
                    else:
                        digest.update(b"%d" % info.st_mtime_ns)
                else:
                    digest.update(b"o")
            except OSError as exc:
                digest.update(f"unreadable: {exc.strerror}".encode())
    return digest.hexdigest()


def marked_records(path: Path, marks: tuple[bytes, ...]) -> Iterable[Mapping[str, Any]]:
    """The chain's complete lines at ``path`` holding one of ``marks``, parsed (others are
    skipped unread); nothing when the file cannot be opened."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return
    with handle:
        for line in handle:
            if not line.endswith(b"\n") or not any(mark in line for mark in marks):
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict):
                yield record


__all__ = [
    "FOLDER_ENTRY_LIMIT",
    "PROJECT_KEYS",
    "file_digest",
    "folder_digest",
    "marked_records",
    "read_bytes",
    "read_json",
]
