"""What Node's package tools run besides a script's own text: local bins and script orchestrators.

* **Local bins.** ``npx tool``, ``npm exec tool`` (``npm x``), ``pnpm exec``/``dlx``,
  ``yarn exec``/``dlx``, ``yarn tool``/``pnpm tool`` (no script of that name), ``bunx tool``,
  and a ``package.json`` script naming a bin (npm puts ``node_modules/.bin`` first on the
  script's ``PATH``, so even ``echo`` may be one): the program is ``node_modules/.bin/tool`` of
  the package's folder or one above it (often a link to ``../pkg/bin.js``), or the package's
  own ``bin`` entry (``--package ./dir``: that package's); a workspace file is read as a
  program run by its path. The words are read as a command too (``pnpm exec`` runs any
  program), ``-c``/``--call`` text as a script, and a ``.js``/``.ts`` file named as code.
* **Orchestrators.** ``run-s``/``run-p``/``npm-run-all`` (script names and globs:
  ``build:*``, ``**``; ``--npm-path``), ``concurrently`` (``"npm:x"``, ``"yarn:lint:*"``,
  commands, ``--teardown``), ``wireit`` (the ``wireit`` section's commands and
  dependencies), ``corepack pnpm …``: each script named is read as ``npm run`` runs it;
  ``turbo`` and ``lerna`` in :mod:`.node_workspaces`. ``nx`` reads project configurations
  this reading does not: said unreadable.
* A script itself (:func:`read_script`): its ``npm_…`` variables put in (:mod:`.node_config`),
  its local bins, the script shell it runs through, from its package's folder.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable
from typing import Final, Protocol

from pytest_harness_audit.policy.path_forms import join_path, normal_path
from pytest_harness_audit.policy.shell.node_config import manifest_of, package_variables
from pytest_harness_audit.policy.shell.node_workspaces import folders_up, listed_names, monorepo

#: Programs that run local bins or ``package.json`` scripts themselves.
NODE_TOOLS: Final = frozenset(
    {"npx", "pnpx", "bunx", "run-s", "run-p", "npm-run-all", "npm-run-all2", "concurrently",
     "turbo", "lerna", "nx", "corepack"}
)  # fmt: skip
#: ``npx``/``npm exec`` options taking a value (``-c``/``--call``'s is a script).
_EXEC_VALUED: Final = frozenset(
    {"-p", "--package", "-c", "--call", "--cache", "--registry", "--userconfig", "--prefix",
     "-w", "--workspace", "--loglevel", "--node-options", "--script-shell", "-C", "--dir"}
)  # fmt: skip
_CONCURRENTLY_VALUED: Final = frozenset(
    {"-n", "--names", "-c", "--prefix-colors", "-p", "--prefix", "-s", "--success", "-m",
     "--max-processes", "--restart-tries", "--restart-after", "-l", "--prefix-length", "-t",
     "--timestamp-format", "--name-separator", "--default-input-target", "--cwd"}
)  # fmt: skip
_RUN_ALL_VALUED: Final = frozenset({"--npm-path", "--max-parallel"})
_SCRIPT_WORD: Final = re.compile(r"(?<![\w$@./-])[A-Za-z0-9_@][\w.@-]*")
_CODE_FILE: Final = re.compile(r"\.(?:[cm]?[jt]sx?)$")
#: Most words of one script looked up as local bins, scripts an orchestrator runs, packages.
_MAX_BIN_WORDS: Final = 32
_MAX_SCRIPTS: Final = 32
_MAX_WIREIT: Final = 32


class Runner(Protocol):
    """What the readers here need of the reading."""

    def script(self, text: str) -> None:
        """Read ``text`` as a script run by a shell."""
        ...

    def unknown(self, why: str) -> None:
        """A program runs something whose text is not in the command."""
        ...

    def program_file(self, path: str) -> None:
        """The file ``path`` is run as a program: read its text by its ``#!`` line."""
        ...

    def workspace_text(self, path: str) -> str | None:
        """The text of a workspace file, when the reading can see it."""
        ...


def node_tool(name: str, args: list[str], runner: Runner) -> None:
    """``npx``, ``bunx``, ``run-s``, ``concurrently``, ``turbo`` …: what they run (module doc)."""
    if name in ("npx", "pnpx", "bunx"):
        exec_command(args, "", runner)
    elif name in ("run-s", "run-p", "npm-run-all", "npm-run-all2"):
        _run_all(args, runner)
    elif name == "concurrently":
        _concurrently(args, runner)
    elif name in ("turbo", "lerna"):
        monorepo(name, args, runner)
    elif name == "corepack":
        if args[:1] and args[0] in ("npm", "npx", "pnpm", "pnpx", "yarn"):
            runner.script(shlex.join(args))
    else:
        runner.unknown(f"{name} runs targets of project configurations")


