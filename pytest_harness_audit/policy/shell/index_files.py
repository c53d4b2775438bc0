"""Package managers that read their index or registry from a file: an install, sync, lock or
add sends the command to the address a workspace file names, a network exchange with it as
``pip install --index-url URL`` is (:mod:`.registries`).

The files, by tool (parsed by :mod:`.index_formats`):

* ``pip`` (``python -m pip``, ``pip-compile``, ``pip-sync``) ``install``/``download``/
  ``wheel``/``lock``/``index``: the ``-r``/``-c`` requirement and constraint files (and the
  ``-r``/``-c`` files they name, from their own folder, :data:`MAX_DEPTH` deep), the
  ``pip.conf`` ``PIP_CONFIG_FILE`` names, and that of the environment (``$VIRTUAL_ENV``, or a
  ``.venv``/``venv`` folder of the project); the user's ``.config/pip/pip.conf`` and
  ``.pip/pip.conf`` (``.config/uv/uv.toml`` for uv) are looked for in the workspace's folders
  too: the home folder is the workspace where the scripted harness runs a command.
* ``uv`` ``sync``/``lock``/``add``/``remove``/``run``/``export``/``tree``, ``uv pip
  install|sync|compile``, ``uv tool install|run|upgrade`` and ``uvx``: the requirement files,
  ``uv.toml``, ``pyproject.toml`` ``[tool.uv]`` (``index-url``, ``extra-index-url``,
  ``find-links``, ``[[tool.uv.index]]``), the ``UV_CONFIG_FILE``/``--config-file`` file.
* ``poetry``/``pdm`` ``install``/``sync``/``update``/``add``/``remove``/``lock``:
  ``[[tool.poetry.source]]``, ``[[tool.pdm.source]]`` (and ``pdm.toml`` ``[pypi]``);
  ``pipenv install``/``sync``/``update``/``lock``: the ``Pipfile``'s ``[[source]]``.
* ``npm``/``pnpm``/``yarn``/``bun`` installs (``install``, ``ci``, ``add``, ``update``; a bare
  ``yarn``): ``.npmrc`` ``registry=``/``@scope:registry=`` (and a ``--userconfig`` or
  ``NPM_CONFIG_USERCONFIG`` file), yarn's ``.yarnrc`` ``registry`` and ``.yarnrc.yml``
  ``npmRegistryServer``, bun's ``bunfig.toml`` ``[install] registry``.
* ``cargo`` commands that resolve dependencies (``build``, ``test``, ``fetch``, ``update``,
  ``install``, ``add`` …; not ``--offline``/``--frozen``): ``.cargo/config.toml``
  ``[registries.*] index`` and ``[source.*] registry``.
* ``bundle`` (``install``, ``update``, ``lock``, ``add``; a bare ``bundle``): the ``Gemfile``'s
  ``source``; ``conda``/``mamba``/``micromamba`` ``env create|update`` and ``create``/
  ``install -f F``: the environment file's ``channels``.

A project file is looked for where the command runs (its ``--directory``/``--prefix``/``--cwd``
…) and in every folder above it up to the workspace root, never above. A file the command names
(``-r F``, ``PIP_CONFIG_FILE=F``, ``--config-file F``, ``--userconfig F``, ``-f F``) is read
where it is in the workspace, or as written earlier in the same command; one outside the
workspace cannot be read, so the command is unreadable (warned), ``/dev/null`` aside. Files are
read as script files are (at most 64 KiB, as :mod:`.builds` reads a requirements file for the
projects it builds: a larger one makes the command unreadable). The public registries and local
indexes (a folder, ``file://``) are no exchange, as on the command line. The reading needs the
workspace (or a file written in the command): without one, nothing is read.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from typing import Final

from pytest_harness_audit.policy.shell import index_formats as formats
from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.registries import exchange

Parser = Callable[[str], list[str]]

#: Most nested ``-r``/``-c`` files followed, and most requirement files read for one command.
MAX_DEPTH: Final = 4
MAX_FILES: Final = 16
#: Most folders above the command's a project file is looked for in.
MAX_LEVELS: Final = 8

_PIP_SUBS: Final = frozenset({"install", "download", "wheel", "lock", "index"})
_UV_SUBS: Final = frozenset({"sync", "lock", "add", "remove", "run", "export", "tree"})
_PROJECT_SUBS: Final = frozenset({"install", "sync", "update", "add", "remove", "lock", "upgrade"})
_NPM_SUBS: Final = frozenset({"install", "i", "in", "ins", "inst", "insta", "instal", "isnt",
                       "isntall", "add", "ci", "clean-install", "ic", "install-clean",
                       "install-test", "it", "install-ci-test", "cit", "update", "up",
                       "upgrade", "udpate", "fetch", "a"})  # fmt: skip
_CARGO_SUBS: Final = frozenset({"add", "build", "b", "bench", "check", "c", "clippy", "doc", "d",
                         "fetch", "fix", "generate-lockfile", "install", "metadata", "run",
                         "r", "test", "t", "tree", "update", "vendor"})  # fmt: skip
_YARN_SUBS: Final = frozenset({"install", "add", "up", "upgrade", "upgrade-interactive"})
_BUNDLE_SUBS: Final = frozenset({"install", "update", "lock", "add", "cache", "package"})
#: Options before the subcommand whose value is the next word, by tool.
_VALUED: Final[dict[str, frozenset[str]]] = {
    "pip": frozenset({"--python", "--cache-dir", "--log", "--proxy", "--timeout", "--retries",
                      "--exists-action", "--trusted-host", "--cert", "--client-cert"}),
    "uv": frozenset({"--directory", "--project", "--config-file", "--python", "-p",
                     "--cache-dir", "--color", "--allow-insecure-host", "--with", "-w"}),
    "poetry": frozenset({"-C", "--directory", "-P", "--project"}),
    "pdm": frozenset({"-p", "--project"}),
    "pipenv": frozenset({"--python"}),
    "npm": frozenset({"--prefix", "-C", "--dir", "--userconfig", "--cwd", "--registry",
                      "--workspace", "-w", "--filter", "-F", "--loglevel"}),
    "cargo": frozenset({"--manifest-path", "-Z", "--config", "--color", "-C"}),
    "bundle": frozenset({"--gemfile"}),
    "conda": frozenset({"-n", "--name", "-p", "--prefix", "-f", "--file", "-c", "--channel"}),
}  # fmt: skip
#: Options naming the folder the tool works in, by tool.
_FOLDER: Final = {"uv": ("--directory", "--project"), "poetry": ("-C", "--directory", "-P",
           "--project"), "pdm": ("-p", "--project"), "npm": ("--prefix", "-C", "--dir"),
           "yarn": ("--cwd",), "bun": ("--cwd",)}  # fmt: skip
_TOOLS: Final = {"pip": "pip", "pip3": "pip", "pip-compile": "pip-compile", "pip-sync": "pip-sync",
          "uv": "uv", "uvx": "uvx", "poetry": "poetry", "pdm": "pdm", "pipenv": "pipenv",
          "npm": "npm", "pnpm": "pnpm", "yarn": "yarn", "bun": "bun", "cargo": "cargo",
          "bundle": "bundle", "bundler": "bundle", "conda": "conda", "mamba": "conda",
          "micromamba": "conda"}  # fmt: skip
#: Every name read here (the cheap test before any parsing; ``python…``/``pip…`` too).
NAMES: Final = frozenset(_TOOLS)
_REQUIREMENT_OPTIONS: Final = ("-r", "--requirement", "-c", "--constraint", "--override",
                        "--overrides", "--build-constraint", "--build-constraints")  # fmt: skip
_VARIABLE: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: The project files each tool reads, with their readers.
_PROJECT_FILES: Final[dict[str, tuple[tuple[str, Parser], ...]]] = {
    "pip": ((".venv/pip.conf", formats.pip_config), ("venv/pip.conf", formats.pip_config),
            (".config/pip/pip.conf", formats.pip_config), (".pip/pip.conf", formats.pip_config)),
    "uv": (("uv.toml", formats.uv_toml), ("pyproject.toml", formats.uv_pyproject),
           (".config/uv/uv.toml", formats.uv_toml)),
    "poetry": (("pyproject.toml", formats.poetry_pyproject),),
    "pdm": (("pyproject.toml", formats.pdm_pyproject), ("pdm.toml", formats.pdm_toml)),
    "pipenv": (("Pipfile", formats.pipfile),),
    "npm": ((".npmrc", formats.npm_registries),),
    "yarn": ((".npmrc", formats.npm_registries), (".yarnrc", formats.npm_registries),
             (".yarnrc.yml", formats.yarnrc_yml)),
    "bun": ((".npmrc", formats.npm_registries), ("bunfig.toml", formats.bunfig)),
    "cargo": ((".cargo/config.toml", formats.cargo_config),
              (".cargo/config", formats.cargo_config)),
    "bundle": (("Gemfile", formats.gemfile),),
}  # fmt: skip


def index_files(name: str, args: list[str], ctx: Context) -> None:
    """Note the network exchange with each non-public index or registry the files ``name
    args`` reads set (module doc)."""
    if not ctx.knows_files:
        return  # no workspace and nothing written: no file's text can be known
    command = _command(name, args)
    if command is None:
        return
    tool, words = command
    if "--offline" in words or (tool == "cargo" and "--frozen" in words):
        return
    reader = _Reader(tool, ctx)
    if tool in ("pip", "pip-compile", "pip-sync", "uv", "uvx", "pipenv"):
        reader.python(words)
    elif tool == "conda":
        reader.conda(words)
    else:
        reader.node_and_others(words)
    exchange(reader.urls, ctx)


def _command(name: str, args: list[str]) -> tuple[str, list[str]] | None:
    """The tool ``name args`` runs and its words, when it is an install-like command."""
    if name.startswith("python"):
        if len(args) < 2 or args[0] != "-m" or args[1] not in ("pip", "pip3"):
            return None
        name, args = "pip", args[2:]
    elif name.startswith("pip") and name[3:].replace(".", "").isdigit():
        name = "pip"  # `pip3.11`
    tool = _TOOLS.get(name)
    if tool is None:
        return None
    subs = _subcommands(tool, args)
    first = subs[0] if subs else None
    second = subs[1] if len(subs) > 1 else None
    install_like = {
        "pip": first in _PIP_SUBS,
        "pip-compile": True,
        "pip-sync": True,
        "uvx": True,
        "uv": first in _UV_SUBS
        or (first == "pip" and second in ("install", "sync", "compile"))
        or (first == "tool" and second in ("install", "run", "upgrade")),
        "poetry": first in _PROJECT_SUBS,
        "pdm": first in _PROJECT_SUBS,
        "pipenv": first in _PROJECT_SUBS,
        "npm": first in _NPM_SUBS,
        "pnpm": first in _NPM_SUBS,
        "bun": first in _NPM_SUBS,
        "yarn": first is None or first in _YARN_SUBS,
        "cargo": first in _CARGO_SUBS,
        "bundle": first is None or first in _BUNDLE_SUBS,
        "conda": first in ("env", "create", "install", "update"),
    }[tool]
    return (tool, args) if install_like else None


def _subcommands(tool: str, words: list[str]) -> list[str]:
    """The first two words of ``words`` that are no option nor an option's value."""
    valued = _VALUED.get("npm" if tool in ("pnpm", "yarn", "bun") else tool, frozenset())
    found: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--":
            break
        elif word.startswith(("-", "+")):
            skip = word in valued
        else:
            found.append(word)
            if len(found) == 2:
                break
    return found


