"""Commands that run this package's own tools: a session may not write its own evidence.

The agent runs as the same user as the doors, so ``harness-audit hook post`` fed a payload of
its making would append a record the door never saw ("approved by the host"), ``audit repair``
or ``audit prune`` would rewrite or remove chains, ``immune lift`` would end its own quarantine,
and ``proxy``/``checkpoint``/``keygen`` write into a store. Such a command is judged as touching
the store. What only reads stays allowed: ``policy …``, ``audit summary|verify|last|query|
report``, ``immune status``, ``view``, ``init`` and ``--help``/``--version``. The command is
recognised by name (``harness-audit``, also behind ``uv run``/``pipx run``/``uvx``), as
``python -m pytest_harness_audit[.cli]``, and as inline code (``python -c``) naming the package;
a copy of the entry point under another name is not (see docs/security.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

#: The package (and inline code naming it).
PACKAGE = "pytest_harness_audit"
_COMMAND = "harness-audit"
_CLI_MODULES = frozenset({PACKAGE, f"{PACKAGE}.cli", f"{PACKAGE}.__main__"})
#: Modules of the package that only measure: ``python -m pytest_harness_audit.bench``.
_HARMLESS_MODULES = re.compile(rf"{PACKAGE}\.bench(?:\.\w+)?")
_INTERPRETER = re.compile(r"(?:python|pypy)[0-9.]*")
_LAUNCHERS = frozenset({"uv", "pipx", "poetry", "pdm", "hatch", "rye", "pixi"})
#: Subcommands that only read, by command (``None``: every subcommand).
_READ_ONLY: dict[str, frozenset[str] | None] = {
    "policy": None,
    "view": None,
    "init": None,
    "audit": frozenset({"summary", "verify", "last", "query", "report"}),
    "immune": frozenset({"status"}),
}
_VALUED_OPTIONS = frozenset({"--storage"})


def runs_auditor(command: str) -> bool:
    """Whether the simple command ``command`` (its words as the shell reading gives them) runs
    a tool of this package that writes evidence."""
    if PACKAGE not in command and _COMMAND not in command:
        return False
    words = _launched(command.split())
    if not words:
        return False
    name = os.path.basename(words[0])
    if name == _COMMAND:
        return _writes(words[1:])
    if not _INTERPRETER.fullmatch(name):
        return False
    for index, word in enumerate(words[1:], start=1):
        if word == "-c" or (word.startswith("-") and not word.startswith("--") and "c" in word):
            return PACKAGE in " ".join(words[index + 1 :])
        if word == "-m" and index + 1 < len(words):
            module = words[index + 1]
            if module in _CLI_MODULES:
                return _writes(words[index + 2 :])
            return module.startswith(f"{PACKAGE}.") and not _HARMLESS_MODULES.fullmatch(module)
        if not word.startswith("-"):
            return False  # a script file: read by the shell reading, not here
    return False


def _launched(words: list[str]) -> list[str]:
    """``words`` without a package runner in front (``uv run X``, ``pipx run X``, ``uvx X``)."""
    if not words:
        return words
    name = os.path.basename(words[0])
    if name == "uvx":
        rest = words[1:]
    elif name in _LAUNCHERS and len(words) > 1 and words[1] in ("run", "exec", "x", "tool"):
        rest = words[2:]
        if rest[:1] == ["run"]:  # uv tool run
            rest = rest[1:]
    else:
        return words
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in ("--from", "--with", "--python", "-p") else rest[1:]
    return rest


def _writes(arguments: Sequence[str]) -> bool:
    """Whether ``harness-audit ARGUMENTS`` is a subcommand that writes (unknown ones do)."""
    positional: list[str] = []
    skip = False
    for word in arguments:
        if skip:
            skip = False
            continue
        if word in _VALUED_OPTIONS:
            skip = True
            continue
        if word.startswith("-"):
            if not positional and word in ("-h", "--help", "--version"):
                return False
            continue
        positional.append(word)
        if len(positional) == 2:
            break
    if not positional:
        return False
    if positional[0] not in _READ_ONLY:
        return True
    allowed = _READ_ONLY[positional[0]]
    if allowed is None:
        return False
    return len(positional) < 2 or positional[1] not in allowed