def exec_command(args: list[str], folder: str, runner: Runner) -> None:
    """``npx [options] tool args`` (and ``npm exec``, ``pnpm exec`` …): the local bin ``tool``
    read as a program, the words read as a command, a ``-c`` script read as one."""
    packages: list[str] = []  # `--package ./dir`: a local package, whose bins run
    index = 0
    while index < len(args):
        word = args[index]
        option, equals, value = word.partition("=")
        if word == "--":
            index += 1
            break
        if not word.startswith("-"):
            break
        if option in _EXEC_VALUED and not equals:
            index += 1
            value = args[index] if index < len(args) else ""
        if option in ("-c", "--call") and value:
            script_bins(value, folder, runner)
            runner.script(value)
        elif option in ("-p", "--package") and value.startswith((".", "/", "file:")):
            packages.append(join_path(folder, value.removeprefix("file:")))
        index += 1
    command = args[index:]
    if not command:
        return
    tool = command[0].removeprefix("file:")
    scoped = tool.startswith("@")
    if tool.startswith((".", "/")) or _CODE_FILE.search(tool) or ("/" in tool and not scoped):
        if _CODE_FILE.search(tool):
            runner.script(f"node {shlex.quote(join_path(folder, tool))}")
        elif runner.workspace_text(posixpath.join(folder, tool, "package.json")) is not None:
            _own_bins(join_path(folder, tool), None, runner)
        else:  # `pnpm exec ./run.sh`: a program by its path, whatever its name
            runner.program_file(join_path(folder, tool))
            runner.script(shlex.join(command))
        return
    for package in packages:
        _own_bins(package, _bin_name(tool), runner)
    local_bin(_bin_name(tool), folder, runner)
    if len(command) == 1 and any(c.isspace() for c in tool):
        runner.script(tool)  # `pnpm exec "cat .env"`: a shell's text, in shell mode
    else:  # `npx dotenv-cli -- env` runs the package's bin, `dotenv`
        runner.script(shlex.join([_PACKAGE_BINS.get(_bin_name(tool), tool), *command[1:]]))


#: Packages whose bin has another name than the package.
_PACKAGE_BINS: Final = {"dotenv-cli": "dotenv"}


def _bin_name(spec: str) -> str:
    """The bin a package spec runs: ``@scope/pkg@1.2`` → ``pkg``."""
    name = spec[: spec.rfind("@")] if spec.rfind("@") > 0 else spec
    return name.rsplit("/", 1)[-1]


def local_bin(tool: str, folder: str, runner: Runner) -> bool:
    """Read the local bin ``tool`` as a program: ``node_modules/.bin/tool`` of ``folder`` or a
    folder above it in the workspace, else the package's own ``bin``; whether one was found."""
    if not tool or tool in (".", ".."):
        return False
    for base in folders_up(folder, runner):
        path = posixpath.join(base, "node_modules/.bin", tool)
        if runner.workspace_text(path) is not None:
            runner.program_file(path)
            return True
    return _own_bins(folder, tool, runner)  # `npx own-cli` in its own package


def _own_bins(folder: str, tool: str | None, runner: Runner) -> bool:
    """The ``bin`` entries of the package in ``folder`` (the one named ``tool``, or every one)."""
    manifest = manifest_of(runner.workspace_text(join_path(folder, "package.json")))
    if manifest is None:
        return False
    bins = manifest.get("bin")
    if isinstance(bins, str):
        bins = {_bin_name(str(manifest.get("name", ""))): bins}
    if not isinstance(bins, dict):
        return False
    found = False
    for name, path in list(bins.items())[:_MAX_SCRIPTS]:
        if isinstance(path, str) and (tool is None or name == tool):
            runner.program_file(normal_path(join_path(folder, path)))
            found = True
    return found


def script_bins(body: str, folder: str, runner: Runner) -> None:
    """The local bins a script may run by name (npm puts ``node_modules/.bin`` first on its
    ``PATH``, so even ``echo`` may be one): each read as a program."""
    words = list(dict.fromkeys(_SCRIPT_WORD.findall(body)))[:_MAX_BIN_WORDS]
    if not words:
        return
    bases = [join_path(base, "node_modules/.bin") for base in folders_up(folder, runner)]
    listed = [listed_names(base, runner) for base in bases]
    for word in words:
        for base, names in zip(bases, listed, strict=True):
            path = join_path(base, word)
            if (names is None or word in names) and runner.workspace_text(path) is not None:
                runner.program_file(path)
                break


def _run_all(args: list[str], runner: Runner) -> None:
    """``run-s a b``, ``npm-run-all -p "build:*"``: each script named (or matched) is run."""
    patterns: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        option, equals, value = word.partition("=")
        index += 1
        if word == "--":
            break
        if option in _RUN_ALL_VALUED:
            if not equals:
                value = args[index] if index < len(args) else ""
                index += 1
            if option == "--npm-path":
                _npm_path(value, runner)
        elif word.strip() and not word.startswith("-"):
            patterns.append(word.split()[0])
    scripts = _scripts(runner)
    for name in _matching(patterns, scripts, _run_all_pattern):
        runner.script(f"npm run {shlex.quote(name)}")


