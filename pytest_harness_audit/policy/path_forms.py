"""Other spellings of one file path that a tool or a file system opens as the same file.

* ``file:`` URIs (``file:///w/%2eenv``): a tool taking a URI opens its decoded path (``/w/.env``);
* Windows spellings: ``\\`` separates parts, and trailing dots and spaces of a part are dropped
  (``sub\\.env .`` opens ``sub/.env``);
* a fixed-name credential file in another case (``ID_RSA``), on a case-insensitive file system.

A plain path (:func:`plain_path`) has no other spelling and no dot part to normalise: the
commonest paths so skip all of this.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from typing import Any, Final
from urllib.parse import unquote

#: What the URL standard strips from both ends of a URL, and removes from anywhere in it.
_C0_OR_SPACE: Final = "".join(map(chr, range(0x21)))
_TAB_OR_NEWLINE: Final = str.maketrans("", "", "\t\n\r")


# posixpath.normpath's C core (Python 3.11+), called without its Python wrapper: a compiled
# caller then runs no Python frame for it
_NORMPATH_CORE: Final[Any] = getattr(posixpath, "_path_normpath", None)


def join_path(folder: str, path: str) -> str:
    """``posixpath.join(folder, path)``, without a Python frame in the compiled build."""
    if path.startswith("/"):
        return path
    if not folder or folder.endswith("/"):
        return folder + path
    return folder + "/" + path


def normal_path(path: str) -> str:
    """``posixpath.normpath(path)``, without a Python frame in the compiled build."""
    if _NORMPATH_CORE is None:  # pragma: no cover - Python 3.10
        return posixpath.normpath(path)
    normal: str = _NORMPATH_CORE(path)
    return normal or "."


def plain_path(path: str) -> bool:
    """Whether ``path`` is in its one normal form: no dot part (``./``, ``../``, a dotfile), no
    doubled or trailing slash, no backslash, no trailing dot or space, no ``file:`` scheme and
    no upper-case letter beside an underscore (``ID_RSA``)."""
    # (prefix and suffix tests, not slices: a compiled build makes no string for them)
    return not (
        path.startswith(".")
        or "/." in path
        or "//" in path
        or path.endswith(("/", ".", " "))
        or "\\" in path
        or (path[4:5] == ":" and path[:4].lower() == "file")
        or ("_" in path and not path.islower())
    )


def file_uri_path(uri: str) -> str | None:
    """The local path a ``file:`` URI names, as a URL parser hands it to ``open``; ``None`` for
    any other string.

    Read as the WHATWG URL standard reads it (browsers, Node, most MCP servers), so that no
    spelling of a ``file:`` URI passes for something else: spaces and control characters at
    either end, and tabs and newlines anywhere (even inside the scheme), are dropped; the
    scheme is any case; the query and fragment are dropped; the host and path are
    percent-decoded once (``file:///w/%2eenv`` → ``/w/.env``); an empty path is ``/``
    (``file:`` names the root); the path ends at a decoded NUL, where the OS ends the name it
    opens. ``localhost`` (any case) is this machine; another host, even one no URL parser
    accepts (``file://[x/.env``), is a share ``//host/path``: still a path, matched by its tail.
    Backslashes are kept (:func:`windows_form` reads them as separators).
    """
    if ":" not in uri:
        return None
    text = uri.strip(_C0_OR_SPACE).translate(_TAB_OR_NEWLINE)
    if text[:5].lower() != "file:":
        return None
    rest = text[5:].partition("#")[0].partition("?")[0]
    host = ""
    if rest[:2] == "//":
        host, slash, tail = rest[2:].partition("/")
        host, rest = unquote(host), slash + tail
    path = unquote(rest).partition("\x00")[0] or "/"
    return path if host.lower() in ("", "localhost") else "//" + host + path


def windows_form(path: str) -> str | None:
    """``path`` as Windows opens it: ``\\`` a separator, trailing dots and spaces of each part
    dropped (``.env.`` and ``.env `` open ``.env``); ``None`` when that changes nothing."""
    if "\\" not in path and path[-1:] not in (".", " ") and "./" not in path and " /" not in path:
        return None
    parts = path.replace("\\", "/").split("/")
    kept = [part if part in (".", "..") else part.rstrip(" .") for part in parts]
    if kept and kept[-1] == "" and parts[-1] != "":
        return None  # a name of dots or spaces only: no file Windows would open by it
    form = "/".join(kept)
    return None if form == path or not form else form


def normalise_path(path: str, root: str | None) -> str:
    """Lexically normalise a path (``a/../.env`` → ``.env``), relative to ``root`` inside it.

    ``root`` is an absolute directory (a trailing slash is tolerated).
    """
    if "/." in path or "//" in path or path[:1] == "." or (path[-1:] == "/" and len(path) > 1):
        path = normal_path(path)
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


_PATH_MAX: Final = 4096
#: ``/proc/<pid>/cwd`` at the start of a path (a tool runs in the workspace: its cwd is the root).
PROC_CWD: Final = re.compile(r"/proc/(?:self|thread-self|[0-9]+)(?:/task/[0-9]+)?/cwd(?=/|$)")


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
    if len(joined) > _PATH_MAX:
        return None  # no system call opens it: nothing to resolve, and no time spent trying
    try:
        real = os.path.realpath(joined)
    except (OSError, ValueError):  # an embedded NUL byte, a name too long
        return None
    resolved = normalise_path(real, _real_root(root))
    return None if resolved == normalise_path(joined, root) else resolved
