"""Folders git or Python take code from, and files put into them under their own names.

``cp pre-commit .git/hooks/``, ``install -m 755 pre-commit .git/hooks``, ``mv x.pth
site-packages/``, ``cp -r hooks .git/``: a copy into a folder writes the file of the source's
name there (a folder copied: its files under it). The reading otherwise leaves a file copied
out of the current directory as a copy elsewhere (``cp SOUL.md backup/`` is no persona write);
into a folder where git or Python take code from — inside a ``.git`` folder, the home folder
(or its ``.config``), a ``site-packages`` folder — the file it lands as is a write, judged as
``cp pre-commit .git/hooks/pre-commit`` is.
"""

from __future__ import annotations

import os
import posixpath
from typing import Final

from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.tools import COPY_OPTIONS, copy_operands

#: What an unknown set of files put under a folder git or Python take code from may write there.
CODE_FILES: Final = (
    "*", "config", "hooks/*", "commondir", ".git/config", ".git/hooks/*", ".gitconfig",
    ".config/git/config", ".curlrc", ".wgetrc", ".config/wget/wgetrc", "sitecustomize.py",
    "usercustomize.py", "x.pth",
)  # fmt: skip
_RECURSIVE: Final = frozenset({"-r", "-R", "--recursive", "-a", "--archive"})


def takes_code(folder: str, ctx: Context) -> bool:
    """Whether ``folder`` (from where the command runs) lies where git or Python take code
    from: in a ``.git`` folder, the home folder (or its ``.config``), a ``site-packages``."""
    forms = [posixpath.normpath(folder)]
    real = ctx.real_path(folder)
    if real is not None:
        forms.append(real)
    home = os.path.expanduser("~")
    for form in forms:
        parts = form.split("/")
        if ".git" in parts or "site-packages" in parts or form in ("~", "~/.config"):
            return True
        if form.rstrip("/") in (home, home + "/.config", home + "/.config/git", "/etc"):
            return True
    return False


def copied_in(name: str, args: list[str], ctx: Context) -> None:
    """Record the files ``cp``/``mv``/``install``/``rsync``/``ln`` put under a folder git or
    Python take code from (module doc)."""
    if name not in COPY_OPTIONS or not args:
        return
    options, operands, folder = copy_operands(name, args)
    sources = operands if folder is not None else operands[:-1]
    folder = folder if folder is not None else (operands[-1] if operands else None)
    if not sources or folder is None or "$" in folder or not takes_code(folder, ctx):
        return
    recursive = any(
        o in _RECURSIVE or (o[:1] == "-" and o[1:2] != "-" and set(o[1:]) & set("rRa"))
        for o in options
    )
    writes = ctx.reading.writes
    for source in sources[:256]:
        base = posixpath.basename(source.rstrip("/"))
        if base and base not in (".", ".."):
            writes.append(posixpath.join(folder, base))  # `cp pre-commit .git/hooks/`
        if recursive:  # `cp -r hooks .git/`, `rsync -a hooks/ .git/hooks/`: files under it
            writes.append(posixpath.join(folder, base or ".", "*"))
            writes.append(posixpath.join(folder, "*"))
            writes.extend(posixpath.join(folder, base or ".", f) for f in CODE_FILES[1:3])


__all__ = ["CODE_FILES", "copied_in", "takes_code"]
