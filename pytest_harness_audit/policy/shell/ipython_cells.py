"""IPython's own input syntax, read as the shell commands and files it amounts to.

IPython (``ipython -c``, ``ipython x.ipy``, a Jupyter kernel behind a notebook or a code tool)
runs more than Python. In one cell:

* a ``!command`` line (``files = !ls`` too, ``!!command``), ``%system``, ``%sx`` and ``%sc``
  run the command;
* the alias magics run the program they are named after: ``%rm``, ``%cp``, ``%mv``, ``%cat``,
  ``%mkdir``, ``%rmdir``, ``%ls`` and its forms, ``%less``, ``%more``, ``%man``; an alias
  ``%alias NAME COMMAND`` defines runs its command;
* ``%load F``, ``%pycat F`` and ``%pfile F`` read ``F``; ``%save F``, ``%logstart F`` and
  ``%%writefile F`` write it; ``%run F`` runs it (``python3 F``, ``ipython`` for a notebook);
  python-dotenv's ``%dotenv [F]`` reads ``F`` (``.env``);
* the cell magics ``%%bash``, ``%%sh``, ``%%system`` and ``%%!`` run the cell as a script,
  ``%%script PROG``, ``%%perl``, ``%%ruby`` and ``%%python3`` as that program's standard input;
* ``%cd D``, ``%pushd D`` and ``%popd`` move the kernel: what runs after them runs there.
  A ``!cd D`` moves only its own shell.

With automagic (IPython's default), a one-line cell runs a magic or an alias without its
``%``: ``rm -rf app`` or ``cat .env`` alone is the command, as IPython reads it (not a line of
a longer cell, not an assignment ``ls = 3``).

No line of valid Python starts with ``!`` (other than ``!=``) or ``%``, and a lone ``rm -rf
app`` is no Python statement: reading these forms in the Python a tool or ``python -c`` is
given judges no Python program otherwise.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

_SHELL_LINE: Final = re.compile(r"\s*(?:[\w.,\[\]\s]+=\s*)?(?:!!?(?!=)|%(?:system|sx)\b)(.*)")
_CELL_MAGIC: Final = re.compile(r"\s*%%(!|\w+)")
_LINE_MAGIC: Final = re.compile(r"\s*%(\w+)")
#: A one-line cell's first word and the rest, for automagic.
_BARE: Final = re.compile(r"\s*([A-Za-z_]\w*)(?:\s+(.*))?")
_SHELL_MAGICS: Final = frozenset({"!", "bash", "sh", "system"})
_PROGRAM_MAGICS: Final = frozenset({"perl", "ruby", "python", "python2", "python3", "pypy"})
#: IPython's default aliases on POSIX systems, as the command each runs.
_ALIASES: Final = {
    "cat": "cat", "cp": "cp", "mkdir": "mkdir", "mv": "mv", "rm": "rm", "rmdir": "rmdir",
    "ls": "ls -F", "ll": "ls -F -l", "lf": "ls -F -l", "lk": "ls -F -l", "ldir": "ls -F -l",
    "lx": "ls -F -l", "less": "less", "more": "more", "man": "man", "clear": "clear",
}  # fmt: skip
#: Line magics that read the file they name, write it, or move the kernel.
_READERS: Final = frozenset({"load", "pycat", "pfile"})
_WRITERS: Final = frozenset({"save", "logstart"})
_MOVES: Final = frozenset({"cd", "pushd", "popd"})
#: Line magics read here, also run bare by automagic in a one-line cell.
_READ_MAGICS: Final = frozenset(
    {"system", "sx", "sc", "run", "dotenv", "alias", *_READERS, *_WRITERS, *_MOVES}
)


class CellReading:
    """The Python lines and the shell scripts of IPython cells read in order (module doc).

    A kernel keeps its folder and its aliases from one cell to the next: a script after a
    ``%cd`` starts with the moves made before it."""

    __slots__ = ("aliases", "code", "moves", "scripts")

    def __init__(self) -> None:
        self.code: list[str] = []
        self.scripts: list[str] = []
        self.moves: list[str] = []
        self.aliases: dict[str, str] = {}

    def cell(self, body: str) -> None:
        """Read one cell's text."""
        magic = _CELL_MAGIC.match(body)
        if magic is not None:
            first, _, rest = body.partition("\n")
            script = _cell_script(magic.group(1), first[magic.end(1) :].split(), rest)
            if script is not None:
                self._add(script)
                return
            body = rest  # `%%time`, `%%capture`: the rest is Python
        if "\n" not in body.strip() and self._automagic(body):
            return
        for line in body.splitlines():
            shell = _SHELL_LINE.fullmatch(line)
            if shell is not None:
                self._add(shell.group(1))
            elif (found := _LINE_MAGIC.match(line)) is not None:
                self._magic(found.group(1), line[found.end() :])
            else:
                self.code.append(line)

    def _automagic(self, line: str) -> bool:
        """Read a one-line cell that runs a magic or an alias without its ``%``."""
        bare = _BARE.fullmatch(line)
        if bare is None:
            return False
        name, rest = bare.group(1), bare.group(2) or ""
        if not rest or (rest[:1] in ("=", ",") and rest[:2] != "=="):
            return False  # `ls = 3`, `cat, dog = pets`: Python; `rm` alone runs nothing
        if name not in _ALIASES and name not in self.aliases and name not in _READ_MAGICS:
            return False
        self._magic(name, " " + rest)
        return True

    def _magic(self, name: str, rest: str) -> None:
        words = _words(rest)
        if name in _MOVES:
            self.moves.append(shlex.join([name, *words[:1]]) if name != "popd" else "popd")
        elif name == "alias" and len(words) > 1:
            self.aliases[words[0]] = rest.strip()[len(words[0]) :].strip()
        elif name in self.aliases or name in _ALIASES:
            command = self.aliases.get(name) or _ALIASES[name]
            self._add(f"{command} {rest.strip()}".strip())
        elif (script := _line_script(name, words, rest)) is not None:
            self._add(script)

    def _add(self, script: str) -> None:
        self.scripts.append("\n".join([*self.moves, script]) if self.moves else script)


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _cell_script(magic: str, words: list[str], body: str) -> str | None:
    """A cell magic's body as the shell script it amounts to; ``None`` for Python's."""
    if magic in _SHELL_MAGICS:
        return body
    if magic in ("script", "writefile") and not words:
        return ""
    if magic == "script":
        return _heredoc(shlex.join(words[:1]), body)
    if magic == "writefile":  # the file a later `%run` or `!python` runs
        return _heredoc(f"cat {'>>' if '-a' in words else '>'} {shlex.quote(words[-1])}", body)
    if magic in _PROGRAM_MAGICS:
        return _heredoc(magic, body)
    return None


