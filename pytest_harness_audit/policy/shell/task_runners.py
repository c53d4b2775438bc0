"""Task runners whose tasks are written in a workspace file: what a task runs is read from it.

Like ``make`` and ``npm run`` (:mod:`.projects`), these run commands a workspace file holds, so an
ordinary ``just test`` or ``pytest`` could hide what a file written earlier does:

* **just** (``justfile``, ``-f FILE``): the recipes named (else the first), their dependencies,
  with ``name := "value"`` variables put in; a recipe with a ``#!`` line is read by it.
* **task** (go-task, ``Taskfile.yml``, ``-t FILE``): the ``cmds`` of the tasks named (else
  ``default``) and of their ``deps`` and ``task:`` calls.
* **pre-commit** (``.pre-commit-config.yaml``, ``-c FILE``) and **lefthook** (``lefthook.yml``):
  the ``entry``/``run`` of the local hooks.
* **tox** (``tox.ini``): the ``commands`` (``_pre``, ``_post``) of every ``testenv``.
* **composer** (``composer.json``): the ``scripts`` that run.
* Code files a runner imports: ``noxfile.py`` (nox), ``tasks.py`` (invoke), ``Rakefile`` (rake),
  ``fabfile.py`` (fab), ``dodo.py`` (doit), ``setup.py`` (``pip install .``), ``conftest.py``
  and the test files named (pytest): read as program text.

What cannot be worked out (a template left unresolved, a shell replaced, an included Taskfile)
is said unreadable, never taken as an empty task.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

from pytest_harness_audit.policy.shell.projects import Runner

#: The task runners read here (``python -m NAME`` too, for those that are Python modules).
TASK_RUNNERS = frozenset(
    {"just", "task", "go-task", "pre-commit", "lefthook", "tox", "composer", "nox", "invoke",
     "inv", "rake", "fab", "doit", "pip", "pip3", "pytest", "py.test"}
)  # fmt: skip
#: Code files a runner loads, by runner: (default files, options naming another one).
_CODE_FILES: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "nox": (("noxfile.py",), frozenset({"-f", "--noxfile"})),
    "invoke": (("tasks.py", "tasks/__init__.py"), frozenset({"-c", "--collection"})),
    "inv": (("tasks.py", "tasks/__init__.py"), frozenset({"-c", "--collection"})),
    "rake": (("Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb"), frozenset({"-f"})),
    "fab": (("fabfile.py", "fabfile/__init__.py"), frozenset({"-f"})),
    "doit": (("dodo.py",), frozenset({"-f", "--file"})),
}
_JUST_FILES = ("justfile", "Justfile", ".justfile", "JUSTFILE")
_TASK_FILES = ("Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml",
               "Taskfile.dist.yml", "Taskfile.dist.yaml")  # fmt: skip
_RECIPE = re.compile(r"^@?([A-Za-z_][\w-]*)((?:\s+[^:=\s][^:=]*)?)\s*:(?!=)(.*)$")
_JUST_VARIABLE = re.compile(r"^(?:export\s+)?([A-Za-z_][\w-]*)\s*:=\s*(.*)$")
_INTERPOLATION = re.compile(r"\{\{\s*([A-Za-z_][\w-]*)\s*\}\}")
#: Values that name a folder or the command line (``{{justfile_directory()}}``,
#: ``{{.ROOT_DIR}}``, ``{{.CLI_ARGS}}``): put in as ``.``, which names no secret.
_PLACE_VALUES = re.compile(
    r"\{\{\s*(?:\w+_directory\(\)|invocation_directory\(\)|arch\(\)|os\(\)|os_family\(\)"
    r"|num_cpus\(\)|ROOT_DIR|TASKFILE_DIR|USER_WORKING_DIR|TASK_DIR|CLI_ARGS|TASK|OS|ARCH)\s*\}\}"
)
_MAX_TASKS = 32


def task_runner(name: str, args: list[str], runner: Runner) -> None:
    """What task runner ``name`` runs with ``args`` (module doc)."""
    if name in _CODE_FILES:
        _code_file(name, args, runner)
    elif name == "just":
        _just(args, runner)
    elif name in ("task", "go-task"):
        _taskfile(args, runner)
    elif name == "pre-commit":
        _pre_commit(args, runner)
    elif name == "lefthook":
        _lefthook(args, runner)
    elif name == "tox":
        _tox(_option(args, ("-c", "--conf")) or "tox.ini", runner)
    elif name == "composer":
        _composer(args, runner)
    elif name in ("pip", "pip3"):
        _pip(args, runner)
    elif name in ("pytest", "py.test"):
        _pytest(args, runner)


def module_runner(args: list[str], runner: Runner) -> None:
    """``python -m pytest``, ``python -m pip install .`` …: the task runner the module is."""
    for index, word in enumerate(args[:-1]):
        if word == "-m":
            if args[index + 1] in TASK_RUNNERS:
                task_runner(args[index + 1], args[index + 2 :], runner)
            return


def _option(args: list[str], names: tuple[str, ...] | frozenset[str]) -> str | None:
    """The value of the first of ``names`` in ``args`` (``-f F``, ``--file=F``, ``-fF``)."""
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        if option in names:
            if equals:
                return value
            return args[index + 1] if index + 1 < len(args) else None
        for short in names:
            if len(short) == 2 and word.startswith(short) and len(word) > 2 and word[1] != "-":
                return word[2:]
    return None


def _operands(args: list[str], valued: frozenset[str] = frozenset()) -> list[str]:
    """The words of ``args`` that are no option (nor an option's value), up to ``--``."""
    words: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            break
        if word.startswith("-"):
            index += 2 if word in valued else 1
            continue
        words.append(word)
        index += 1
    return words


def _code_file(name: str, args: list[str], runner: Runner) -> None:
    defaults, options = _CODE_FILES[name]
    given = _option(args, options)
    if given is not None and name in ("invoke", "inv") and not given.endswith(".py"):
        given = f"{given.replace('.', '/')}.py"
    for path in (given,) if given else defaults:
        if runner.workspace_text(path) is not None:
            runner.script_file(path, code=True)
            return


def _first_text(paths: tuple[str, ...], runner: Runner) -> tuple[str, str] | None:
    for path in paths:
        text = runner.workspace_text(path)
        if text is not None:
            return path, text
    return None


# -- just --------------------------------------------------------------------------------------
def _just(args: list[str], runner: Runner) -> None:
    given = _option(args, ("-f", "--justfile"))
    found = _first_text((given,) if given else _JUST_FILES, runner)
    if found is None:
        return
    text = found[1]
    if re.search(r"(?m)^\s*set\s+(?:shell|windows-shell|script-interpreter)\b", text):
        runner.unknown("just runs its recipes with a shell the justfile sets")
        return
    recipes, order, variables = _just_recipes(text)
    for backtick in re.findall(r"`([^`]*)`", "\n".join(variables.values())):
        runner.script(backtick)  # just evaluates its backtick values whatever recipe runs
    valued = frozenset({"-f", "--justfile", "-d", "--working-directory", "--set", "--shell"})
    named = [word for word in _operands(args, valued) if word in recipes]
    for recipe in _closure(named or order[:1], lambda r: recipes.get(r, ([], []))[0]):
        body = recipes.get(recipe, ([], []))[1]
        _read_body("\n".join(body), variables, runner)


def _just_recipes(
    text: str,
) -> tuple[dict[str, tuple[list[str], list[str]]], list[str], dict[str, str]]:
    """``({recipe: (dependencies, body lines)}, recipe order, variables)`` of a justfile."""
    recipes: dict[str, tuple[list[str], list[str]]] = {}
    order: list[str] = []
    variables: dict[str, str] = {}
    current: list[str] | None = None
    for line in text.splitlines()[:4096]:
        if line[:1] in (" ", "\t"):
            if current is not None:
                current.append(line.strip())
            continue
        current = None
        if not line.strip() or line.lstrip().startswith(("#", "[")):
            continue
        variable = _JUST_VARIABLE.match(line)
        if variable is not None:
            variables[variable.group(1)] = _just_value(variable.group(2).strip())
            continue
        recipe = _RECIPE.match(line)
        if recipe is not None and not line.startswith(("alias ", "set ", "import ", "mod ")):
            name = recipe.group(1)
            dependencies = re.findall(r"[A-Za-z_][\w-]*", recipe.group(3).split("#", 1)[0])
            current = []
            recipes[name] = (dependencies, current)
            order.append(name)
    return recipes, order, variables


def _just_value(value: str) -> str:
    """A just variable's value: a quoted string unquoted, anything else as written."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _read_body(body: str, variables: dict[str, str], runner: Runner) -> None:
    """Read a recipe's body (``{{name}}`` put in); a ``#!`` body by its interpreter."""
    for _ in range(4):
        replaced = _INTERPOLATION.sub(lambda m: variables.get(m.group(1), m.group(0)), body)
        if replaced == body:
            break
        body = replaced
    body = _PLACE_VALUES.sub(".", body)
    if "{{" in body:
        runner.unknown("a recipe uses a value its file does not give")
    if body.startswith("#!"):
        interpreter = body[2:].split("\n", 1)[0]
        runner.read_text(body, code=not re.search(r"\b(?:ba|z|da|k)?sh\b", interpreter))
        return
    for line in body.splitlines():
        runner.script(line.lstrip("@-"))


def _closure(start: list[str], dependencies: Any) -> list[str]:
    """``start`` and what they depend on, each once, at most :data:`_MAX_TASKS`."""
    seen: list[str] = []
    pending = list(start)
    while pending and len(seen) < _MAX_TASKS:
        name = pending.pop(0)
        if name not in seen:
            seen.append(name)
            pending.extend(dependencies(name))
    return seen


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


def _taskfile(args: list[str], runner: Runner) -> None:
    given = _option(args, ("-t", "--taskfile"))
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
    named = _operands(args, frozenset({"-t", "--taskfile", "-d", "--dir"})) or ["default"]
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

    for task in _closure(named, calls):
        spec = tasks.get(task)
        commands = spec if isinstance(spec, list) else [spec] if isinstance(spec, str) else []
        if isinstance(spec, dict):
            commands = spec.get("cmds") or ([spec["cmd"]] if "cmd" in spec else [])
        for command in commands if isinstance(commands, list) else [commands]:
            text = command.get("cmd") if isinstance(command, dict) else command
            if isinstance(text, str):
                _read_body(re.sub(r"\{\{\s*\.", "{{", text), variables, runner)


def _pre_commit(args: list[str], runner: Runner) -> None:
    if _operands(args, frozenset({"-c", "--config"}))[:1] not in ([], ["run"], ["try-repo"]):
        return  # `pre-commit install`, `autoupdate` … run no hook
    document = _yaml(_option(args, ("-c", "--config")) or ".pre-commit-config.yaml", runner)
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
    words = _operands(args)
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


def _tox(path: str, runner: Runner) -> None:
    text = runner.workspace_text(path)
    if text is None:
        return
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
            key = key if key in ("commands", "commands_pre", "commands_post") else ""
        else:
            continue
        if key and value:
            value = re.sub(r"\{[a-z_]+\}", ".", value.replace("{envpython}", "python"))
            runner.script(value.lstrip("-!").strip())


def _composer(args: list[str], runner: Runner) -> None:
    text = runner.workspace_text("composer.json")
    if text is None:
        return
    try:
        scripts = json.loads(text).get("scripts") or {}
    except (ValueError, AttributeError):
        runner.unknown("composer.json does not parse")
        return
    words = _operands(args, frozenset({"-d", "--working-dir"}))
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

    for script in _closure(start, references):
        body = scripts.get(script)
        for line in body if isinstance(body, list) else [body]:
            if not isinstance(line, str) or (line.startswith("@") and " " not in line):
                continue
            if re.fullmatch(r"[\w\\]+::\w+", line):
                runner.unknown(f"a composer script calls PHP code: {line}")
            else:
                runner.script(line.removeprefix("@php ").removeprefix("@putenv "))


# -- pip, pytest ------------------------------------------------------------------
def _pip(args: list[str], runner: Runner) -> None:
    if _operands(args)[:1] != ["install"]:
        return
    valued = frozenset({"-r", "--requirement", "-c", "--constraint", "-t", "--target"})
    for word in [*_operands(args, valued)[1:], _option(args, ("-e", "--editable")) or ""]:
        if word == "." or word.startswith(("./", "../", "/")) or word.startswith("file:"):
            setup = posixpath.join(word.removeprefix("file:"), "setup.py")
            if runner.workspace_text(setup) is not None:
                runner.script_file(setup, code=True)


def _pytest(args: list[str], runner: Runner) -> None:
    if runner.workspace_text("conftest.py") is not None:
        runner.script_file("conftest.py", code=True)
    for word in _operands(args, frozenset({"-k", "-m", "-c", "-p", "-o", "--rootdir"}))[:16]:
        path = word.split("::", 1)[0]
        if path.endswith(".py") and runner.workspace_text(path) is not None:
            runner.script_file(path, code=True)


__all__ = ["TASK_RUNNERS", "module_runner", "task_runner"]
