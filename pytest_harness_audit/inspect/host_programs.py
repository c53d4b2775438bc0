"""The workspace files the coding agent host runs by itself, as its settings name them.

Claude Code runs some programs on its own, outside every tool call (so no gate judges them and
no record says they ran): the commands of its ``hooks``, its ``statusLine`` command, the
helpers ``apiKeyHelper``, ``awsAuthRefresh``, ``awsCredentialExport`` and
``otelHeadersHelper``, and the MCP servers of ``.mcp.json`` (and of ``mcpServers`` in
``~/.claude.json``), started at a session's start. Writing their settings is refused, but a
program they name is often a file of the project (``.claude/hooks/format.sh``,
``"$CLAUDE_PROJECT_DIR"/scripts/lint_hook.py``, ``node ./tools/server.js``): an agent that
rewrites it has its code run by the host after its next call. :func:`host_programs` reads the
workspace's settings (``.claude/settings.json``, ``.claude/settings.local.json``,
``.mcp.json``, ``.claude.json``, and those of a ``home`` given) and gives the workspace files
they name, for a snapshot to protect (:class:`~.effects.Protection`).

A command's programs are the first word of each of its simple commands (the leading
``NAME=value`` words skipped) when it names a path (a bare name is looked up on ``PATH``: no
workspace file), and the script operand of a common interpreter (``bash x.sh``,
``python3 x.py``, ``node x.js``, ``uv run x.py``, the text of ``sh -c TEXT`` read the same way).
``$CLAUDE_PROJECT_DIR`` (``${CLAUDE_PROJECT_DIR}``) is the workspace; relative paths are read
from it. Bounded: settings files over :data:`MAX_SETTINGS_BYTES` are not read, a command over
:data:`MAX_COMMAND_CHARS` is cut, and at most :data:`MAX_PROGRAMS` files are given.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pytest_harness_audit.inspect.regular_files import read_regular

#: A settings file larger than this is not read.
MAX_SETTINGS_BYTES = 256 * 1024
#: The characters of a command that are read.
MAX_COMMAND_CHARS = 4096
#: At most this many programs are protected.
MAX_PROGRAMS = 64
#: The workspace's settings files that name programs (``.claude.json``: the harness runs a
#: session with the workspace as its home).
SETTINGS_FILES = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".claude.json",
)
#: The settings keys whose value is a command the host runs.
HELPER_KEYS = ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper")
_INTERPRETER = re.compile(
    r"(?:ba|z|da|k|fi)?sh|python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|tsx|ts-node|ruby"
    r"|perl|php|pwsh|Rscript|lua"
)
#: Interpreter options whose next word is their value, not the script.
_VALUED = frozenset({"-W", "-X", "-O", "--import", "--require", "-r", "-I", "-M"})
#: ``uv run`` options whose next word is their value.
_UV_VALUED = frozenset(
    {"--with", "--python", "-p", "--project", "--directory", "--env-file", "--from", "--extra",
     "--group", "--package", "--with-requirements", "--index", "--index-url"}
)  # fmt: skip
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_OPERATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;", "|&"})
_PROJECT_VAR = re.compile(r"\$(?:\{CLAUDE_PROJECT_DIR\}|CLAUDE_PROJECT_DIR\b)")


def host_programs(root: str | os.PathLike[str], home: str | None = None) -> frozenset[str]:
    """The workspace files (posix, relative to ``root``) that the host settings of ``root``
    (and of ``home``) name as programs the host runs itself (see the module doc)."""
    base = os.path.normpath(os.fspath(root))
    found: dict[str, None] = {}
    places = [os.path.join(base, name) for name in SETTINGS_FILES]
    if home is not None:
        places += [
            os.path.join(home, ".claude", "settings.json"),
            os.path.join(home, ".claude.json"),
        ]
    for path in dict.fromkeys(places):
        document = _read(path)
        if document is None:
            continue
        for argv in _commands(document, base):
            for word in _programs(argv):
                relative = _inside(word, base)
                if relative is not None:
                    found.setdefault(relative)
                if len(found) >= MAX_PROGRAMS:
                    return frozenset(found)
    return frozenset(found)


def _read(path: str) -> dict[str, Any] | None:
    data = read_regular(path, MAX_SETTINGS_BYTES)
    if data is None or len(data) > MAX_SETTINGS_BYTES:
        return None
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) else None


def _commands(document: Mapping[str, Any], root: str) -> Iterator[list[str]]:
    """Each command a settings document names, as the words of its text or an argv."""
    for text in _hook_commands(document.get("hooks")):
        yield from _texts(text)
    status = document.get("statusLine")
    if isinstance(status, Mapping) and isinstance(status.get("command"), str):
        yield from _texts(status["command"])
    for key in HELPER_KEYS:
        if isinstance(document.get(key), str):
            yield from _texts(document[key])
    servers = [document.get("mcpServers")]
    projects = document.get("projects")
    if isinstance(projects, Mapping):  # ``~/.claude.json``: the servers of this project
        entry = projects.get(root)
        servers.append(entry.get("mcpServers") if isinstance(entry, Mapping) else None)
    for table in servers:
        if not isinstance(table, Mapping):
            continue
        for server in list(table.values())[:MAX_PROGRAMS]:
            if not isinstance(server, Mapping) or not isinstance(server.get("command"), str):
                continue
            args = server.get("args")
            words = [a for a in args if isinstance(a, str)] if isinstance(args, list) else []
            yield [server["command"], *words[:32]]


def _hook_commands(hooks: Any) -> Iterator[str]:
    """The ``command`` strings of a ``hooks`` table (event → matchers → hooks)."""
    if not isinstance(hooks, Mapping):
        return
    for matchers in hooks.values():
        for matcher in matchers[:MAX_PROGRAMS] if isinstance(matchers, list) else ():
            entries = matcher.get("hooks") if isinstance(matcher, Mapping) else None
            for entry in entries[:MAX_PROGRAMS] if isinstance(entries, list) else ():
                if isinstance(entry, Mapping) and isinstance(entry.get("command"), str):
                    yield entry["command"]


def _texts(text: str, depth: int = 0) -> Iterator[list[str]]:
    """The simple commands of a shell text, each as its words (a text that cannot be split
    is split at white space)."""
    text = text[:MAX_COMMAND_CHARS]
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        words = text.split()
    current: list[str] = []
    for word in words:
        if word in _OPERATORS:
            if current:
                yield from _argv(current, depth)
            current = []
        else:
            current.append(word)
    if current:
        yield from _argv(current, depth)


def _argv(words: list[str], depth: int) -> Iterator[list[str]]:
    """``words`` without leading assignments; the text of ``sh -c TEXT`` read as a command."""
    while words and _ASSIGNMENT.fullmatch(words[0]):
        words = words[1:]
    if not words:
        return
    if len(words) > 2 and words[1] == "-c" and depth < 2 and _is_shell(words[0]):
        yield from _texts(words[2], depth + 1)
        return
    yield words


def _is_shell(word: str) -> bool:
    return re.fullmatch(r"(?:ba|z|da|k)?sh", os.path.basename(word)) is not None


def _programs(argv: Sequence[str]) -> list[str]:
    """The words of a command's argv that name programs: its first word when it is a path, and
    the script of an interpreter (``uv run`` followed like one)."""
    if not argv:
        return []
    first, rest = argv[0], list(argv[1:])
    found = [first] if "/" in first or first.startswith("$") else []
    name = os.path.basename(first)
    if name == "uv" and rest[:1] == ["run"]:
        operands = rest[1:]
        while operands and operands[0].startswith("-"):  # uv's own options, before the command
            operands = operands[2 if operands[0] in _UV_VALUED else 1 :]
        if operands and os.path.splitext(operands[0])[1] == ".py":
            return [*found, operands[0]]
        return [*found, *_programs(operands)] if operands else found
    if name == "env":  # `env python3 x.py`, `/usr/bin/env FOO=1 node x.js`
        while rest and (rest[0].startswith("-") or _ASSIGNMENT.fullmatch(rest[0])):
            rest = rest[1:]
        return [*found, *_programs(rest)]
    if _INTERPRETER.fullmatch(name) is None:
        return found
    skip = False
    for word in rest:
        if skip:
            skip = False
        elif word in _VALUED:
            skip = True
        elif word in ("-m", "-c", "--eval", "-p", "--print") or (
            word in ("-e", "-E") and not _is_shell(name)
        ):
            break  # a module or inline code (``perl -e``, ``node -e``): no script file
        elif not word.startswith("-"):
            return [*found, word]
    return found


def _inside(word: str, root: str) -> str | None:
    """``word`` as a path relative to ``root`` when it is inside it, else ``None``."""
    word = _PROJECT_VAR.sub(lambda _: root, word)
    if "$" in word or word.startswith("~") or not word or "\0" in word:
        return None  # another variable, or the home folder: not known to be the workspace's
    path = os.path.normpath(os.path.join(root, word))
    relative = os.path.relpath(path, root) if os.path.isabs(path) else path
    if relative == "." or relative.startswith(".." + os.sep) or relative == "..":
        real = os.path.realpath(path)
        real_root = os.path.realpath(root)
        if os.path.commonpath([real, real_root]) != real_root or real == real_root:
            return None
        relative = os.path.relpath(real, real_root)
    return relative.replace(os.sep, "/")


__all__ = ["HELPER_KEYS", "MAX_PROGRAMS", "SETTINGS_FILES", "host_programs"]
