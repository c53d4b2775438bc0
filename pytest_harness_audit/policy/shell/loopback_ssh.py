"""A remote command sent to this machine: ``ssh localhost rm -rf app``.

An ssh client hands its command words (joined by spaces, as the client sends them) to a shell
on the destination host. When that host is this machine — a loopback name or address
(``localhost``, ``*.localhost``, ``127.0.0.0/8`` in any spelling ``inet_aton`` accepts:
``127.1``, ``2130706433``, ``0x7f000001``; ``::1``; the unspecified ``0.0.0.0`` and ``::``), a
name ``/etc/hosts`` gives such an address, this machine's own name, or a host only the run
knows (``$(hostname)``, ``$HOST``) — the command runs here, in the user's home, and is read as
the local command it is (:func:`loopback_command`); the network note stays. The destination
may be ``[USER@]HOST``, ``ssh://[USER@]HOST[:PORT]``, with ``-l USER``/``-p PORT`` anywhere
among the options (options after the destination too, as the client takes them), and
``-o HostName=…`` or a ``HostName`` line of a ``-F`` configuration file naming the real host
(any of them loopback counts).
``-o RemoteCommand=CMD`` is the command when no words follow. Other hosts keep their reading: a
network exchange.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
from collections.abc import Callable
from typing import Final

#: Clients whose words after the destination are a command for the remote shell, and the
#: one-letter options of each that take a value.
_CLIENTS: Final = {
    "ssh": "BbcDEeFIiJLlmOopQRSWw",
    "autossh": "MBbcDEeFIiJLlmOopQRSWw",
}
#: Clients read here.
LOOPBACK_CLIENTS: Final = frozenset(_CLIENTS)
_NAMES: Final = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_HOSTS_FILE: Final = "/etc/hosts"
_SETTING: Final = re.compile(r"(?i)\s*(hostname|remotecommand)\s*(?:=\s*|\s+)(.*?)\s*$")


@functools.cache
def _own_names() -> frozenset[str]:
    """This machine's name and the names ``/etc/hosts`` gives a loopback address (read once)."""
    names = {socket.gethostname().lower()}
    try:
        with open(_HOSTS_FILE, encoding="utf-8", errors="replace") as hosts:
            lines = hosts.read(1 << 20).splitlines()
    except OSError:
        lines = []
    for line in lines:
        words = line.split("#", 1)[0].split()
        if len(words) > 1 and _loopback_address(words[0]):
            names.update(word.lower() for word in words[1:])
    return frozenset(name for name in names if name)


def _loopback_address(text: str) -> bool:
    try:
        packed = socket.inet_aton(text)  # `127.1`, `2130706433`, `0x7f.1` as the resolver reads
    except (OSError, ValueError):
        packed = b""
    if packed:
        return packed[0] == 127 or packed == b"\0\0\0\0"
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return _loopback_address(str(address.ipv4_mapped))
    return address.is_loopback or address.is_unspecified


def loopback_host(word: str) -> bool:
    """Whether the destination ``word`` (``[USER@]HOST[:PORT]``, ``ssh://…``, ``[::1]``) may be
    this machine (module doc)."""
    host = word.removeprefix("ssh://").rpartition("@")[2]
    if "$" in host or "…" in host:  # a name only the run knows (`$(hostname)`)
        return True
    if host.startswith("["):
        host = host[1:].partition("]")[0]
    elif word.startswith("ssh://") or host.count(":") == 1:
        host = host.partition(":")[0]
    host = host.rstrip(".").lower()
    if not host:
        return False
    if host in _NAMES or host.endswith(".localhost") or _loopback_address(host):
        return True
    return host in _own_names()


def loopback_command(
    name: str,
    args: list[str],
    script: Callable[[str], None],
    workspace_text: Callable[[str], str | None],
) -> None:
    """Read the command ``ssh``/``autossh`` (``name``) sends to a loopback destination as a
    local script (``script``); nothing for another host (module doc)."""
    valued = _CLIENTS.get(name, "")
    host: str | None = None
    named: list[str] = []
    remote: str | None = None
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            if host is None and index < len(args):
                host, index = args[index], index + 1
            break
        if word[:1] != "-" or len(word) < 2:
            if host is not None:
                index -= 1  # the command's first word
                break
            host = word
            continue
        for at, letter in enumerate(word[1:], start=1):
            if letter not in valued:
                continue
            value = word[at + 1 :]
            if not value and index < len(args):
                value, index = args[index], index + 1
            if letter == "o":
                named, remote = _setting(value, named, remote)
            elif letter == "F":
                for line in (workspace_text(value) or "").splitlines()[:4096]:
                    named, remote = _setting(line, named, remote)
            break
    if host is None:
        return
    if not any(loopback_host(word) for word in [host, *named]):
        return
    words = args[index:]
    command = " ".join(words) if words else remote
    if command:
        script(command)


def _setting(text: str, named: list[str], remote: str | None) -> tuple[list[str], str | None]:
    """``HostName`` values are added to ``named`` (any of them loopback counts: a ``-F`` file's
    blocks are not matched); a ``RemoteCommand`` (not ``none``) replaces ``remote``."""
    found = _SETTING.match(text)
    if found is None or not found.group(2):
        return named, remote
    if found.group(1).lower() == "hostname":
        return [*named, found.group(2)], remote
    return named, None if found.group(2).lower() == "none" else found.group(2)


__all__ = ["LOOPBACK_CLIENTS", "loopback_command", "loopback_host"]
