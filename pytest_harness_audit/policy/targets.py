"""Target extraction: what a tool call acts on (DESIGN §4 "Targets")."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any

#: Parameter names in precedence order for the primary target.
PRIMARY_KEYS = ("file_path", "path", "pattern", "command", "url")
#: Further parameters whose string values are targets too (MCP servers use these).
EXTRA_KEYS = ("repo_path", "source", "destination", "notebook_path", "glob")
#: Parameters holding file paths (matched also in normalised form).
FILE_KEYS = frozenset(
    {"file_path", "path", "repo_path", "source", "destination", "notebook_path", "paths"}
)
DISPLAY_LIMIT = 80

# A token inside a shell command that names a file: absolute, ./ ../ ~/ relative, or a
# dotfile / a relative path with a slash. Quotes and shell punctuation are not part of it.
_SHELL_PATH = re.compile(r"""(?:^|[\s=<>|&;(`'"])((?:~|\.{1,2})?/[^\s'"`;|&<>()$]*|\.[^\s'"`;|&<>()$/]+(?:/[^\s'"`;|&<>()$]*)?|[A-Za-z0-9_][^\s'"`;|&<>()$=]*/[^\s'"`;|&<>()$]*)""")
_SYSTEM_PREFIXES = ("/dev/", "/proc/", "/sys/")


def display_target(target: str | None) -> str | None:
    """The display form: the first 80 characters and ``…`` when longer. Never used to match."""
    if target is None or len(target) <= DISPLAY_LIMIT:
        return target
    return target[:DISPLAY_LIMIT] + "…"


def primary_target(params: Mapping[str, Any]) -> str | None:
    """First present string of ``file_path > path > pattern > command > url``."""
    for key in PRIMARY_KEYS:
        value = params.get(key)
        if type(value) is str:
            return value
    return None


def normalise_path(path: str, root: str | None) -> str:
    """Lexically normalise a path (``a/../.env`` → ``.env``), relative to ``root`` inside it."""
    if root and (path == root or path.startswith(root.rstrip("/") + "/")):
        path = path[len(root.rstrip("/")) + 1 :] or "."
    if "//" in path or "/." in path or path.startswith("."):
        return posixpath.normpath(path)
    return path


def command_paths(command: str) -> list[str]:
    """Paths named inside a shell command (absolute, ``./``, ``../``, ``~/``, dotfiles, a/b)."""
    found = []
    for match in _SHELL_PATH.finditer(command):
        token = match.group(1).rstrip(".,:")
        if len(token) > 1 and not token.startswith(_SYSTEM_PREFIXES) and "://" not in token:
            found.append(token)
    return found


def all_targets(params: Mapping[str, Any], root: str | None = None) -> list[str]:
    """Every target of a call, de-duplicated in order: primary first, then the rest.

    File parameters add their normalised form; a ``command`` adds the paths inside it.
    """
    targets: list[str] = []
    seen: set[str] = set()

    def add(value: str, is_file: bool) -> None:
        if value not in seen:
            seen.add(value)
            targets.append(value)
        if is_file:
            normal = normalise_path(value, root)
            if normal not in seen:
                seen.add(normal)
                targets.append(normal)

    for key in PRIMARY_KEYS:
        value = params.get(key)
        if type(value) is str:
            add(value, key in FILE_KEYS)
    for key in EXTRA_KEYS:
        value = params.get(key)
        if type(value) is str:
            add(value, key in FILE_KEYS)
    paths = params.get("paths")
    if isinstance(paths, list):
        for value in paths:
            if type(value) is str:
                add(value, True)
    command = params.get("command")
    if type(command) is str:
        for path in command_paths(command):
            add(path, True)
    return targets