def _line_script(magic: str, words: list[str], rest: str) -> str | None:
    """A line magic as the shell command it amounts to (``None``: nothing read)."""
    operands = [w for w in words if not w.startswith("-")]
    if magic in ("system", "sx"):
        return rest.strip()
    if magic == "sc":
        return rest.partition("=")[2].strip() or rest.strip()
    if magic == "run":
        if "-m" in words or not operands:
            return None
        program = "ipython" if operands[0].lower().endswith(".ipynb") else "python3"
        return shlex.join([program, *operands])
    if magic == "dotenv":  # python-dotenv's extension loads the env file into the kernel
        return shlex.join(
            ["python3", "-m", "dotenv", "-f", operands[0] if operands else ".env", "list"]
        )
    if magic in _READERS and operands:
        return shlex.join(["cat", "--", operands[-1]])
    if magic in _WRITERS and operands:
        return f"cat /dev/null >> {shlex.quote(operands[0])}"
    return None


def _heredoc(command: str, body: str) -> str:
    end = "NOTEBOOK_CELL"
    while end in body:
        end += "_"
    return f"{command} <<'{end}'\n{body}\n{end}\n"


#: Text that may hold an IPython form: a line starting with ``!`` or ``%``.
_IPYTHON_LINE: Final = re.compile(r"(?m)^[ \t]*(?:[\w.,\[\] \t]+=[ \t]*)?(?:!(?!=)|%)")


def ipython_scripts(code: str) -> list[str]:
    """The shell scripts IPython would run for ``code`` given as one cell, besides its Python
    (module doc); none for text with no IPython form."""
    one_line = "\n" not in code.strip()
    if _IPYTHON_LINE.search(code) is None and not (one_line and _BARE.fullmatch(code)):
        return []
    reading = CellReading()
    reading.cell(code)
    return reading.scripts


__all__ = ["CellReading", "ipython_scripts"]
