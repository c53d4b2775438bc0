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
import shlex
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
    words = [w.split("\0", 1)[0] for w in found.groups() if w]
    name = words[0].rsplit("/", 1)[-1].lower()
    if name == "env":
        rest = [w[2:] if w.startswith("-S") and len(w) > 2 else w for w in words[1:]]
        rest = [w for w in rest if not w.startswith("-")]
        name = rest[0].rsplit("/", 1)[-1].lower() if rest else ""
    return name


_INSTALL = frozenset({"install", "ci", "add", "install-test", "install-ci-test"})
_INSTALL_SCRIPTS = (
    "preinstall",
    "install",
    "postinstall",
    "prepublish",
    "preprepare",
    "prepare",
    "postprepare",
)
_LIFECYCLE = frozenset({"test", "start", "stop", "restart"})
_OTHER_LIFECYCLE = {
    "pack": ("prepack", "prepare", "postpack"),
    "publish": ("prepublishOnly", "prepack", "prepare", "postpack", "publish", "postpublish"),
    "version": ("preversion", "version", "postversion"),
}
#: npm's own abbreviations and misspellings of its commands.
_NPM_ALIASES = {
    "t": "test", "tst": "test", "rum": "run", "urn": "run", "run-script": "run", "i": "install",
    "in": "install", "ins": "install", "inst": "install", "insta": "install",
    "instal": "install", "isnt": "install", "isnta": "install", "isntal": "install",
    "isntall": "install", "add": "install", "it": "install-test", "cit": "install-ci-test",
    "clean-install": "ci", "ic": "ci", "install-clean": "ci", "isntall-clean": "ci",
    "restart": "restart", "start": "start", "stop": "stop",
}  # fmt: skip
#: Subcommands that are no script of a pnpm/yarn/bun project.
_NOT_SCRIPTS = frozenset(
    {"exec", "dlx", "x", "create", "add", "remove", "up", "upgrade", "why", "info", "list", "ls",
     "outdated", "audit", "config", "dedupe", "link", "unlink", "store", "init", "import",
     "patch", "pack", "publish", "help", "workspace", "workspaces", "global", "cache", "set"}
)  # fmt: skip
#: bun's own commands, which come before a script of the same name.
_BUN_OWN = frozenset({"build", "test", "run", "x", "init", "create", "upgrade", "pm", "link"})
#: Options whose value follows them as the next word.
_VALUED = frozenset({"--loglevel", "--registry", "--cache", "--userconfig", "--tag", "--otp"})
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
    """The file ``path`` is run as a program (``./run.sh``, a hook): a workspace file without a
    ``#!`` line is read as a script (the shell runs it); with one, the line itself is read as
    the command the kernel runs, the file's path after it (``#!/usr/bin/env python3`` →
    ``/usr/bin/env python3 ./x``, which reads the file as code; ``#!/usr/bin/make -f`` reads it
    as a makefile; ``#!/bin/cat .env`` reads ``.env``); a binary is not read."""
    text = runner.workspace_text(path)
    if text is None or text.startswith("\x7fELF"):
        return
    if not text.startswith("#!"):
        runner.read_text(text, code=False)
        return
    line = text[2:].split("\n", 1)[0].split("\0", 1)[0].strip()
    if shebang_interpreter(text) in AWKS:
        awk_program(text.partition("\n")[2], runner)
        return
    words = line.split(None, 1)
    if not words:
        runner.read_text(text, code=False)
        return
    if words[0].rsplit("/", 1)[-1] == "env" and len(words) > 1:
        # `env -S…`/`env -Sprog`: the rest is split into the command (as `env -S` does)
        rest = re.sub(r"^(?:-[a-zA-Z]*S|--split-string(?:=|\s))\s*", "", words[1])
        line = f"{words[0]} {rest}"
    runner.script(f"{line} {shlex.quote(path)}")


def _package_options(args: list[str]) -> tuple[str, list[str], bool, bool]:
    """``(folder, words, every_workspace, ignore_scripts)`` of a package runner's arguments."""
    folder, words, every, ignore = "", [], False, False
    index = 0
    while index < len(args):
        word = args[index]
        name, has_value, value = word.partition("=")
        if name in ("--prefix", "-C", "--dir", "--cwd", "--workspace", "-w", "--filter", "-F"):
            if not has_value:
                value = args[index + 1] if index + 1 < len(args) else ""
                index += 1
            if name in ("--filter", "-F"):
                every = True
            else:
                folder = posixpath.join(folder, value) if value else folder
        elif name in ("--workspaces", "-ws", "-r", "--recursive", "--all"):
            every = True
        elif name == "--ignore-scripts":
            ignore = True
        elif name in _VALUED and not has_value:
            index += 1  # `--loglevel silent`: the value is no subcommand
        elif word == "--":
            break
        elif not word.startswith("-"):
            words.append(word)
        index += 1
    return folder, words, every, ignore


def _scripts_run(name: str, words: list[str], defined: dict[str, object]) -> list[str]:
    """The scripts of ``package.json`` a command runs, in order."""
    command = _NPM_ALIASES.get(words[0], words[0]) if words else ""
    if name in ("yarn", "bun") and not words:
        command = "install"
    if name == "bun" and command in _BUN_OWN:
        return []
    if command in ("run", "run-script") and len(words) > 1:
        target = words[1]
    elif command in _INSTALL:
        return [] if len(words) > 1 else list(_INSTALL_SCRIPTS)
    elif command in _LIFECYCLE:
        target = command
        if command == "restart" and "restart" not in defined:
            return ["prestop", "stop", "poststop", "prestart", "start", "poststart"]
    elif command in _OTHER_LIFECYCLE:
        return list(_OTHER_LIFECYCLE[command])
    elif name in ("pnpm", "yarn", "bun") and command not in _NOT_SCRIPTS:
        target = command
    else:
        return []
    return [f"pre{target}", target, f"post{target}"]


def package_scripts(name: str, args: list[str], runner: Runner) -> None:
    """``npm run X`` and kin: read the ``package.json`` scripts that run (module doc)."""
    folder, words, every, ignore = _package_options(args)
    if ignore:
        return
    if every:
        runner.unknown(f"{name} runs the scripts of every workspace package")
        return
    text = runner.workspace_text(
        posixpath.join(folder, "package.json") if folder else "package.json"
    )
    if text is None:
        return
    try:
        defined = json.loads(text.lstrip("\ufeff")).get("scripts")
    except (ValueError, AttributeError):
        runner.unknown(f"{name} reads a package.json that does not parse")
        return
    if not isinstance(defined, dict):
        return
    for script in _scripts_run(name, words, defined):
        body = defined.get(script)
        if isinstance(body, str):
            runner.script(f"cd {shlex.quote(folder)} && {body}" if folder else body)


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
