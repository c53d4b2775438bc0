"""``make``: the recipe lines a run of ``make`` gives to the shell, read from the workspace.

The makefile (``-f FILE``/``--file=FILE``, in ``-C DIR``, else ``GNUmakefile``, ``makefile``,
``Makefile``) and the files it ``include``s are read; the targets named on the command line (else
``.DEFAULT_GOAL``, else the first target) and their prerequisites are followed, through explicit
and ``%`` pattern rules; the recipe lines are expanded with the makefile's variables (the last
assignment wins, ``define`` blocks included, ``NAME=value`` arguments override) and given to the
reading as scripts. Text make itself runs while it reads the makefile (``$(shell …)``,
``VAR != …``) is read as scripts too, and so is that of its own arguments, makefile or not
(``--eval=TEXT``, ``-E TEXT``, ``NAME:=value``; a ``$(file <FILE)`` there reads the file).

What cannot be followed makes the reading say so (``unreadable``, a warning): a recipe whose
command is a variable the makefile does not define (it comes from the environment), a
``SHELL`` the makefile replaces, ``$(eval …)``/``$(file …)``, a makefile or an expansion too large
to read, a makefile read from standard input by another route than ``-f -``.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Final, Protocol

#: Most targets followed, recipe lines read, ``include`` depth and expanded line length.
MAX_TARGETS: Final = 64
MAX_RECIPE_LINES: Final = 256
MAX_INCLUDE_DEPTH: Final = 8
MAX_EXPANDED: Final = 16_384
_MAKEFILES: Final = ("GNUmakefile", "makefile", "Makefile")
_ASSIGNMENT: Final = re.compile(
    r"^(?:export\s+|override\s+|private\s+)*([A-Za-z_.][A-Za-z0-9_.-]*)\s*(::?=|:::=|\?=|\+=|!=|=)\s*(.*)$"
)
_REFERENCE: Final = re.compile(
    r"\$(?:\(([A-Za-z_.][A-Za-z0-9_.-]*)\)|\{([A-Za-z_.][A-Za-z0-9_.-]*)\}|([A-Za-z_]))"
)
_SHELL_CALL: Final = re.compile(r"\$[({]shell\s+([^)}]*)[)}]")
_UNFOLLOWED: Final = re.compile(r"\$[({](?:eval|file)\s")
_FILE_READ = re.compile(r"\$[({]file\s*<\s*([^)}\s]+)")
#: Variables make defines itself (GNU make's built-in rules), and the automatic ones.
_BUILT_IN: Final = {
    "MAKE": "make", "CC": "cc", "CXX": "g++", "CPP": "cc -E", "RM": "rm -f", "AR": "ar",
    "AS": "as", "LD": "ld", "LEX": "lex", "YACC": "yacc", "FC": "f77", "PC": "pc",
    "MAKEFLAGS": "", "MFLAGS": "", "MAKECMDGOALS": "", "CURDIR": ".", "SHELL": "/bin/sh",
}  # fmt: skip
_FROM_ENVIRONMENT: Final = (
    "a make recipe runs a command from a variable the makefile does not define"
)
_AUTOMATIC: Final = frozenset("@<^+?*%|") | {"MAKEFILE_LIST", ".VARIABLES"}


class Runner(Protocol):
    """What the reader needs of the reading."""

    def script(self, text: str, args: list[str] | None = None) -> None:
        """Read ``text`` as a script run by a shell."""
        ...

    def unknown(self, why: str) -> None:
        """A shell runs a script whose text is not in the command."""
        ...

    def workspace_text(self, path: str) -> str | None:
        """The text of a workspace file, when the reading can see it."""
        ...


class _Makefile:
    """The rules and variables of a makefile and what it includes."""

    def __init__(self) -> None:
        self.variables: dict[str, str] = dict(_BUILT_IN)
        # a target's prerequisites and the recipes of its rules (one list a rule, shared by
        # every target the rule names)
        self.rules: dict[str, tuple[list[str], list[list[str]]]] = {}
        self.patterns: list[tuple[str, list[str], list[str]]] = []
        self.first: str | None = None
        self.parse_time: list[str] = []  # text make runs while reading
        self.unreadable: str | None = None

    def read(self, text: str, runner: Runner, folder: str, depth: int = 0) -> None:
        prefix = "\t"
        current: list[str] | None = None
        defining: tuple[str, list[str]] | None = None
        for line in _logical_lines(text):
            if defining is not None:
                if line.strip() == "endef":
                    self.variables[defining[0]] = "\n".join(defining[1])
                    defining = None
                else:
                    defining[1].append(line)
                continue
            if line.startswith(prefix) and current is not None:
                if line[len(prefix) :].strip():
                    current.append(line[len(prefix) :].strip())
                continue
            bare = line.split("#", 1)[0].strip()
            if not bare:
                continue
            self._parse_time(bare)
            if bare.startswith("define "):
                defining = (bare[7:].strip().split()[0] if bare[7:].strip() else "", [])
                current = None
                continue
            words = bare.split(None, 1)
            if words[0] in ("include", "-include", "sinclude") and len(words) > 1:
                current = None
                for name in self.expand(words[1]).split():
                    self._include(name, runner, folder, depth)
                continue
            assignment = _ASSIGNMENT.match(bare)
            if assignment is not None and ":" not in bare.split("=", 1)[0].rstrip(":"):
                current = None
                self._assign(*assignment.groups())
                if assignment.group(1) == ".RECIPEPREFIX":
                    prefix = self.expand(assignment.group(3))[:1] or "\t"
                continue
            current = self._rule(bare)

    def _parse_time(self, line: str) -> None:
        for found in _SHELL_CALL.finditer(line):
            self.parse_time.append(found.group(1))
        if _UNFOLLOWED.search(line):
            self.unreadable = "make evaluates text the reading does not follow ($(eval), $(file))"

    def _assign(self, name: str, operator: str, value: str) -> None:
        if operator == "!=":
            self.parse_time.append(value)
            return
        if name == "SHELL" and value.strip() not in ("/bin/sh", "/bin/bash", "sh", "bash"):
            self.unreadable = f"the makefile runs its recipes with another shell: {value.strip()}"
        if operator == "?=" and name in self.variables and name not in _BUILT_IN:
            return
        if operator == "+=":
            value = f"{self.variables.get(name, '')} {value}".strip()
        self.variables[name] = value

    def _include(self, name: str, runner: Runner, folder: str, depth: int) -> None:
        if depth >= MAX_INCLUDE_DEPTH:
            self.unreadable = "make includes makefiles too deep to follow"
            return
        path = posixpath.join(folder, name) if folder and not name.startswith("/") else name
        text = runner.workspace_text(path)
        if text is not None:
            self.read(text, runner, folder, depth + 1)

    def _rule(self, line: str) -> list[str] | None:
        colon = line.find(":")
        if colon <= 0 or line[colon + 1 : colon + 2] == "=":
            return None
        targets, rest = line[:colon], line[colon + 1 :].lstrip(":")
        if "=" in targets:
            return None
        if "=" in rest.split(";", 1)[0]:  # `target: VAR = value`, a target-specific variable
            assignment = _ASSIGNMENT.match(rest.strip())
            if assignment is not None:
                self._assign(*assignment.groups())
            return None
        prerequisites, _, inline = rest.partition(";")
        recipe: list[str] = [inline.strip()] if inline.strip() else []
        names = self.expand(targets).split()
        for name in names:
            if name == ".DEFAULT_GOAL":
                continue
            if "%" in name:
                self.patterns.append((name, prerequisites.split(), recipe))
                continue
            known = self.rules.setdefault(name, ([], []))
            known[0].extend(prerequisites.split())
            known[1].append(recipe)
            if self.first is None and not name.startswith("."):
                self.first = name
        return recipe

    def expand(self, text: str) -> str:
        """``text`` with the makefile's variables put in (a few rounds, bounded)."""
        for _ in range(8):
            expanded = _REFERENCE.sub(self._value, text)
            if len(expanded) > MAX_EXPANDED:
                self.unreadable = "a make variable expands to more than the reading follows"
                return expanded[:MAX_EXPANDED]
            if expanded == text:
                break
            text = expanded
        return text

    def _value(self, found: re.Match[str]) -> str:
        name = found.group(1) or found.group(2) or found.group(3)
        if name in _AUTOMATIC or name not in self.variables:
            return found.group(0)
        return self.variables[name]

    def recipes(self, targets: list[str]) -> list[str]:
        """The expanded recipe lines of ``targets`` (else the default goal) and prerequisites."""
        goal = self.variables.get(".DEFAULT_GOAL", "").strip() or self.first
        wanted = list(targets) or ([goal] if goal else [])
        seen: set[str] = set()
        lines: list[str] = []
        while wanted and len(seen) < MAX_TARGETS:
            name = wanted.pop(0)
            if name in seen:
                continue
            seen.add(name)
            found = self._find(name)
            if found is None:
                continue
            prerequisites, recipe = found
            wanted.extend(self.expand(" ".join(prerequisites)).split())
            for line in recipe:
                for part in self.expand(line).replace("$$", "$").split("\n"):
                    command = part.strip().lstrip("@-+ ")
                    if command.startswith(("$(", "${")):
                        self.unreadable = _FROM_ENVIRONMENT
                    lines.append(command)
        return lines

    def _find(self, name: str) -> tuple[list[str], list[str]] | None:
        if name in self.rules:
            prerequisites, recipes = self.rules[name]
            return prerequisites, [line for recipe in recipes for line in recipe]
        for pattern, prerequisites, recipe in self.patterns:
            head, _, tail = pattern.partition("%")
            if name.startswith(head) and name.endswith(tail) and len(name) >= len(head + tail):
                stem = name[len(head) : len(name) - len(tail)] if tail else name[len(head) :]
                return [p.replace("%", stem) for p in prerequisites], recipe
        return None


