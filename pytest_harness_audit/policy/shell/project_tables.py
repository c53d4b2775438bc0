"""Script tables of Python project tools: what ``pdm run NAME``, ``hatch run NAME``, ``rye run
NAME``, ``pixi run NAME``, ``poe NAME`` and ``uv``/``poetry run NAME`` run when NAME is a script
of the project rather than a command.

* **pdm** ``[tool.pdm.scripts]`` (with its ``pre_``/``post_`` hooks), **rye**
  ``[tool.rye.scripts]``, **hatch** ``[tool.hatch.envs.*.scripts]`` (``hatch.toml``
  ``[envs.*.scripts]``; ``env:NAME`` too), **poe** ``[tool.poe.tasks]`` (``poe_tasks.toml``
  ``[tasks]``), **pixi** ``pixi.toml`` ``[tasks]`` (and those of ``feature``/``target``
  tables, or ``[tool.pixi.tasks]``).
* A script is a command text (read as a shell script, the arguments after it appended), a list
  (of scripts or commands), or a table: ``cmd``/``shell`` (a command), ``call``/``script``
  (``module:function``: the module read as program text), ``composite``/``sequence``/``chain``/
  ``ref``/``depends-on`` (other scripts), ``expr`` (Python text), and the env files it loads
  (``env_file``/``envfile``/``env-file``: read).
* ``[project.scripts]``/``[project.gui-scripts]``/``[tool.poetry.scripts]`` entry points
  (``pkg.mod:main``) run by name through a launcher: the module is read (from the root or
  ``src``).

Every table that may hold the name is read (one reading too many, never too few); a settings
file that is not well-formed TOML is unreadable.
"""

from __future__ import annotations

import shlex
from typing import Any, Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.pymodules import module_files
from pytest_harness_audit.policy.shell.tomlfiles import parse_toml, table

#: Launchers whose ``run NAME`` may run a script of the project (or an entry point).
SCRIPT_LAUNCHERS: Final = frozenset({"pdm", "hatch", "rye", "pixi", "uv", "poetry"})
#: Most scripts read for one command (a script and those it runs).
MAX_SCRIPTS: Final = 32
_ENV_FILE_KEYS: Final = ("env_file", "envfile", "env-file")
_LIST_KEYS: Final = ("composite", "sequence", "chain", "depends-on", "depends_on", "deps")