def _npm_path(path: str, runner: Runner) -> None:
    """``--npm-path X``: the npm ``npm-run-all`` runs scripts with (a ``.js`` file by node)."""
    if _CODE_FILE.search(path):
        runner.script(f"node {shlex.quote(path)}")
    elif "/" in path:
        runner.program_file(path)


def _concurrently(args: list[str], runner: Runner) -> None:
    """``concurrently "npm:watch-*" "tsc -w"``: each command, or the scripts it names."""
    index = 0
    while index < len(args):
        word = args[index]
        option, equals, value = word.partition("=")
        index += 1
        if option == "--teardown":
            if not equals and index < len(args):
                value, index = args[index], index + 1
            runner.script(value)
        elif option in _CONCURRENTLY_VALUED:
            index += 0 if equals else 1
        elif word.startswith("-") or not word.strip():
            continue
        elif found := re.match(r"(npm|yarn|pnpm|bun):(\S+)(.*)", word, re.DOTALL):
            scripts = _scripts(runner)
            for name in _matching([found.group(2)], scripts, _wildcard_pattern):
                runner.script(f"npm run {shlex.quote(name)}{found.group(3)}")
        else:
            runner.script(word)


def read_script(
    name: str,
    body: str,
    manifest: dict[str, object],
    folder: str,
    settings: dict[str, str],
    runner: Runner,
    seen: set[str] | None = None,
) -> None:
    """Read the ``package.json`` script ``name`` run in ``folder``: its ``npm_…`` variables
    put in, the local bins it names, its script shell, a ``wireit`` script's configuration."""
    if body.split()[:1] == ["wireit"]:
        _wireit(name, manifest, folder, settings, runner, seen if seen is not None else set())
        return
    text = package_variables(body, manifest, name, settings) + body
    script_bins(body, folder, runner)
    # each script starts in its package's folder, and the command goes on where it was
    start = f"pushd {shlex.quote(folder or '.')} && "
    runner.script(f"{start}{text}\npopd")
    shell = settings.get("script-shell", "").strip()
    if shell:
        runner.script(f"{start}{shlex.quote(shell)} -c {shlex.quote(text)}\npopd")


def _wireit(
    name: str,
    manifest: dict[str, object],
    folder: str,
    settings: dict[str, str],
    runner: Runner,
    seen: set[str],
) -> None:
    """A ``wireit`` script: its ``command`` and its ``dependencies`` (scripts of this package,
    or ``./other:script`` of another), from the ``wireit`` section."""
    key = f"{folder}:{name}"
    if key in seen or len(seen) >= _MAX_WIREIT:
        return
    seen.add(key)
    section = manifest.get("wireit")
    entry = section.get(name) if isinstance(section, dict) else None
    if not isinstance(entry, dict):
        runner.unknown(f"wireit runs a script with no configuration: {name}")
        return
    command = entry.get("command")
    if isinstance(command, str):
        read_script(name, command, manifest, folder, settings, runner, seen)
    for needed in entry.get("dependencies") or []:
        target = needed.get("script") if isinstance(needed, dict) else needed
        if not isinstance(target, str):
            continue
        where, colon, script = (
            target.rpartition(":") if target.startswith(".") else ("", "", target)
        )
        other = normal_path(join_path(folder, where)) if colon else folder
        other = "" if other == "." else other
        found = (
            manifest
            if other == folder
            else manifest_of(runner.workspace_text(join_path(other, "package.json")))
        )
        scripts = found.get("scripts") if found else None
        body = scripts.get(script) if isinstance(scripts, dict) else None
        if found is not None and isinstance(body, str):
            read_script(script, body, found, other, settings, runner, seen)


def _scripts(runner: Runner) -> dict[str, str]:
    """The scripts of the ``package.json`` where the command runs."""
    scripts = (manifest_of(runner.workspace_text("package.json")) or {}).get("scripts")
    if not isinstance(scripts, dict):
        return {}
    return {k: v for k, v in scripts.items() if isinstance(k, str) and isinstance(v, str)}


def _run_all_pattern(pattern: str) -> str:
    """npm-run-all's globs: ``*`` within one ``:`` part, ``**`` across parts."""
    return re.escape(pattern).replace(r"\*\*", ".*").replace(r"\*", "[^:]*").replace(r"\?", "[^:]")


def _wildcard_pattern(pattern: str) -> str:
    """concurrently's wildcard: ``*`` for anything; an exclusion ``(!fix)`` is ignored."""
    return re.escape(re.sub(r"\(!.*?\)", "", pattern)).replace(r"\*", ".*")


def _matching(
    patterns: list[str], scripts: dict[str, str], convert: Callable[[str], str]
) -> list[str]:
    """The script names the patterns name or match (in the order given)."""
    names: list[str] = []
    for pattern in patterns:
        if not re.search(r"[*?]", pattern):
            names.append(pattern)
            continue
        regex = re.compile(convert(pattern))
        names += [name for name in scripts if regex.fullmatch(name)]
    return list(dict.fromkeys(names))[:_MAX_SCRIPTS]


__all__ = [
    "NODE_TOOLS",
    "exec_command",
    "local_bin",
    "node_tool",
    "read_script",
    "script_bins",
]
