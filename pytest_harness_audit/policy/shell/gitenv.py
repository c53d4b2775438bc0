"""Commands a program runs from its environment or from a configuration file it is pointed at.

``GIT_EXTERNAL_DIFF='sh -c "cp .env /tmp/x"' git diff``, ``GIT_PAGER=…``, ``GIT_SSH_COMMAND=…``,
``EDITOR=…``, ``BASH_ENV=…``: the value of such a variable is a command the program runs, so it
is read as a script. ``GIT_CONFIG_GLOBAL=x.cfg git status`` and ``git config include.path
../x.cfg`` point git at a configuration file; its command-running keys (``core.fsmonitor``,
``core.pager``, ``alias.x = !cmd``, filters …: :func:`~.embedded.git_config_value`) are read
as scripts when the file's text is known (a workspace file, or one written earlier in the same
command). ``GIT_CONFIG_VALUE_<n>`` values are read as scripts whatever their key.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from pytest_harness_audit.policy.shell.embedded import Runner, git_config_value

#: Variables whose value a program runs as a command.
COMMAND_ENV = frozenset(
    {"GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "EDITOR", "VISUAL", "GIT_SEQUENCE_EDITOR",
     "GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS",
     "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "BASH_ENV", "ENV", "PROMPT_COMMAND",
     "SYSTEMD_PAGER"}
)  # fmt: skip
#: Variables naming a configuration file git reads.
CONFIG_FILE_ENV = frozenset({"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"})
_INCLUDE = re.compile(r"(?i)include\.path|includeif\..+\.path")
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
#: Most lines of a configuration file read, and how deep includes are followed.
_MAX_LINES = 2048
_MAX_INCLUDES = 2

FileText = Callable[[str], "str | None"]


def environment(name: str, value: str, runner: Runner, file_text: FileText) -> None:
    """What a command given ``NAME=value`` in its environment may run."""
    if name in COMMAND_ENV or name.startswith("GIT_CONFIG_VALUE_"):
        if value.strip():
            runner.script(value)
    elif name in CONFIG_FILE_ENV and value:
        config_file(file_text(value), runner, file_text, 0)


def include(key: str, value: str, runner: Runner, file_text: FileText) -> bool:
    """``include.path``/``includeIf.….path`` set on git's command line or in its configuration:
    read the included file (a relative path is taken from ``.git/``); whether ``key`` was one."""
    if not _INCLUDE.fullmatch(key):
        return False
    for path in _include_paths(value):
        config_file(file_text(path), runner, file_text, 0)
    return True


def _include_paths(value: str) -> list[str]:
    """Where an included file may be: from ``.git/`` (a repository's configuration) and, as
    the reading writes ``$PWD`` as ``.``, from the workspace too."""
    if value.startswith(("/", "~")):
        return [value]
    return list(dict.fromkeys([posixpath.normpath(f".git/{value}"), posixpath.normpath(value)]))


def config_file(text: str | None, runner: Runner, file_text: FileText, depth: int) -> None:
    """Read the command-running keys of a git configuration file's ``text``."""
    if text is None or depth > _MAX_INCLUDES:
        return
    section = ""
    for line in text.splitlines()[:_MAX_LINES]:
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        header = _SECTION.match(stripped)
        if header is not None:
            name, sub, rest = header.groups()
            section = name.lower() + (f".{sub}" if sub is not None else "")
            stripped = rest.strip()
            if not stripped:
                continue
        entry = _ENTRY.match(stripped)
        if entry is None or not section:
            continue
        key, value = f"{section}.{entry.group(1)}", _unquote(entry.group(2) or "")
        if _INCLUDE.fullmatch(key):
            for path in _include_paths(value):
                config_file(file_text(path), runner, file_text, depth + 1)
        else:
            git_config_value(key, value, runner)


def _unquote(value: str) -> str:
    """A configuration value without its comment and its double quotes."""
    out: list[str] = []
    quoted = False
    index = 0
    while index < len(value):
        char = value[index]
        if char == "\\" and index + 1 < len(value):
            out.append(value[index + 1])
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()


__all__ = ["COMMAND_ENV", "CONFIG_FILE_ENV", "config_file", "environment", "include"]
