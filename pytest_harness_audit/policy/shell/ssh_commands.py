"""The local commands an ssh client runs from its own options and configuration file.

``ssh -o ProxyCommand='rm -rf app' x`` runs ``rm -rf app`` here, before any network exchange
(it is how the connection is made); ``-o LocalCommand=CMD`` (with ``PermitLocalCommand=yes``)
runs it here after the connection and ``-o KnownHostsCommand=CMD`` to check the host key. The
same keys in a configuration file given by ``-F FILE`` (and ``Match exec "CMD"`` there) are read
from the workspace file. Each command is read as the script it is (``%h``, ``%p`` … stay words);
``none`` is no command. The clients: ``ssh``, ``autossh``, ``scp``, ``sftp`` (their ``-o``/``-F``),
and ``sshfs -o ssh_command=CMD``.

``rsync --rsync-path=CMD … HOST:PATH`` has its remote shell run ``CMD`` on ``HOST`` (``ssh HOST
CMD``, or the ``-e``/``--rsh`` command's): read as that command (:func:`rsync_remote`), as
``ssh -o RemoteCommand=CMD HOST`` and ``ssh HOST CMD`` are: the remote command itself is read
only for a destination that is this machine (:mod:`.loopback_ssh`).
"""

from __future__ import annotations

import re
import shlex
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.loopback_ssh import LOOPBACK_CLIENTS, loopback_command

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
#: A remote operand of rsync reached through a remote shell: ``[USER@]HOST:PATH`` (not
#: ``HOST::MODULE`` nor ``rsync://``, a daemon's, which runs no command of the client's).
_RSYNC_REMOTE: Final = re.compile(r"^([^/\s:=-][^/\s:=]*):(?!:)")
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
    """Read the local commands the ssh client ``name`` runs from ``args`` (module doc), and
    the command it sends to this machine (:mod:`.loopback_ssh`)."""
    if name in LOOPBACK_CLIENTS:
        loopback_command(name, args, runner.script, runner.workspace_text)
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


def rsync_remote(args: list[str], runner: Runner) -> None:
    """``rsync --rsync-path=CMD … HOST:PATH``: the remote shell runs ``CMD`` on ``HOST``
    (module doc); read as ``RSH HOST CMD``."""
    path = shell = host = None
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        option, equals, value = word.partition("=")
        if option in ("--rsync-path", "-e", "--rsh"):
            if not equals and index < len(args):
                value, index = args[index], index + 1
            if option == "--rsync-path":
                path = value
            else:
                shell = value
        elif host is None and (found := _RSYNC_REMOTE.match(word)):
            host = found.group(1)
    if path and host:
        runner.script(f"{shell or 'ssh'} {shlex.quote(host)} {shlex.quote(path)}")


__all__ = ["SSH_COMMAND_CLIENTS", "rsync_remote", "ssh_commands"]
