"""``cmd /c TEXT`` as the POSIX commands it amounts to.

PowerShell runs ``cmd`` like any program; its text is another shell's: ``del /s /q app`` (and
``rd /s``) deletes a tree, ``type`` reads, ``copy``/``xcopy``/``robocopy`` copy (``/MIR`` and
``/PURGE`` delete what the source lacks), ``move``/``ren`` move. :func:`cmd_text` reads each
statement (``&``, ``&&``, ``||``, ``|`` split, ``^`` escapes dropped, ``%USERPROFILE%`` the home
folder) as its POSIX form; a command named by a variable (``%x%``) cannot be read.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.powershell_words import Word

_CMD_PROGRAMS: Final = {"del": "rm", "erase": "rm", "rd": "rm", "rmdir": "rm", "type": "cat",
                 "copy": "cp", "xcopy": "cp -r", "robocopy": "cp -r", "move": "mv",
                 "ren": "mv", "rename": "mv"}  # fmt: skip


def cmd_text(rest: list[Word]) -> tuple[list[str], bool]:
    """``cmd``'s arguments (``/c TEXT``) as POSIX statements, and whether all were read."""
    values = [word.value for word in rest]
    if any(value is None for value in values):
        return [], False
    words = [value or "" for value in values]
    lowered = [word.lower() for word in words]
    start = next((i for i, word in enumerate(lowered) if word in ("/c", "/k", "/r")), None)
    if start is None:
        return [], True
    posix: list[str] = []
    known = True
    for part in re.split(r"&&|\|\||&|\|", " ".join(words[start + 1 :]).replace("^", "")):
        statement = cmd_statement(part)
        if statement is None:
            known = False
        elif statement:
            posix.append(statement)
    return posix, known


def cmd_statement(text: str) -> str | None:
    """One ``cmd`` statement as POSIX (``""``: nothing to read; ``None``: built at run time)."""
    words = text.split()
    if not words:
        return ""
    if "%" in words[0] or "!" in words[0]:
        return None
    name = words[0].lower().removesuffix(".exe")
    args = [
        re.sub(
            r"%(\w+)%",
            lambda m: (
                "$HOME" if m.group(1).lower() in ("userprofile", "homepath") else "$" + m.group(1)
            ),
            w,
        )
        for w in words[1:]
    ]
    program = _CMD_PROGRAMS.get(name)
    if program is None:
        return " ".join(
            [
                shlex.quote(words[0]),
                *(
                    shlex.quote(a.replace("\\", "/")) if "$" not in a else a.replace("\\", "/")
                    for a in args
                ),
            ]
        )
    flags = {a.lower() for a in args if a.startswith("/")}
    operands = [a.replace("\\", "/") for a in args if not a.startswith("/")]
    if program == "rm" and ("/s" in flags or (name in ("rd", "rmdir") and "/s" in flags)):
        program = "rm -r -f"
    elif program == "rm" and name in ("rd", "rmdir"):
        program = "rmdir"
    elif name == "robocopy" and flags & {"/mir", "/purge"}:
        return " ".join(["rsync -a --delete", *operands])
    return " ".join([program, *(a if "$" in a else shlex.quote(a) for a in operands)])


__all__ = ["cmd_statement", "cmd_text"]
