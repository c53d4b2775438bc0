"""Keep every path a tool touches inside the workspace root.

A path parameter is joined to the root (relative paths are relative to it, a leading ``~`` means
the root, as ``HOME`` does for ``Bash``), then resolved with every symlink followed — the final
component and every intermediate directory. If the result is not the root or below it, the tool
refuses with ``path escapes the workspace: <path>``, whatever the policy decided: a test machine
is never touched by a workspace tool.
"""

from __future__ import annotations

import os
from pathlib import Path

from pytest_harness_audit.tools.outcome import ToolFailure


class PathEscapeError(ToolFailure):
    """A path parameter resolves outside the workspace root."""

    def __init__(self, raw: str) -> None:
        super().__init__(f"path escapes the workspace: {raw}")
        self.raw = raw


class WorkspacePaths:
    """Resolution and display of paths relative to one workspace root."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self._root_str = str(self.root)
        self._root_prefix = self._root_str.rstrip(os.sep) + os.sep

    def resolve(self, raw: str) -> Path:
        """The real path of ``raw`` inside the root; raises :class:`PathEscapeError` outside it."""
        if raw == "~" or raw.startswith("~/"):
            raw_joined = os.path.join(self._root_str, raw[2:])
        else:
            raw_joined = os.path.join(self._root_str, raw)
        try:
            real = os.path.realpath(raw_joined)
        except (ValueError, OSError) as exc:  # embedded NUL byte, symlink loop on some platforms
            raise ToolFailure(f"invalid path {raw!r}: {exc}") from None
        if not self.contains(real):
            raise PathEscapeError(raw)
        return Path(real)

    def contains(self, real_path: str) -> bool:
        """True when the already-resolved ``real_path`` is the root or lies below it."""
        return real_path == self._root_str or real_path.startswith(self._root_prefix)

    def display(self, path: Path) -> str:
        """``path`` relative to the root in posix form (``.`` for the root itself)."""
        relative = os.path.relpath(path, self._root_str)
        return Path(relative).as_posix()
