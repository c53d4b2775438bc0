"""Other spellings of one file path that a tool or a file system opens as the same file.

* ``file:`` URIs (``file:///w/%2eenv``): a tool taking a URI opens its decoded path (``/w/.env``);
* Windows spellings: ``\\`` separates parts, and trailing dots and spaces of a part are dropped
  (``sub\\.env .`` opens ``sub/.env``);
* a fixed-name credential file in another case (``ID_RSA``), on a case-insensitive file system.

A plain path (:func:`plain_path`) has no other spelling and no dot part to normalise: the
commonest paths so skip all of this.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

_MAX_URI = 4096


def plain_path(path: str) -> bool:
    """Whether ``path`` is in its one normal form: no dot part (``./``, ``../``, a dotfile), no
    doubled or trailing slash, no backslash, no trailing dot or space, no ``file:`` scheme and
    no upper-case letter beside an underscore (``ID_RSA``)."""
    return not (
        path[:1] == "."
        or "/." in path
        or "//" in path
        or path[-1:] in ("/", ".", " ")
        or "\\" in path
        or path[:5].lower() == "file:"
        or ("_" in path and not path.islower())
    )


def file_uri_path(uri: str) -> str | None:
    """The local path of a ``file:`` URI, percent-decoded (``file:///w/%2eenv`` → ``/w/.env``);
    ``None`` for any other string."""
    if uri[:5].lower() != "file:" or len(uri) > _MAX_URI:
        return None
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    path = unquote(parts.path)
    if parts.netloc not in ("", "localhost"):
        path = "//" + parts.netloc + path  # a UNC share: still a path, matched by its tail
    return path or None


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
