"""Other ways Node's tools run a project's scripts, or a program the project names.

* ``node --run X`` (Node 22) runs the script ``X`` of ``package.json``; ``deno task X`` runs the
  task ``X`` of ``deno.json``/``deno.jsonc`` (with its ``dependencies``), else the script ``X``.
* ``npm start`` with no ``start`` script runs ``node server.js``.
* ``npm pkg set scripts.X=CMD`` and ``npm set-script X CMD`` write a script a later command
  runs: the script is read as it is written.
* ``npm explore PKG -- CMD`` runs ``CMD``; ``npm init X``, ``npm create X``, ``yarn create X``
  (``pnpm``, ``bun``) run the bin ``create-X``.
* Arguments after the script's name (or after ``--``) are passed on to the script's command
  (``npm run x -- .env`` with ``"x": "cat"`` runs ``cat .env``): :func:`script_arguments`.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.node_config import apply_settings, manifest_of
from pytest_harness_audit.policy.shell.node_runners import exec_command, read_script

#: Interpreters that run a project's scripts by name.
NODE_RUNS: Final = frozenset({"node", "nodejs", "deno"})
_JSON_COMMENT: Final = re.compile(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
_MAX_TASKS: Final = 32


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


def node_run(name: str, args: list[str], runner: Runner) -> None:
    """``node --run X`` and ``deno task X``: the script or task ``X`` (module doc)."""
    if name == "deno":
        _deno_task(args, runner)
        return
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        if option != "--run":
            continue
        if not equals:
            value = args[index + 1] if index + 1 < len(args) else ""
        manifest = manifest_of(runner.workspace_text("package.json")) or {}
        scripts = manifest.get("scripts")
        body = scripts.get(value) if isinstance(scripts, dict) else None
        if isinstance(body, str):
            extra = shlex.join(args[args.index("--") + 1 :]) if "--" in args else ""
            read_script(value, f"{body} {extra}" if extra else body, manifest, "", {}, runner)
        return


def _deno_task(args: list[str], runner: Runner) -> None:
    """``deno task [--config FILE] X``: the task's command and those of its dependencies."""
    words: list[str] = []
    configs = ["deno.json", "deno.jsonc"]
    index = 0
    while index < len(args):
        option, equals, value = args[index].partition("=")
        if option in ("-c", "--config"):
            if not equals:
                index += 1
                value = args[index] if index < len(args) else ""
            configs = [value]
        elif not option.startswith("-"):
            words.append(args[index])
        index += 1
    if words[:1] != ["task"] or len(words) < 2:
        return
    tasks: dict[str, object] = {}
    for path in configs:
        text = runner.workspace_text(path)
        if text is None:
            continue
        config = manifest_of(_JSON_COMMENT.sub(lambda m: m.group(1) or "", text))
        if config is None:
            runner.unknown(f"deno reads a configuration that does not parse: {path}")
            return
        found = config.get("tasks")
        tasks = found if isinstance(found, dict) else {}
        break
    manifest = manifest_of(runner.workspace_text("package.json")) or {}
    scripts = manifest.get("scripts")
    pending, seen = [words[1]], set[str]()
    while pending and len(seen) < _MAX_TASKS:
        task = pending.pop(0)
        if task in seen:
            continue
        seen.add(task)
        entry = tasks.get(task, scripts.get(task) if isinstance(scripts, dict) else None)
        if isinstance(entry, dict):
            needed = entry.get("dependencies")
            pending += [n for n in needed if isinstance(n, str)] if isinstance(needed, list) else []
            entry = entry.get("command")
        if isinstance(entry, str):
            read_script(task, entry, manifest, "", {}, runner)


def other_command(
    name: str,
    command: str,
    words: list[str],
    args: list[str],
    folder: str,
    defined: dict[str, object],
    runner: Runner,
) -> None:
    """What a package runner's other commands run (module doc)."""
    if command == "start" and name == "npm" and "start" not in defined:
        server = posixpath.join(folder, "server.js")
        if runner.workspace_text(server) is not None:
            runner.script(f"node {shlex.quote(server)}")
    elif command == "pkg" and words[1:2] == ["set"]:
        for word in args:
            key, _, value = word.partition("=")
            if key.startswith("scripts.") and value.strip():
                runner.script(value)  # the script as written, before a later `npm run` runs it
    elif command in ("config", "set") and (words[1:2] == ["set"] or command == "set"):
        _config_set(name, words[2:] if command == "config" else words[1:], runner)
    elif command == "rebuild":
        runner.unknown(f"{name} rebuild runs the install scripts of every installed package")
    elif command == "set-script" and len(words) > 2:
        runner.script(words[2])
    elif command == "explore" and "--" in args:
        rest = args[args.index("--") + 1 :]
        if rest:
            runner.script(rest[0] if len(rest) == 1 else shlex.join(rest))
    elif command in ("init", "create", "innit") and len(words) > 1:
        rest = args[args.index(words[1]) + 1 :]
        exec_command([_create_bin(words[1]), *rest], folder, runner)


def _config_set(name: str, words: list[str], runner: Runner) -> None:
    """``npm config set script-shell ./x.sh`` (``key=value`` too), ``yarn config set yarnPath
    x.cjs``: a setting a later command runs with, read as it is set (it may be written out of
    the workspace, to the user's configuration)."""
    pairs = [w.partition("=")[::2] for w in words if "=" in w]
    if len(words) >= 2 and "=" not in words[0]:
        pairs.append((words[0], words[1]))
    for key, value in pairs:
        local = value.startswith((".", "/"))  # `yarn set version ./x.cjs` runs x.cjs from now on
        if key.lower() in ("yarnpath", "yarn-path") or (
            name == "yarn" and key == "version" and local
        ):
            runner.script(f"node {shlex.quote(value)}")
        else:
            apply_settings({key.lower(): value}, runner, runner.workspace_text)


def _create_bin(initializer: str) -> str:
    """The package ``npm init X`` runs: ``create-X`` (``@scope`` → ``@scope/create``)."""
    if initializer.startswith("@"):
        scope, slash, rest = initializer.partition("/")
        return f"{scope}/create-{rest}" if slash else f"{scope}/create"
    return f"create-{initializer}"


def script_arguments(name: str, args: list[str], words: list[str], target: str | None) -> str:
    """The arguments a command passes on to the script ``target``, as shell words to go after
    its text: those after ``--``, else (npm) the words after the script's name, or (yarn, pnpm,
    bun) everything after it."""
    if target is None:
        return ""
    if "--" in args:
        return shlex.join(args[args.index("--") + 1 :])
    given = words if name == "npm" else args
    return shlex.join(given[given.index(target) + 1 :]) if target in given else ""


__all__ = ["NODE_RUNS", "node_run", "other_command", "script_arguments"]
