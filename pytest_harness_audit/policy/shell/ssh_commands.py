"""The local commands an ssh client runs from its own options and configuration file.

``ssh -o ProxyCommand='rm -rf app' x`` runs ``rm -rf app`` here, before any network exchange
(it is how the connection is made); ``-o LocalCommand=CMD`` (with ``PermitLocalCommand=yes``)
runs it here after the connection and ``-o KnownHostsCommand=CMD`` to check the host key. The
same keys in a configuration file given by ``-F FILE`` (and ``Match exec "CMD"`` there) are read
from the workspace file. Each command is read as the script it is (``%h``, ``%p`` … stay words);
``none`` is no command. The clients: ``ssh``, ``autossh``, ``scp``, ``sftp`` (their ``-o``/``-F``),
and ``sshfs -o ssh_command=CMD``.
"""

from __future__ import annotations

import re
from typing import Final, Protocol

#: The clients read here and the one-letter options of each that take a value.
_VALUED: Final = {
    "ssh": "BbcDEeFIiJLlmOopQRSWw",
    "autossh": "MBbcDEeFIiJLlmOopQRSWw",
    "scp": "cDFiJlOoPSX",
    "sftp": "BbcDFiJloPRSsX",
    "sshfs": "op",
}
SSH_COMMAND_CLIENTS: Final = frozenset(_VALUED)
#: Configuration keys whose value is a command run on this machine (lower case).
_COMMAND_KEYS: Final = frozenset({"proxycommand", "localcommand", "knownhostscommand"})
_SETTING: Final = re.compile(r"\s*([A-Za-z_]+)\s*(?:=\s*|\s+)(.*?)\s*$", re.DOTALL)
_MATCH_EXEC: Final = re.compile(r"""(?i)\bexec\s+(?:"([^"]*)"|(\S+))""")
#: Most lines of a configuration file read.
_MAX_LINES: Final = 4096


class Runner(Protocol):
    """What the reader needs of the reading."""

    def script(self, text: str, args: list[str] | None = None) -> None:
        """Read ``text`` as a script run by a shell."""
        ...

    def workspace_text(self, path: str) -> str | None:
        """The text of a workspace file, when the reading can see it."""
        ...


def ssh_commands(name: str, args: list[str], runner: Runner) -> None:
    """Read the local commands the ssh client ``name`` runs from ``args`` (module doc)."""
    valued = _VALUED.get(name, "")
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            break
        if word[:1] != "-" or word[:2] == "--" or len(word) < 2:
            continue
        for at, letter in enumerate(word[1:], start=1):
            if letter not in valued:
                continue
            value = word[at + 1 :]
            if not value and index < len(args):
                value = args[index]
                index += 1
            if letter == "o":  # `sshfs -o ssh_command=CMD,reconnect`: options joined by `,`
                for option in value.split(",") if name == "sshfs" else [value]:
                    _setting(name, option, runner)
            elif letter == "F":
                _config_file(value, runner)
            break


def _setting(name: str, text: str, runner: Runner) -> None:
    found = _SETTING.match(text)
    if found is None:
        return
    key, value = found.group(1).lower(), found.group(2).strip()
    keys = _COMMAND_KEYS | {"ssh_command"} if name == "sshfs" else _COMMAND_KEYS
    if key in keys and value and value.lower() != "none":
        runner.script(value)


def _config_file(path: str, runner: Runner) -> None:
    """The commands of an ssh configuration file: its command keys and ``Match exec``."""
    text = runner.workspace_text(path)
    if text is None:
        return
    for line in text.splitlines()[:_MAX_LINES]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.lower().startswith("match"):
            for quoted, bare in _MATCH_EXEC.findall(stripped):
                runner.script(quoted or bare)
            continue
        _setting("ssh", stripped, runner)


__all__ = ["SSH_COMMAND_CLIENTS", "ssh_commands"]