def _logical_lines(text: str) -> list[str]:
    """The lines of a makefile with continuations joined: a recipe's without the break (the
    shell removes a backslash-newline), any other's with a space (as make does)."""
    lines: list[str] = []
    pending: str | None = None
    for raw in text.replace("\r\n", "\n").split("\n"):
        if pending is not None:
            recipe = pending.startswith("\t")
            raw = raw[1:] if recipe and raw.startswith("\t") else raw
            raw = pending + (raw if recipe else " " + raw.lstrip())
            pending = None
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending = raw[:-1]
            continue
        lines.append(raw)
    if pending is not None:
        lines.append(pending)
    return lines


def _options(args: list[str]) -> tuple[str, str | None, list[str], dict[str, str], list[str]]:
    """``(folder, makefile, targets, variables, evaluated)`` of make's arguments (``evaluated``:
    the texts of ``--eval=TEXT``/``-E TEXT``, makefile syntax)."""
    folder, makefile, targets, variables = "", None, [], {}
    evaluated: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        value: str | None = None
        kind = ""
        if word.startswith("--"):
            name, has_value, value = word[2:].partition("=")
            if name and ("file".startswith(name) or "makefile".startswith(name)):
                kind = "f"
            elif name and "directory".startswith(name) and len(name) >= 2:
                kind = "C"
            elif len(name) >= 2 and "eval".startswith(name):
                kind = "E"
            if kind and not has_value:
                value = args[index + 1] if index + 1 < len(args) else None
                index += 1
        elif word.startswith("-") and len(word) > 1:
            for at, letter in enumerate(word[1:], start=1):
                if letter in "fCIoWE":
                    kind = letter
                    value = word[at + 1 :]
                    if not value:
                        value = args[index + 1] if index + 1 < len(args) else None
                        index += 1
                    break
        elif "=" in word:
            name, _, value = word.partition("=")
            variables[name.strip(":")] = value
        else:
            targets.append(word)
        if kind == "f" and value is not None:
            makefile = value
        elif kind == "C" and value is not None:
            folder = posixpath.join(folder, value)
        elif kind == "E" and value is not None:
            evaluated.append(value)
        index += 1
    return folder, makefile, targets, variables, evaluated