class _Tables:
    """The script tables a command may take a name from, and what was read of them."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.tables: list[dict[str, Any]] = []
        self.read = 0

    def document(self, path: str) -> dict[str, Any] | None:
        text = self.runner.settings_text(path)
        if text is None:
            return None
        document = parse_toml(text)
        if document is None:
            self.runner.unknown(f"a script table of a file that is not well-formed TOML: {path}")
        return document

    def find(self, name: str) -> list[object]:
        return [found[name] for found in self.tables if name in found]

    def run(self, name: str, extra: list[str], hooks: bool = False) -> bool:
        """Read the script ``name`` (its ``pre_``/``post_`` hooks too); whether there was one."""
        found = self.find(name)
        for value in found:
            self.value(value, extra)
        if hooks and found:
            for hook in (f"pre_{name}", f"post_{name}"):
                for value in self.find(hook):
                    self.value(value, [])
        return bool(found)

    def value(self, value: object, extra: list[str]) -> None:
        runner = self.runner
        self.read += 1
        if self.read > MAX_SCRIPTS:
            if self.read == MAX_SCRIPTS + 1:
                runner.unknown(f"a project script runs more than {MAX_SCRIPTS} scripts")
            return
        if isinstance(value, str):
            if not self.run(value.split(" ", 1)[0], extra) or " " in value.strip():
                runner.script(" ".join([value, *map(shlex.quote, extra)]))
        elif isinstance(value, list):
            for item in value:
                self.value(item, [])
        elif isinstance(value, dict):
            self.table(value, extra)

    def env_files(self, value: dict[str, Any]) -> None:
        """The env files a script (or the table's shared settings) loads: read."""
        for key in _ENV_FILE_KEYS:
            files = value.get(key)
            if isinstance(files, dict):  # pdm's `{override = ".env"}`
                files = list(files.values())
            for path in [files] if isinstance(files, str) else files or ():
                if isinstance(path, str):
                    self.runner.reading.reads.append(path)

    def table(self, value: dict[str, Any], extra: list[str]) -> None:
        runner = self.runner
        self.env_files(value)
        for key in ("cmd", "shell"):
            command = value.get(key)
            if isinstance(command, list):
                command = " ".join(shlex.quote(str(word)) for word in command)
            if isinstance(command, str):
                runner.script(" ".join([command, *map(shlex.quote, extra)]))
        for key in ("call", "script"):
            target = value.get(key)
            if isinstance(target, str):
                entry_point(target, runner)
        expression = value.get("expr")
        if isinstance(expression, str):
            runner.read_text(expression, code=True)
        for key in (*_LIST_KEYS, "ref"):
            listed = value.get(key)
            for item in [listed] if isinstance(listed, str) else listed or ():
                if isinstance(item, dict) and isinstance(item.get("task"), str):
                    item = item["task"]  # pixi's `{task = "name"}`
                if isinstance(item, str):
                    if not self.run(item.split(" ", 1)[0], []):
                        runner.script(item)
                else:  # a task written in place (`sequence = [{shell = "…"}]`)
                    self.value(item, [])
        switch = value.get("switch")
        for case in switch if isinstance(switch, list) else ():
            if isinstance(case, dict):
                self.table(case, extra)


def entry_point(target: str, runner: Runner) -> None:
    """``pkg.mod:main`` (or ``pkg.mod:main('x')``): the module's workspace file is read."""
    module = target.split(":", 1)[0].strip()
    for path in module_files(module, [".", "src"]):
        if runner.workspace_text(path) is not None:
            runner.load_code(path)


def project_script(launcher: str, argv: list[str], runner: Runner) -> bool:
    """``LAUNCHER run NAME ARGS`` (``argv``: ``NAME ARGS``): read the project script or entry
    point NAME; whether NAME was one (else it is a command, read as such)."""
    if not argv:
        return False
    tables = _Tables(runner)
    pyproject = tables.document("pyproject.toml") or {}
    name = argv[0]
    if launcher == "pdm":
        scripts = table(pyproject, "tool", "pdm", "scripts")
        tables.tables = [scripts]
        if tables.run(name, argv[1:], hooks=True):
            tables.env_files(table(scripts, "_"))  # settings shared by every script
            return True
    elif launcher == "rye":
        tables.tables = [table(pyproject, "tool", "rye", "scripts")]
        if tables.run(name, argv[1:]):
            return True
    elif launcher == "hatch":
        if _hatch(tables, pyproject, name, argv[1:]):
            return True
    elif launcher == "pixi":
        return _pixi(tables, pyproject, name, argv[1:])
    return _entry_points(pyproject, name, runner)


def poe(args: list[str], runner: Runner) -> None:
    """``poe [options] NAME ARGS``: the task NAME of ``[tool.poe.tasks]``/``poe_tasks.toml``."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in ("-C", "--directory", "--root", "-e", "--executor") else 1
    if index >= len(args):
        return
    tables = _Tables(runner)
    pyproject = tables.document("pyproject.toml") or {}
    tables.tables = [table(pyproject, "tool", "poe", "tasks")]
    tables.tables.append(table(tables.document("poe_tasks.toml") or {}, "tasks"))
    for path in [table(pyproject, "tool", "poe").get("envfile")]:
        if isinstance(path, str):
            runner.reading.reads.append(path)
    tables.run(args[index], args[index + 1 :])


def _hatch(tables: _Tables, pyproject: dict[str, Any], name: str, extra: list[str]) -> bool:
    environment, colon, script = name.rpartition(":")
    name = script if colon else name
    envs = [table(pyproject, "tool", "hatch", "envs"), table(tables.document("hatch.toml"), "envs")]
    tables.tables = [
        table(settings, "scripts")
        for found in envs
        for env, settings in found.items()
        if not environment or env == environment
    ]
    return tables.run(name, extra)


def _pixi(tables: _Tables, pyproject: dict[str, Any], name: str, extra: list[str]) -> bool:
    found: list[dict[str, Any]] = []
    for document in (tables.document("pixi.toml") or {}, table(pyproject, "tool", "pixi")):
        found.append(table(document, "tasks"))
        for group in ("feature", "target"):
            found.extend(table(v, "tasks") for v in table(document, group).values())
            found.extend(
                table(t, "tasks")
                for v in table(document, group).values()
                for t in table(v, "target").values()
            )
    tables.tables = found
    return tables.run(name, extra)


def _entry_points(pyproject: dict[str, Any], name: str, runner: Runner) -> bool:
    entries = [
        table(pyproject, "project", "scripts"),
        table(pyproject, "project", "gui-scripts"),
        table(pyproject, "tool", "poetry", "scripts"),
    ]
    found = False
    for entry in entries:
        target = entry.get(name)
        if isinstance(target, dict):
            target = target.get("reference") or target.get("callable")
        if isinstance(target, str):
            entry_point(target, runner)
            found = True
    return found


__all__ = ["MAX_SCRIPTS", "SCRIPT_LAUNCHERS", "entry_point", "poe", "project_script"]
