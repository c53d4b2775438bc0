"""What a project's own build and script runners run: ``make``, ``npm run`` and kin, ``python -m``.

The command's text names a target or a script; what runs is written in a workspace file. So
that a recipe or a script written earlier cannot hide what it does behind an ordinary
``make test`` or ``npm run build``, the file is read (when it is a workspace file the reading can
see, :meth:`~.reading.Context.workspace_text`) and what it runs is read as scripts:

* **make** (``make``, ``gmake``; ``-f FILE``, ``-C DIR``, else ``GNUmakefile``, ``makefile``,
  ``Makefile``): the recipe lines of the targets named (or of the first target), and of their
  prerequisites, with the makefile's simple variables (``VAR = value``, ``:=``, ``?=``)
  put in; ``$$`` is ``$``.
* **npm**, **pnpm**, **yarn**, **bun** (``run X``, ``run-script X``, ``test``, ``start``, ``stop``,
  ``restart``, ``install``/``ci``/``i``, and ``pnpm X``/``yarn X`` for a script ``X``): the
  ``scripts`` of ``package.json`` that run — ``preX``, ``X`` and ``postX``, and the install
  scripts (``preinstall``, ``install``, ``postinstall``, ``prepare``) for an install.
* **python -m module**: ``module.py`` or ``module/__main__.py`` of the workspace, read as code.
* **a file run by its path** (``./run.sh``, ``tools/gen``, a git hook): read by its ``#!`` line.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Protocol

from pytest_harness_audit.policy.shell.embedded import AWKS, awk_program
from pytest_harness_audit.policy.shell.embedded import Runner as _EmbeddedRunner

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "rbash", "fish"})
INTERPRETERS = re.compile(
    r"(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl|ruby|php|lua|rscript|osascript)"
)
_SHEBANG = re.compile(r"#![ \t]*(\S+)(?:[ \t]+(\S+))?(?:[ \t]+(\S+))?")


def shebang_interpreter(text: str) -> str | None:
    """The program a script's ``#!`` line names (``/usr/bin/env -S python3 -u`` → ``python3``),
    lower case; ``None`` without one."""
    found = _SHEBANG.match(text)
    if found is None:
        return None
    words = [w for w in found.groups() if w]
    name = words[0].rsplit("/", 1)[-1].lower()
    if name == "env":
        rest = [w for w in words[1:] if not w.startswith("-")]
        name = rest[0].rsplit("/", 1)[-1].lower() if rest else ""
    return name


#: Most targets (with prerequisites) and recipe lines of one ``make`` read.
MAX_TARGETS = 64
MAX_RECIPE_LINES = 256
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_RULE = re.compile(r"^([^\s:=#][^:=#]*?)\s*::?(?!=)\s*([^;=#]*)(?:;(.*))?$")
_VARIABLE = re.compile(
    r"^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*(?::{1,3}|\?|\+)?=\s*(.*)$"
)
_REFERENCE = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.]*)[)}]")
_INSTALL = frozenset({"install", "i", "ci", "add"})
_LIFECYCLE = frozenset({"test", "start", "stop", "restart"})
_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})


class Runner(_EmbeddedRunner, Protocol):
    """What the readers here need of the reading."""

    def script(self, text: str, args: list[str] | None = None) -> None:
        """Read ``text`` as a script run by a shell."""
        ...

    def script_file(self, path: str, code: bool) -> None:
        """A shell (``code``: an interpreter) runs the file ``path``: read its text."""
        ...

    def workspace_text(self, path: str) -> str | None:
        """The text of a workspace file, when the reading can see it."""
        ...

    def read_text(self, text: str, code: bool) -> None:
        """Read the text of a file a shell (``code``: an interpreter) runs."""
        ...


def program_file(path: str, runner: Runner) -> None:
    """The file ``path`` is run as a program (``./run.sh``, a hook): a workspace file's text is
    read by its ``#!`` line, a shell's (or none: the shell runs it) as a script, an
    interpreter's as inline code, awk's as an awk program; a binary is not read."""
    text = runner.workspace_text(path)
    if text is None or text.startswith("\x7fELF"):
        return
    interpreter = shebang_interpreter(text)
    if interpreter is None or interpreter in SHELLS:
        runner.read_text(text, code=False)
    elif INTERPRETERS.fullmatch(interpreter):
        runner.read_text(text, code=True)
    elif interpreter in AWKS:
        awk_program(text.partition("\n")[2], runner)


def make(args: list[str], runner: Runner) -> None:
    """``make [options] [targets]``: read the recipes that run (module doc)."""
    folder, makefile, targets = "", None, []
    index = 0
    while index < len(args):
        word = args[index]
        if word in ("-f", "--file", "--makefile", "-C", "--directory") and index + 1 < len(args):
            if word.startswith(("-C", "--directory")):
                folder = posixpath.join(folder, args[index + 1])
            else:
                makefile = args[index + 1]
            index += 2
            continue
        if word.startswith("-f") and len(word) > 2:
            makefile = word[2:]
        elif word.startswith("-C") and len(word) > 2:
            folder = posixpath.join(folder, word[2:])
        elif not word.startswith("-") and "=" not in word:
            targets.append(word)
        index += 1
    names = [makefile] if makefile else list(_MAKEFILES)
    for name in names:
        text = runner.workspace_text(posixpath.join(folder, name) if folder else name)
        if text is not None:
            for line in _recipes(text, targets)[:MAX_RECIPE_LINES]:
                runner.script(line)
            return


def _recipes(text: str, targets: list[str]) -> list[str]:
    """The recipe lines of ``targets`` (else the first target) and their prerequisites."""
    variables: dict[str, str] = {}
    rules: dict[str, tuple[list[str], list[str]]] = {}
    first: str | None = None
    current: list[str] | None = None
    for raw in text.replace("\\\n", " ").splitlines():
        if raw.startswith("\t"):
            if current is not None and raw.strip():
                current.append(raw.strip())
            continue
        line = raw.split("#", 1)[0].rstrip()
        variable = _VARIABLE.match(line)
        if variable is not None:
            variables.setdefault(variable.group(1), variable.group(2).strip())
            current = None
            continue
        rule = _RULE.match(line)
        if rule is None:
            current = None if line.strip() else current
            continue
        recipe: list[str] = []
        if rule.group(3) and rule.group(3).strip():
            recipe.append(rule.group(3).strip())
        for name in rule.group(1).split():
            known = rules.setdefault(name, ([], []))
            known[0].extend(rule.group(2).split())
            current = known[1]
            if first is None and not name.startswith("."):
                first = name
        if recipe and current is not None:
            current.extend(recipe)
    wanted = list(targets) or ([first] if first else [])
    seen: set[str] = set()
    lines: list[str] = []
    while wanted and len(seen) < MAX_TARGETS:
        name = wanted.pop(0)
        if name in seen or name not in rules:
            continue
        seen.add(name)
        prerequisites, recipe = rules[name]
        wanted.extend(prerequisites)
        lines.extend(_expand(line, variables).lstrip("@-+ ") for line in recipe)
    return lines


def _expand(line: str, variables: dict[str, str]) -> str:
    for _ in range(4):  # a variable naming another: a few rounds
        expanded = _REFERENCE.sub(lambda m: variables.get(m.group(1), m.group(0)), line)
        if expanded == line:
            break
        line = expanded
    return line.replace("$$", "$")


def package_scripts(name: str, args: list[str], runner: Runner) -> None:
    """``npm run X`` and kin: read the ``package.json`` scripts that run (module doc)."""
    words = [word for word in args if not word.startswith("-")]
    if not words:
        scripts = ["install"] if name in ("yarn", "bun") and not args else []
    elif words[0] in ("run", "run-script") and len(words) > 1:
        scripts = [words[1]]
    elif words[0] in _LIFECYCLE:
        scripts = [words[0]]
    elif words[0] in _INSTALL:
        scripts = ["install"] if len(words) == 1 else []
    elif name in ("pnpm", "yarn", "bun") and words[0] not in ("exec", "dlx", "x", "create"):
        scripts = [words[0]]
    else:
        scripts = []
    if not scripts:
        return
    text = runner.workspace_text("package.json")
    if text is None:
        return
    try:
        defined = json.loads(text).get("scripts")
    except (ValueError, AttributeError):
        return
    if not isinstance(defined, dict):
        return
    if scripts == ["install"]:
        run = ["preinstall", "install", "postinstall", "prepare"]
    else:
        run = [f"pre{scripts[0]}", scripts[0], f"post{scripts[0]}"]
    for script in run:
        body = defined.get(script)
        if isinstance(body, str):
            runner.script(body)


def python_module(args: list[str], runner: Runner) -> None:
    """``python -m module``: the module's file of the workspace, read as code."""
    for index, word in enumerate(args[:-1]):
        if word == "-m":
            module = args[index + 1].replace(".", "/")
            for path in (f"{module}.py", f"{module}/__main__.py"):
                if runner.workspace_text(path) is not None:
                    runner.script_file(path, code=True)
                    return
            return


def is_package_runner(name: str) -> bool:
    """Whether ``name`` runs ``package.json`` scripts."""
    return name in _RUNNERS