def make_folder(args: list[str]) -> str:
    """The folder ``make ARGS`` runs in (its ``-C DIR`` options joined; ``""``: where it is)."""
    return _options(args)[0]


def _run_at_parse(texts: list[str], runner: Runner) -> None:
    """What make runs while reading ``texts``: their ``$(shell …)`` commands, the files their
    ``$(file <FILE)`` reads (read as ``cat FILE``)."""
    for text in texts:
        if "$" not in text:
            continue
        for command in _SHELL_CALL.findall(text):
            runner.script(command)
        for path in _FILE_READ.findall(text):
            runner.script(f"cat {shlex.quote(path)}")


def make(args: list[str], runner: Runner) -> None:
    """``make [options] [targets]``: read what it runs (module doc)."""
    folder, makefile, targets, variables, evaluated = _options(args)
    _run_at_parse([" ".join(args)], runner)  # `make --eval='$(shell …)'`, `make 'X:=$(shell …)'`
    if makefile == "-":
        return  # the makefile is the standard input (:func:`~.embedded.make_stdin`)
    names = [makefile] if makefile else list(_MAKEFILES)
    for name in names:
        path = posixpath.join(folder, name) if folder and not name.startswith("/") else name
        text = runner.workspace_text(path)
        if text is not None:
            _run(text, evaluated, targets, variables, folder, runner)
            return
    if evaluated:  # no makefile: the rules `--eval` gives are all make has
        _run(None, evaluated, targets, variables, folder, runner)


def _run(
    text: str | None,
    evaluated: list[str],
    targets: list[str],
    variables: dict[str, str],
    folder: str,
    runner: Runner,
) -> None:
    """Read the makefile ``text`` after the ``--eval`` texts (make evaluates them before it
    reads the makefiles, so their first rule can be the default goal) and the recipes of
    ``targets``."""
    reader = _Makefile()
    for given in evaluated:
        reader.read(given, runner, folder)
    if text is not None:
        reader.read(text, runner, folder)
    reader.variables.update(variables)
    lines = reader.recipes(targets)
    for line in reader.parse_time[:MAX_RECIPE_LINES]:
        runner.script(reader.expand(line))
    for line in lines[:MAX_RECIPE_LINES]:
        runner.script(f"cd {folder} && {line}" if folder else line)
    if reader.unreadable is not None:
        runner.unknown(reader.unreadable)
