"""A package manager's ``config`` command writes its configuration file: read as that write.

``pip config set global.index-url URL`` sends every later install to ``URL`` as ``printf
'[global]\nindex-url = URL' > ~/.config/pip/pip.conf`` does, so it is read as the write of
that file and judged as that write is. The files:

* ``pip config set|unset|edit`` (``python -m pip`` too): ``~/.config/pip/pip.conf``
  (``--user``, the default); ``--global`` ``/etc/xdg/pip/pip.conf``; ``--site`` the
  environment's ``pip.conf``, read as the one of the environment the reading runs in (the
  harness puts its interpreter first on ``PATH``; that file is the auditor's installation).
* ``yarn config set|unset|delete``: ``~/.yarnrc`` (yarn 1) and ``.yarnrc.yml`` (yarn 2 and
  later; ``-H``/``--home``: ``~/.yarnrc.yml``).
* ``npm``/``pnpm`` ``config set|delete|rm|edit|fix`` and ``npm set|delete KEY``:
  ``-g``/``--global``/``--location=global`` the global ``npmrc`` (``/usr/etc/npmrc``, under the
  prefix of a system Node), ``--userconfig F`` ``F``. The user's and the project's ``.npmrc``
  are left out: a credential file, which npm writing reveals nothing of; what it sets there is
  read where npm runs later (:mod:`.node_config`).

A value set that is the address of a registry or index other than the public ones
(:mod:`.registries`) sends every later install there: noted as the network exchange with it,
as ``npm install --registry URL`` is. ``config get``, ``config list`` and the rest only read.
"""

from __future__ import annotations

import os
import sys
from typing import Final

from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.embedded import NETWORK_NOTE
from pytest_harness_audit.policy.shell.registries import elsewhere

#: ``config`` subcommands that write the configuration, by tool.
_WRITING: Final[dict[str, frozenset[str]]] = {
    "npm": frozenset({"set", "delete", "rm", "edit", "fix"}),
    "yarn": frozenset({"set", "unset", "delete"}),
    "pip": frozenset({"set", "unset", "edit"}),
}
_TOOLS: Final = {"npm": "npm", "pnpm": "npm", "yarn": "yarn", "pip": "pip", "pip3": "pip"}
#: Options whose value is the next word.
_VALUED: Final = frozenset({"--location", "-L", "--userconfig", "--globalconfig", "--prefix", "-C",
                     "--dir", "--cwd", "--python"})  # fmt: skip
#: npm's global configuration file, under the prefix of a system Node.
NPM_GLOBAL: Final = "/usr/etc/npmrc"
#: pip's global (``--global``) configuration file.
PIP_GLOBAL: Final = "/etc/xdg/pip/pip.conf"


def site_pip_config() -> str:
    """The ``pip.conf`` of the environment the reading runs in (``pip config --site``)."""
    return os.path.join(sys.prefix, "pip.conf")


def tool_config(name: str, args: list[str], ctx: Context) -> None:
    """Record the configuration file ``name args`` writes, if it is a ``config`` command that
    writes one (module doc)."""
    tool, words = _tool(name, args)
    if tool is None:
        return
    plain = _plain(words)
    if tool == "npm" and plain[:1] in (["set"], ["delete"]):
        sub = plain[0]  # `npm set KEY VALUE`
    elif plain[:1] in (["config"], ["c"]) and len(plain) > 1:
        sub = plain[1]
    else:
        return
    if sub not in _WRITING[tool]:
        return
    for path in _files(tool, words):
        # npm's own `.npmrc` (a credential file) written by npm reveals none of its tokens;
        # what it sets is read where npm runs later (:mod:`.node_config`)
        if path.rpartition("/")[2] == ".npmrc" and tool == "npm":
            continue
        if path not in ctx.reading.writes:
            ctx.reading.writes.append(path)
    # a registry or index set for every later install: the exchange `--registry URL` is
    urls = [
        word if elsewhere(word) else word.partition("=")[2]
        for word in plain[1:]
        if elsewhere(word) or elsewhere(word.partition("=")[2])
    ]
    if urls and sub == "set":
        ctx.note(NETWORK_NOTE)
        ctx.reading.reads.extend(u for u in urls if u not in ctx.reading.reads)


def _plain(words: list[str]) -> list[str]:
    """``words`` without their options and the values of the valued ones."""
    plain: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _VALUED:
            skip = True
        elif not word.startswith("-"):
            plain.append(word)
    return plain


def _tool(name: str, args: list[str]) -> tuple[str | None, list[str]]:
    """The tool ``name args`` runs (``npm``, ``yarn`` or ``pip``) and its words."""
    if name.startswith("python"):
        if len(args) >= 2 and args[0] == "-m" and args[1] in ("pip", "pip3"):
            return "pip", args[2:]
        return None, args
    if name.startswith("pip") and name[3:].replace(".", "").isdigit():
        name = "pip"  # `pip3.11`
    return _TOOLS.get(name), args


def _files(tool: str, words: list[str]) -> list[str]:
    """The configuration files the ``config`` command of ``tool`` with ``words`` writes."""
    options = set(words)
    if tool == "pip":
        if "--site" in options:
            return [site_pip_config()]
        return [PIP_GLOBAL] if "--global" in options else ["~/.config/pip/pip.conf"]
    if tool == "yarn":
        home = bool(options & {"-H", "--home"})
        return ["~/.yarnrc", "~/.yarnrc.yml" if home else ".yarnrc.yml"]
    location = _value(words, ("--location", "-L")) or "user"
    if options & {"-g", "--global"}:
        location = "global"
    user_config = _value(words, ("--userconfig",))
    if location == "global":
        return [NPM_GLOBAL]
    if location == "project":
        return [".npmrc"]
    return [user_config or "~/.npmrc"]


def _value(words: list[str], names: tuple[str, ...]) -> str | None:
    """The value of the first of the options ``names`` in ``words`` (``--x=V`` or ``--x V``)."""
    for index, word in enumerate(words):
        option, equals, value = word.partition("=")
        if option in names:
            if equals:
                return value
            return words[index + 1] if index + 1 < len(words) else None
    return None


__all__ = ["NPM_GLOBAL", "PIP_GLOBAL", "site_pip_config", "tool_config"]
