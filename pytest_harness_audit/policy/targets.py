"""Target extraction: what a tool call acts on (DESIGN §4 "Targets")."""

from __future__ import annotations

import functools
import os
import posixpath
import re
from collections.abc import Mapping
from typing import Any

#: Parameter names in precedence order for the primary target.
PRIMARY_KEYS = ("file_path", "path", "pattern", "command", "url", "to")
#: Further parameters whose string values are targets too (MCP servers use these).
EXTRA_KEYS = ("repo_path", "source", "destination", "notebook_path", "glob")
#: Parameters holding file paths (matched also in normalised form).
FILE_KEYS = frozenset(
    {"file_path", "path", "repo_path", "source", "destination", "notebook_path", "paths"}
)
DISPLAY_LIMIT = 80

# A token inside a shell command that names a file: absolute, ./ ../ ~/ ~user/ $VAR/ ${VAR}/
# relative, or a dotfile / a relative path with a slash. Quotes and shell punctuation are not
# part of it; `@` starts one too (`curl -d @/p/.env`).
_PATH_CHAR = r"""[^\s'"`;|&<>()$]"""
_SHELL_PATH = re.compile(
    r"""(?:^|[\s=<>|&;(`'"@])("""
    rf"""(?:~[\w.-]*|\.{{1,2}}|\$\{{?[A-Za-z_]\w*\}}?)?/{_PATH_CHAR}*"""
    rf"""|\.[^\s'"`;|&<>()$/]+(?:/{_PATH_CHAR}*)?"""
    rf"""|[A-Za-z0-9_][^\s'"`;|&<>()$=]*/{_PATH_CHAR}*"""
    # a bare file name with an extension (`cat credentials.json`)
    r"""|[A-Za-z0-9_][\w-]*(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}(?=$|[\s'"`;|&<>)])"""
    r")"
)
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
    """Lexically normalise a path (``a/../.env`` → ``.env``), relative to ``root`` inside it.

    ``root`` is an absolute directory (a trailing slash is tolerated).
    """
    if "/." in path or "//" in path or path[:1] == ".":
        path = posixpath.normpath(path)
        # normpath keeps a leading "//" (POSIX); matching wants one canonical form
        if path.startswith("//"):
            path = path[1:]
    if root and path.startswith(root):
        rest = path[len(root) :]
        if not rest:
            return "."
        if rest[0] == "/" or root[-1] == "/":  # tolerate a root given with a trailing slash
            return rest.lstrip("/") or "."
    return path


@functools.lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    try:
        return os.path.realpath(root)
    except (OSError, ValueError):
        return root


def resolved_path(path: str, root: str) -> str | None:
    """Where ``path`` leads with every symlink followed, when that differs from its lexical form.

    ``path`` is taken relative to the workspace ``root`` (``~`` is the root, as for the tools);
    the answer is relative to the root when inside it, else absolute. ``None`` when nothing
    changes or the path cannot be resolved. A symlink in the workspace (``notes.txt`` → ``.env``)
    is so judged as the file it opens.
    """
    if path == "~" or path.startswith("~/"):
        path = path[2:]
    joined = path if path.startswith("/") else os.path.join(root, path)
    try:
        real = os.path.realpath(joined)
    except (OSError, ValueError):  # an embedded NUL byte, a name too long
        return None
    resolved = normalise_path(real, _real_root(root))
    return None if resolved == normalise_path(joined, root) else resolved


def command_paths(command: str) -> list[str]:
    """Paths named inside a shell command (absolute, ``./``, ``../``, ``~/``, dotfiles, a/b)."""
    found = []
    for match in _SHELL_PATH.finditer(command):
        token = match.group(1).rstrip(".,:")
        if len(token) > 1 and not token.startswith(_SYSTEM_PREFIXES) and "://" not in token:
            found.append(token)
    return found


_FILE = 1
_COMMAND = 2
_OTHER = 3
_KEY_KINDS = {
    "file_path": _FILE,
    "path": _FILE,
    "pattern": _OTHER,
    "command": _COMMAND,
    "url": _OTHER,
    "to": _OTHER,
    "repo_path": _FILE,
    "source": _FILE,
    "destination": _FILE,
    "notebook_path": _FILE,
    "glob": _OTHER,
}
_KEY_ORDER = {key: index for index, key in enumerate((*PRIMARY_KEYS, *EXTRA_KEYS))}
_PATTERN_ORDER = _KEY_ORDER["pattern"]


def all_targets(params: Mapping[str, Any], root: str | None = None) -> list[str]:
    """Every target of a call, de-duplicated in order: primary first, then the rest.

    File parameters add their normalised form; a ``command`` adds the paths inside it, and a
    ``paths`` list adds each of its strings. With a workspace ``root``, a file path that leads
    elsewhere through a symlink also adds where it leads (:func:`resolved_path`).
    """
    if len(params) == 1:  # the commonest shape: one file_path, path or command
        ((key, value),) = params.items()
        kind = _KEY_KINDS.get(key)
        if kind == _FILE and type(value) is str:
            if root:  # where a workspace symlink leads counts too
                forms = [value]
                _add_path_forms(forms, value, root)
                return forms
            normal = normalise_path(value, root)
            return [value] if normal == value else [value, normal]
    found: list[tuple[int, str, int]] = []
    paths: Any = None
    for key, value in params.items():
        kind = _KEY_KINDS.get(key)
        if kind is not None:
            if type(value) is str:
                found.append((_KEY_ORDER[key], value, kind))
        elif key == "paths":
            paths = value
    if "pattern" in params and (
        type(params.get("file_path")) is str or type(params.get("path")) is str
    ):
        # beside a path, `pattern` is what to search for (Grep) or a filter inside the path
        # (Glob), not a file the call acts on
        found = [item for item in found if item[0] != _PATTERN_ORDER]
    if len(found) > 1:
        found.sort()
    targets: list[str] = []
    for _, value, kind in found:
        if value not in targets:
            targets.append(value)
        if kind == _FILE:
            _add_path_forms(targets, value, root)
        elif kind == _COMMAND:
            for path in command_paths(value):
                if path not in targets:
                    targets.append(path)
                _add_path_forms(targets, path, root)
    if isinstance(paths, (list, tuple)):
        for value in paths:
            if type(value) is str and value not in targets:
                targets.append(value)
                _add_path_forms(targets, value, root)
    return targets


def _add_path_forms(targets: list[str], path: str, root: str | None) -> None:
    """Append the normalised form of ``path`` and, with a root, where a symlink leads it."""
    normal = normalise_path(path, root)
    if normal not in targets:
        targets.append(normal)
    if root:
        resolved = resolved_path(path, root)
        if resolved is not None and resolved not in targets:
            targets.append(resolved)
