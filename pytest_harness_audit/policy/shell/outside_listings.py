"""What a listing of a folder outside the workspace prints that the rules care about.

``ls -a ~ | xargs cat``, ``ls ~/.ssh | xargs -I{} cat ~/.ssh/{}``, ``find ~/.aws -type f |
xargs cat``: the folder is on the machine the call runs on, so its credential-looking entries
are named as it holds them now (``~/.netrc``, ``~/.ssh/id_work``); a folder that holds nothing
but credentials (``.ssh``, ``.aws``, ``.docker``, ``.kube``, ``.gnupg``) names its usual files
whether or not they are there yet. A recursive listing (``find``, ``ls -R``) names the usual
credential files under the folder too (``~/.ssh/id_rsa`` of ``find ~``). Other entries are
left out: they decide nothing. A glob outside the workspace (``cat ~/.*``) matches the
credential files of its folder the same way (:func:`outside_glob`).
"""

from __future__ import annotations

import os
import posixpath
from typing import Final, Protocol

from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.sensitive import is_credential_path

#: Folders that hold credentials only, with the files they usually hold.
CREDENTIAL_FOLDERS: Final = {
    ".ssh": ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "config"),
    ".aws": ("credentials", "config"),
    ".docker": ("config.json",),
    ".kube": ("config",),
    ".gnupg": ("secring.gpg", "private-keys-v1.d"),
}
#: Most entries of one folder looked at, and most characters of a ``.gitignore`` read.
_MAX_ENTRIES: Final = 4096
_MAX_IGNORE: Final = 64 * 1024


def outside_names(folder: str, real: str | None, hidden: bool, recursive: bool) -> list[str]:
    """The credential files a listing of ``folder`` (outside the workspace; ``real``: its real
    path when known) prints, as paths under ``folder``; ``hidden``: dotfiles are listed."""
    base = real
    if base is None and folder.startswith(("/", "~")):
        base = os.path.expanduser(folder)
    if base is None:
        return []
    if os.path.lexists(base) and not os.path.isdir(base) and not recursive:
        return [folder]  # `ls -d ~/.netrc`, `ls ~/.netrc`: the name
    prefix = "" if folder in (".", "./") else folder.rstrip("/") + "/"
    usual = CREDENTIAL_FOLDERS.get(posixpath.basename(folder.rstrip("/")), ())
    found = [prefix + name for name in usual]
    folders = [""]
    if recursive:
        folders.extend(f"{name}/" for name in CREDENTIAL_FOLDERS)
    for sub in folders:
        for entry in _entries(os.path.join(base, sub)):
            path = prefix + sub + entry
            if (hidden or recursive or entry[:1] != ".") and is_credential_path(path):
                found.append(path)
        usual = () if not sub else CREDENTIAL_FOLDERS.get(sub.rstrip("/"), ())
        if os.path.isdir(os.path.join(base, sub)):
            found.extend(prefix + sub + name for name in usual)
    return list(dict.fromkeys(found))


def outside_glob(pattern: str) -> list[str]:
    """The credential files a glob outside the workspace (``~/.*``, ``/root/.n*``) matches on
    this machine; none for a relative glob, or one with a wildcard before its last part."""
    head, _, last = pattern.rpartition("/")
    if not head or pattern[:1] not in ("/", "~") or any(c in head for c in "*?["):
        return []
    found: list[str] = []
    for entry in _entries(os.path.expanduser(head or "/")):
        if entry[:1] == "." and last[:1] != ".":
            continue  # `*` matches no dotfile
        path = f"{head}/{entry}"
        if wildcards.fnmatchcase(entry, last) and is_credential_path(path):
            found.append(path)
    return found


class _Folders(Protocol):
    def workspace_folder(self, folder: str) -> str | None:
        """The real path of a workspace folder (``None``: none, or outside the workspace)."""
        ...


def ignored(path: str, lister: _Folders) -> bool:
    """Whether the workspace's top ``.gitignore`` surely leaves out the untracked file ``path``
    (a plain pattern naming it or a folder it is in; a file with a ``!`` pattern leaves out
    nothing: which wins is not worked out here)."""
    top = lister.workspace_folder(".")
    try:
        with open(os.path.join(top or "", ".gitignore"), encoding="utf-8") as handle:
            lines = [line.strip() for line in handle.read(_MAX_IGNORE).splitlines()]
    except (OSError, UnicodeError):
        return False
    patterns = [line for line in lines if line and line[:1] != "#"]
    if top is None or any(p[:1] == "!" or "\\" in p for p in patterns):
        return False
    parts = path.removeprefix("./").split("/")
    for pattern in patterns:
        anchored = "/" in pattern.rstrip("/")
        bare = pattern.strip("/")
        for depth in range(len(parts) if "**" not in pattern else 0):
            if pattern.endswith("/") and depth == len(parts) - 1:
                continue  # `build/`: folders only
            name = "/".join(parts[: depth + 1]) if anchored else parts[depth]
            if name.count("/") == bare.count("/") and wildcards.fnmatchcase(name, bare):
                return True
    return False


def _entries(folder: str) -> list[str]:
    """The names in ``folder`` (none when it cannot be listed), the first few thousand."""
    try:
        with os.scandir(folder) as entries:
            names: list[str] = []
            for entry in entries:
                names.append(entry.name)
                if len(names) >= _MAX_ENTRIES:
                    break
            return sorted(names)
    except (OSError, ValueError):
        return []


__all__ = ["CREDENTIAL_FOLDERS", "ignored", "outside_glob", "outside_names"]
