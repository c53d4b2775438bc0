"""The file tools: ``Read``, ``Write`` and ``Edit``, confined to the workspace root."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_harness_audit.tools.confinement import WorkspacePaths
from pytest_harness_audit.tools.outcome import ToolFailure
from pytest_harness_audit.tools.params import ToolParams

DEFAULT_READ_LIMIT = 2000
"""Lines ``Read`` returns when no ``limit`` is given (as Claude Code does)."""


def _os_failure(tool: str, exc: OSError, shown_path: str) -> ToolFailure:
    # OSError's own text carries the absolute path; records must only show the path as given.
    reason = exc.strerror or type(exc).__name__
    return ToolFailure(f"{tool}: {reason}: {shown_path}")


def _require_regular_file(tool: str, path: Path, shown_path: str) -> None:
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ToolFailure(f"{tool}: file not found: {shown_path}") from None
    except OSError as exc:
        raise _os_failure(tool, exc, shown_path) from None
    if stat.S_ISDIR(mode):
        raise ToolFailure(f"{tool}: is a directory, not a file: {shown_path}")
    if not stat.S_ISREG(mode):
        # A FIFO or device would block or stream forever.
        raise ToolFailure(f"{tool}: not a regular file: {shown_path}")


def read_file(paths: WorkspacePaths, params: Mapping[str, Any]) -> str:
    """``Read(file_path, offset=1, limit=2000)``: the lines numbered like ``cat -n``.

    ``offset`` is the 1-based line to start from; each line is the line number right-aligned in
    six columns, a tab, and the text. An empty file reads as ``""``; an offset past the end is an
    error.
    """
    args = ToolParams("Read", params, ("file_path", "offset", "limit"))
    raw = args.required_str("file_path")
    offset = args.optional_int("offset", minimum=1, default=1) or 1
    limit = args.optional_int("limit", minimum=1, default=DEFAULT_READ_LIMIT) or DEFAULT_READ_LIMIT
    path = paths.resolve(raw)
    _require_regular_file("Read", path, raw)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _os_failure("Read", exc, raw) from None
    if not data:
        return ""
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if offset > len(lines):
        raise ToolFailure(f"Read: offset {offset} is past the end of {raw} ({len(lines)} lines)")
    selected = lines[offset - 1 : offset - 1 + limit]
    return "\n".join(f"{number:6d}\t{line}" for number, line in enumerate(selected, start=offset))


def write_file(paths: WorkspacePaths, params: Mapping[str, Any]) -> str:
    """``Write(file_path, content)``: create or replace the file, creating parent directories."""
    args = ToolParams("Write", params, ("file_path", "content"))
    raw = args.required_str("file_path")
    content = args.required_str("content", allow_empty=True)
    path = paths.resolve(raw)
    if path.is_dir():
        raise ToolFailure(f"Write: is a directory, not a file: {raw}")
    existed = path.exists()
    data = content.encode("utf-8", errors="surrogateescape")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise _os_failure("Write", exc, raw) from None
    verb = "updated" if existed else "created"
    return f"{verb} {paths.display(path)} ({len(data)} bytes)"


def edit_file(paths: WorkspacePaths, params: Mapping[str, Any]) -> str:
    """``Edit(file_path, old_string, new_string, replace_all=False)``: exact string replacement.

    ``old_string`` must occur exactly once unless ``replace_all`` is true; it must occur at least
    once in any case, and differ from ``new_string``. Bytes that are not UTF-8 survive unchanged.
    """
    args = ToolParams("Edit", params, ("file_path", "old_string", "new_string", "replace_all"))
    raw = args.required_str("file_path")
    old = args.required_str("old_string")
    new = args.required_str("new_string", allow_empty=True)
    replace_all = args.optional_bool("replace_all")
    if old == new:
        raise ToolFailure("Edit: old_string and new_string are the same; nothing to change")
    path = paths.resolve(raw)
    _require_regular_file("Edit", path, raw)
    try:
        text = path.read_bytes().decode("utf-8", errors="surrogateescape")
    except OSError as exc:
        raise _os_failure("Edit", exc, raw) from None
    count = text.count(old)
    if count == 0:
        raise ToolFailure(f"Edit: old_string not found in {raw}")
    if count > 1 and not replace_all:
        raise ToolFailure(
            f"Edit: old_string occurs {count} times in {raw}; "
            "add surrounding context to make it unique, or set replace_all"
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    try:
        path.write_bytes(updated.encode("utf-8", errors="surrogateescape"))
    except OSError as exc:
        raise _os_failure("Edit", exc, raw) from None
    replaced = count if replace_all else 1
    plural = "" if replaced == 1 else "s"
    return f"edited {paths.display(path)}: {replaced} replacement{plural}"
