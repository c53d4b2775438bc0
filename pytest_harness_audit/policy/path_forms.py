"""Other spellings of one file path that a tool or a file system opens as the same file.

* ``file:`` URIs (``file:///w/%2eenv``): a tool taking a URI opens its decoded path (``/w/.env``);
* Windows spellings: ``\\`` separates parts, and trailing dots and spaces of a part are dropped
  (``sub\\.env .`` opens ``sub/.env``);
* a fixed-name credential file in another case (``ID_RSA``), on a case-insensitive file system.

A plain path (:func:`plain_path`) has no other spelling and no dot part to normalise: the
commonest paths so skip all of this.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote

#: What the URL standard strips from both ends of a URL, and removes from anywhere in it.
_C0_OR_SPACE: Final = "".join(map(chr, range(0x21)))
_TAB_OR_NEWLINE: Final = str.maketrans("", "", "\t\n\r")


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
