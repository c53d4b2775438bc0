"""Task runners whose tasks are written in a workspace file: what a task runs is read from it.

Like ``make`` and ``npm run`` (:mod:`.projects`), these run commands a workspace file holds, so an
ordinary ``just test`` or ``pytest`` could hide what a file written earlier does:

* **just** (``justfile``, ``-f FILE``): the recipes named (else the first), their dependencies,
  with ``name := "value"`` variables put in; a recipe with a ``#!`` line is read by it.
* **task** (go-task, ``Taskfile.yml``, ``-t FILE``): the ``cmds`` of the tasks named (else
  ``default``) and of their ``deps`` and ``task:`` calls.
* **pre-commit** (``.pre-commit-config.yaml``, ``-c FILE``) and **lefthook** (``lefthook.yml``):
  the ``entry``/``run`` of the local hooks.
* **tox** (``tox.ini``): the ``commands`` (``_pre``, ``_post``) of every ``testenv``, with its
  ``setenv`` variables and ``{posargs}`` (the words after ``tox --``).
* **composer** (``composer.json``): the ``scripts`` that run.
* **rake** (``Rakefile``): its top level and the tasks that run, as Ruby code
  (:mod:`.rakefiles`).
* Code files a runner imports: ``noxfile.py`` (nox), ``tasks.py`` (invoke), ``fabfile.py``
  (fab), ``dodo.py`` (doit), build code (``pip install .``, :mod:`.builds`), ``conftest.py``,
  the test files named and the plugins it loads (pytest, :mod:`.pytest_plugins`): read as
  program text.

What cannot be worked out (a template left unresolved, a shell replaced, an included Taskfile)
is said unreadable, never taken as an empty task.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, Final

from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.shell.builds import BUILDERS, builds
from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.justfiles import just, read_body
from pytest_harness_audit.policy.shell.project_tables import poe
from pytest_harness_audit.policy.shell.pytest_plugins import plugins
from pytest_harness_audit.policy.shell.pytest_settings import SETTINGS_FILES
from pytest_harness_audit.policy.shell.rakefiles import rake
from pytest_harness_audit.policy.shell.task_words import closure, operands, option

#: The task runners read here (``python -m NAME`` too, for those that are Python modules).
TASK_RUNNERS: Final = frozenset(
    {"just", "task", "go-task", "pre-commit", "lefthook", "tox", "composer", "nox", "invoke",
     "inv", "rake", "fab", "doit", "pip", "pip3", "pytest", "py.test", "unittest", "poe",
     "poethepoet"}
) | frozenset(BUILDERS)  # fmt: skip
#: Code files a runner loads, by runner: (default files, options naming another one).
_CODE_FILES: Final[dict[str, tuple[tuple[str, ...], frozenset[str]]]] = {
    "nox": (("noxfile.py",), frozenset({"-f", "--noxfile"})),
    "invoke": (("tasks.py", "tasks/__init__.py"), frozenset({"-c", "--collection"})),
    "inv": (("tasks.py", "tasks/__init__.py"), frozenset({"-c", "--collection"})),
    "rake": (("Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb"), frozenset({"-f"})),
    "fab": (("fabfile.py", "fabfile/__init__.py"), frozenset({"-f"})),
    "doit": (("dodo.py",), frozenset({"-f", "--file"})),
}
_TASK_FILES: Final = ("Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml",
               "Taskfile.dist.yml", "Taskfile.dist.yaml")  # fmt: skip


def task_runner(name: str, args: list[str], runner: Runner) -> None:
    """What task runner ``name`` runs with ``args`` (module doc); a task file of a shape the
    reading does not expect (``repos: 5``) makes the command unreadable."""
    try:
        _task_runner(name, args, runner)
    except (TypeError, AttributeError, KeyError, ValueError, IndexError):
        runner.unknown(f"{name} reads a task file of a shape the reading does not know")


def _task_runner(name: str, args: list[str], runner: Runner) -> None:
    if name in _CODE_FILES:
        _code_file(name, args, runner)
    elif name == "just":
        just(args, runner)
    elif name in ("task", "go-task"):
        _taskfile(args, runner)
    elif name == "pre-commit":
        _pre_commit(args, runner)
    elif name == "lefthook":
        _lefthook(args, runner)
    elif name == "tox":
        _tox(args, runner)
    elif name == "composer":
        _composer(args, runner)
    elif name in BUILDERS:
        builds(name, args, runner)
    elif name in ("pytest", "py.test"):
        _pytest(args, runner)
    elif name in ("poe", "poethepoet"):
        poe(args, runner)
    elif name == "unittest":
        _unittest(args, runner)


def module_runner(args: list[str], runner: Runner) -> None:
    """``python -m pytest``, ``python -m pip install .`` …: the task runner the module is."""
    for index, word in enumerate(args[:-1]):
        if word == "-m":
            if args[index + 1] in TASK_RUNNERS:
                task_runner(args[index + 1], args[index + 2 :], runner)
            return


def _code_file(name: str, args: list[str], runner: Runner) -> None:
    if name == "rake":
        rake(args, runner)  # its tasks: what the command line names (:mod:`.rakefiles`)
        return
    defaults, options = _CODE_FILES[name]
    given = option(args, options)
    if given is not None and name in ("invoke", "inv") and not given.endswith(".py"):
        given = f"{given.replace('.', '/')}.py"
    for path in (given,) if given else defaults:
        if runner.workspace_text(path) is not None:
            runner.script_file(path, code=True)
            return


# -- Taskfile, pre-commit, lefthook, tox, composer ---------------------------------------------
def _yaml(path: str, runner: Runner) -> Any:
    text = runner.workspace_text(path)
    if text is None:
        return None
    import yaml  # the policy engine loads PyYAML only when a task file is read

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        runner.unknown(f"{path} does not parse")
        return None


_TASK_OWN: Final = frozenset(
    {"-l", "--list", "-a", "--list-all", "--summary", "-n", "--dry", "-i", "--init", "--version",
     "-h", "--help", "--status"}
)  # fmt: skip


def _taskfile(args: list[str], runner: Runner) -> None:
    if any(word in _TASK_OWN for word in args):
        return  # `task --list`, `--dry`: no task runs
    given = option(args, ("-t", "--taskfile"))
    path = given or next((p for p in _TASK_FILES if runner.workspace_text(p) is not None), None)
    document = _yaml(path, runner) if path else None
    if not isinstance(document, dict):
        return
    tasks = document.get("tasks") or {}
    if not isinstance(tasks, dict):
        return
    variables = {
        str(k): str(v) for k, v in (document.get("vars") or {}).items() if isinstance(v, str)
    }
    named = operands(args, frozenset({"-t", "--taskfile", "-d", "--dir"})) or ["default"]
    named = [name for name in named if "=" not in name]  # `task build VAR=x`: a variable
    if any(name not in tasks for name in named) and document.get("includes"):
        runner.unknown("the task runs from a Taskfile this one includes")
    for value in (document.get("vars") or {}).values():
        if isinstance(value, dict) and isinstance(value.get("sh"), str):
            runner.script(value["sh"])  # a dynamic variable: task runs it

    def calls(task: str) -> list[str]:
        spec = tasks.get(task)
        if not isinstance(spec, dict):
            return []
        deps = [d if isinstance(d, str) else d.get("task", "") for d in spec.get("deps") or []]
        inner = [c.get("task", "") for c in spec.get("cmds") or [] if isinstance(c, dict)]
        return [str(name) for name in deps + inner if name]

    for task in closure(named, calls):
        spec = tasks.get(task)
        commands = spec if isinstance(spec, list) else [spec] if isinstance(spec, str) else []
        if isinstance(spec, dict):
            commands = spec.get("cmds") or ([spec["cmd"]] if "cmd" in spec else [])
        for command in commands if isinstance(commands, list) else [commands]:
            text = command.get("cmd") if isinstance(command, dict) else command
            if isinstance(text, str):
                read_body(re.sub(r"\{\{\s*\.", "{{", text), variables, runner)


def _pre_commit(args: list[str], runner: Runner) -> None:
    if operands(args, frozenset({"-c", "--config"}))[:1] not in ([], ["run"], ["try-repo"]):
        return  # `pre-commit install`, `autoupdate` … run no hook
    document = _yaml(option(args, ("-c", "--config")) or ".pre-commit-config.yaml", runner)
    if not isinstance(document, dict):
        return
    for repo in document.get("repos") or []:
        if not isinstance(repo, dict) or repo.get("repo") not in ("local", "meta"):
            continue
        for hook in repo.get("hooks") or []:
            if not isinstance(hook, dict) or not isinstance(hook.get("entry"), str):
                continue
            extra = " ".join(str(a) for a in hook.get("args") or [])
            entry = f"{hook['entry']} {extra}".strip()
            if hook.get("language") == "script":
                runner.program_file(entry.split()[0])
            elif hook.get("language") in ("python", "node", "ruby", "perl", "lua", "r"):
                runner.read_text(entry, code=True)
            else:
                runner.script(entry)


def _lefthook(args: list[str], runner: Runner) -> None:
    document = None
    for path in ("lefthook.yml", "lefthook.yaml", ".lefthook.yml", "lefthook-local.yml"):
        if runner.workspace_text(path) is not None:
            document = _yaml(path, runner)
            break
    if not isinstance(document, dict):
        return
    words = operands(args)
    if words[:1] != ["run"]:
        return  # `lefthook install` runs no hook
    for hook_name, hook in document.items():
        if hook_name not in words[1:2] or not isinstance(hook, dict):
            continue
        for command in (hook.get("commands") or {}).values():
            if isinstance(command, dict) and isinstance(command.get("run"), str):
                runner.script(command["run"])
        for script in hook.get("scripts") or {}:
            runner.program_file(f".lefthook/{hook_name}/{script}")


def _tox(args: list[str], runner: Runner) -> None:
    """The ``commands`` of every ``testenv`` of ``tox.ini`` (``-c FILE``), run with the
    ``setenv`` variables of the ``testenv`` sections and the words after ``--`` put in for
    ``{posargs}`` (else its default)."""
    text = runner.workspace_text(option(args, ("-c", "--conf")) or "tox.ini")
    if text is None:
        return
    posargs = shlex.join(args[args.index("--") + 1 :]) if "--" in args else None
    variables: list[str] = []
    commands: list[str] = []
    section = ""
    key = ""
    for line in text.splitlines()[:4096]:
        stripped = line.strip()
        if stripped.startswith("["):
            section, key = stripped.strip("[]").strip(), ""
            continue
        if not section.startswith("testenv") or not stripped or stripped[0] in "#;":
            continue
        if line[:1] in (" ", "\t") and key:
            value = stripped
        elif "=" in stripped:
            key, _, value = (part.strip() for part in stripped.partition("="))
            key = key if key in ("commands", "commands_pre", "commands_post", "setenv") else ""
        else:
            continue
        if key == "setenv" and "=" in value:
            name, _, setting = (part.strip() for part in value.partition("="))
            variables.append(f"{name}={_tox_values(setting, posargs)}")
        elif key and value:
            commands.append(_tox_values(value, posargs).lstrip("-!").strip())
    prefix = shlex.join(["env", *variables]) + " " if variables else ""
    for command in commands:
        runner.script(prefix + command)


def _tox_values(value: str, posargs: str | None) -> str:
    """A tox value with its substitutions put in: ``{posargs}`` (``{posargs:DEFAULT}``) as the
    words given, other names as the folder."""
    value = re.sub(
        r"\{posargs(?::([^}]*))?\}",
        lambda found: posargs if posargs is not None else (found.group(1) or ""),
        value,
    )
    return re.sub(r"\{[a-z_]+\}", ".", value.replace("{envpython}", "python"))


def _composer(args: list[str], runner: Runner) -> None:
    text = runner.workspace_text("composer.json")
    if text is None:
        return
    try:
        scripts = json.loads(text).get("scripts") or {}
    except (ValueError, AttributeError):
        runner.unknown("composer.json does not parse")
        return
    words = operands(args, frozenset({"-d", "--working-dir"}))
    if not words or not isinstance(scripts, dict):
        return
    if words[0] in ("run", "run-script"):
        start = words[1:2]
    elif words[0] in ("install", "update", "i", "u"):
        start = [f"{when}-{(words[0][0] == 'i' and 'install') or 'update'}-cmd"
                 for when in ("pre", "post")] + ["post-autoload-dump"]  # fmt: skip
    else:
        start = words[:1]

    def references(script: str) -> list[str]:
        body = scripts.get(script)
        lines = body if isinstance(body, list) else [body]
        return [line[1:].split()[0] for line in lines if isinstance(line, str) and line[:1] == "@"]

    for script in closure(start, references):
        body = scripts.get(script)
        for line in body if isinstance(body, list) else [body]:
            if not isinstance(line, str) or (line.startswith("@") and " " not in line):
                continue
            if re.fullmatch(r"[\w\\]+::\w+", line):
                runner.unknown(f"a composer script calls PHP code: {line}")
            else:
                runner.script(line.removeprefix("@php ").removeprefix("@putenv "))


# -- pytest ------------------------------------------------------------------
def _pytest(args: list[str], runner: Runner) -> None:
    """The test files and ``conftest.py`` files pytest collects from the paths given (else its
    ``testpaths``, else the folder it runs in), each read as program text."""
    valued = frozenset({"-k", "-m", "-c", "-p", "-o", "--rootdir", "--confcutdir", "-W"})
    paths = [word.split("::", 1)[0] for word in operands(args, valued)]
    files = [path for path in ("conftest.py",) if runner.workspace_text(path) is not None]
    settings = {path: runner.settings_text(path) for path in SETTINGS_FILES}
    for path in (paths or _testpaths(settings) or ["."])[:16]:
        if path.endswith(".py"):
            files.append(path)
            continue
        listing = runner.workspace_files(path)
        if listing is None:
            runner.unknown(f"pytest collects tests from more files than the reading lists: {path}")
            return
        files.extend(found for found in listing if _TEST_FILE.search(found))
    for path in files:
        runner.load_code(path)
    plugins(args, [path for path in files if path.endswith("conftest.py")], runner, settings)


def _unittest(args: list[str], runner: Runner) -> None:
    """``python -m unittest [discover -s DIR -p PATTERN]``: the test modules it imports."""
    words = operands(args, frozenset({"-s", "--start-directory", "-p", "--pattern", "-t", "-k"}))
    if words and words[0] != "discover":
        for word in words[:16]:  # modules, classes or files named
            module = word[:-3] if word.endswith(".py") else word.split(".")[0]
            for path in (f"{module}.py", f"{module}/__init__.py"):
                if runner.workspace_text(path) is not None:
                    runner.load_code(path)
        return
    start = option(args, ("-s", "--start-directory")) or (words[1] if len(words) > 1 else ".")
    pattern = option(args, ("-p", "--pattern")) or (words[2] if len(words) > 2 else "test*.py")
    listing = runner.workspace_files(start)
    if listing is None:
        runner.unknown(f"unittest discovers tests in more files than the reading lists: {start}")
        return
    for path in listing:
        if wildcards.fnmatchcase(path.rsplit("/", 1)[-1], pattern):
            runner.load_code(path)


_TEST_FILE: Final = re.compile(r"(?:^|/)(?:conftest|test_[^/]*|[^/]*_test)\.py$")


def _testpaths(settings: dict[str, str | None]) -> list[str]:
    """pytest's ``testpaths`` setting, from the files it reads its settings from."""
    for path in ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
        text = settings.get(path) or ""
        found = re.search(r"(?m)^\s*testpaths\s*=\s*(\[[^\]]*\]|.*)$", text)
        if found is not None:
            value = found.group(1)
            quoted = re.findall(r"""['"]([^'"]+)['"]""", value)
            return quoted if value.startswith("[") else value.split()
    return []


__all__ = ["TASK_RUNNERS", "module_runner", "task_runner"]