def option_values(words: list[str], names: tuple[str, ...]) -> list[str]:
    """The values of the options ``names`` in ``words`` (``--x V``, ``--x=V``, ``-xV``)."""
    found: list[str] = []
    for index, word in enumerate(words):
        if word == "--":
            break
        option, equals, value = word.partition("=")
        if option in names:
            if not equals:
                value = words[index + 1] if index + 1 < len(words) else ""
            found.append(value)
        elif word[:2] in names and len(word[:2]) == 2 and len(word) > 2 and word[1] != "-":
            found.append(word[2:])  # `-rrequirements.txt`
    return [value for value in found if value]


#: Real paths of the workspace roots seen (one or two per session; the reading runs per call).
_REAL_ROOTS: Final[dict[str, str]] = {}


def _real_root(root: str) -> str:
    """The real path of the workspace root ``root``, resolved once."""
    real = _REAL_ROOTS.get(root)
    if real is None:
        if len(_REAL_ROOTS) >= 16:
            _REAL_ROOTS.clear()
        real = _REAL_ROOTS[root] = os.path.realpath(root)
    return real


class _Reader:
    """The addresses one command's files give, and the files read for it."""

    def __init__(self, tool: str, ctx: Context) -> None:
        self.tool = tool
        self.ctx = ctx
        self.urls: list[str] = []
        self.read = 0
        self.no_index = False

    def python(self, words: list[str]) -> None:
        """pip, pip-tools, uv, pipenv: requirement files, configuration files, the project's."""
        ctx = self.ctx
        tool = self.tool
        self.no_index = "--no-index" in words
        files = option_values(words, _REQUIREMENT_OPTIONS)
        subs = _subcommands(tool, words) if tool == "uv" else []
        if tool in ("pip-compile", "pip-sync") or subs in (["pip", "compile"], ["pip", "sync"]):
            files += self._operands(words)  # `pip-compile requirements.in`, `uv pip sync F`
        for path in files:
            self.requirements(path, 0)
        if tool in ("pip", "pip-compile", "pip-sync"):
            config = ctx.variable("PIP_CONFIG_FILE")
            if config:
                self.named(config, formats.pip_config)
            venv = ctx.variable("VIRTUAL_ENV")
            if venv:
                self.project_file(posixpath.join(venv, "pip.conf"), formats.pip_config)
            self.project("pip", ".")
        elif tool in ("uv", "uvx"):
            given = option_values(words, ("--config-file",))
            for config in [ctx.variable("UV_CONFIG_FILE") or "", *given]:
                if config:
                    self.named(config, formats.uv_toml)
            self.project("uv", self.folder("uv", words))
        elif tool == "pipenv":
            self.project("pipenv", ".")

    def _operands(self, words: list[str]) -> list[str]:
        """The files ``pip-compile``/``pip-sync``/``uv pip compile|sync`` read by operand
        (their defaults when none is given)."""
        valued = _VALUED["pip"] | frozenset(_REQUIREMENT_OPTIONS) | {"-o", "--output-file",
            "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-P",
            "--upgrade-package", "--python-version", "-p", "--python"}  # fmt: skip
        operands: list[str] = []
        skip = False
        for word in words:
            if skip:
                skip = False
            elif word.startswith("-"):
                skip = word in valued
            elif word not in ("pip", "compile", "sync") or operands or self.tool != "uv":
                operands.append(word)
        if operands or self.tool == "uv":
            return operands
        return ["requirements.txt"] if self.tool == "pip-sync" else ["requirements.in"]

    def conda(self, words: list[str]) -> None:
        """``conda env create|update [-f F]``, ``create``/``install``/``update -f F``."""
        files = option_values(words, ("-f", "--file"))
        subs = _subcommands("conda", words)
        if not files and subs[:1] == ["env"] and subs[1:2] in (["create"], ["update"]):
            for default in ("environment.yml", "environment.yaml"):
                self.project_file(default, formats.conda_environment)
        for path in files:
            if path.endswith((".yml", ".yaml")):
                self.named(path, formats.conda_environment)

    def node_and_others(self, words: list[str]) -> None:
        """npm, pnpm, yarn, bun, poetry, pdm, cargo, bundle: their project files."""
        tool = self.tool
        kind = "npm" if tool == "pnpm" else tool
        if kind == "npm":
            given = option_values(words, ("--userconfig",))
            for config in [self.ctx.variable("NPM_CONFIG_USERCONFIG") or "", *given]:
                if config:
                    self.named(config, formats.npm_registries)
        if tool == "bundle":
            gemfile = self.ctx.variable("BUNDLE_GEMFILE") or next(
                iter(option_values(words, ("--gemfile",))), ""
            )
            if gemfile:
                self.named(gemfile, formats.gemfile)
                return
        if tool == "cargo":
            manifests = option_values(words, ("--manifest-path",))
            folder = posixpath.dirname(manifests[0]) or "." if manifests else "."
        else:
            folder = self.folder(tool, words)
        self.project(kind, folder)

    def folder(self, tool: str, words: list[str]) -> str:
        """The folder ``tool`` works in (its ``--directory``/``--prefix`` … or ``.``)."""
        names = _FOLDER.get("npm" if tool == "pnpm" else tool, ())
        found = option_values(words, names) if names else []
        return found[-1] if found else "."

    def project(self, tool: str, folder: str) -> None:
        """Read the project files of ``tool`` in ``folder`` and every folder above it up to
        the workspace root."""
        for prefix in self._levels(folder):
            for name, parser in _PROJECT_FILES[tool]:
                self.project_file(posixpath.normpath(posixpath.join(prefix, name)), parser)

    def _levels(self, folder: str) -> list[str]:
        """``folder`` and the folders above it inside the workspace, as paths from where the
        command runs."""
        ctx = self.ctx
        root = ctx.workspace_root
        if not root:
            return [folder]  # no workspace: the files written in the command, from here
        top = ctx.real_path(folder)
        real_root = _real_root(root)
        if top is None or (top != real_root and not top.startswith(real_root.rstrip("/") + "/")):
            return []  # a folder outside the workspace
        below = os.path.relpath(top, real_root)
        depth = 0 if below == "." else min(below.count(os.sep) + 1, MAX_LEVELS)
        return [posixpath.join(folder, *([".."] * up)) for up in range(depth + 1)]

    def project_file(self, path: str, parser: Parser) -> None:
        """Read a file the tool looks for: quiet when it is missing or outside."""
        text = self.ctx.settings_text(path)
        if text:
            self.keep(parser(text))

    def named(self, path: str, parser: Parser) -> None:
        """Read a file the command names (module doc)."""
        text = self._named_text(path)
        if text:
            self.keep(parser(text))

    def _named_text(self, path: str) -> str | None:
        if path in ("/dev/null", os.devnull) or "://" in path:
            return None
        ctx = self.ctx
        text = ctx.settings_text(path)
        if text is None and ctx.workspace_root is not None and ctx.workspace_folder(path) is None:
            ctx.unknown(f"{self.tool} reads its index from a file outside the workspace: {path}")
        return text

    def requirements(self, path: str, depth: int) -> None:
        """Read a requirements or constraints file and those it names (``-r``/``-c``)."""
        if depth > MAX_DEPTH or self.read >= MAX_FILES or "://" in path:
            return  # a URL is fetched, not read: as on the command line
        self.read += 1
        text = self._named_text(path)
        if not text:
            return
        found = formats.requirements(text)
        self.keep(found.find if self.no_index else found.indexes + found.find)
        for nested in found.nested:
            nested_path = posixpath.normpath(posixpath.join(posixpath.dirname(path), nested))
            self.requirements(nested_path, depth + 1)

    def keep(self, values: list[str]) -> None:
        """Keep ``values`` (the addresses among them are noted), each ``${NAME}`` in them the
        command's value of ``NAME`` when known, as pip and npm put it in."""
        for value in values:
            if "${" in value:
                value = _VARIABLE.sub(lambda m: self.ctx.variable(m.group(1)) or m.group(0), value)
            self.urls.append(value)


__all__ = ["MAX_DEPTH", "MAX_FILES", "MAX_LEVELS", "NAMES", "index_files",
           "option_values"]  # fmt: skip
