"""``just``: the recipes a command runs, read from the workspace's justfile.

The recipes named (else the first), and those they depend on, with ``name := "value"``
variables and the recipe's parameters put in; a recipe with a ``#!`` line or a ``[script]``
attribute is read as program text; the file's ``import``s are read too and its backtick
values run whatever recipe runs. ``set dotenv-load`` reads the env file into every recipe; a
shell the file sets that is not a POSIX shell, ``mod`` modules, or a recipe growing beyond
16 KiB with its values put in are unreadable. ``just --list`` and kin run no recipe.
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.task_words import closure, first_text, operands, option

_JUST_FILES: Final = ("justfile", "Justfile", ".justfile", "JUSTFILE")
_RECIPE: Final = re.compile(r"^@?([A-Za-z_][\w-]*)((?:\s+[^:\s][^:]*?)?)\s*:(?!=)(.*)$")
_JUST_VARIABLE: Final = re.compile(r"^(?:export\s+)?([A-Za-z_][\w-]*)\s*:=\s*(.*)$")
_INTERPOLATION: Final = re.compile(r"\{\{\s*([A-Za-z_][\w-]*)\s*\}\}")
#: Values that name a folder or the command line (``{{justfile_directory()}}``,
#: ``{{.ROOT_DIR}}``, ``{{.CLI_ARGS}}``): put in as ``.``, which names no secret.
_PLACE_VALUES: Final = re.compile(
    r"\{\{\s*(?:\w+_directory\(\)|invocation_directory\(\)|arch\(\)|os\(\)|os_family\(\)"
    r"|num_cpus\(\)|ROOT_DIR|TASKFILE_DIR|USER_WORKING_DIR|TASK_DIR|CLI_ARGS|TASK|OS|ARCH)\s*\}\}"
)
_JUST_SHELLS: Final = re.compile(r"""^\s*set\s+(?:windows-)?shell\s*:=\s*\[\s*['"]([^'"]+)['"]""")
_JUST_OWN: Final = frozenset(
    {"-l", "--list", "--summary", "--variables", "--dump", "--fmt", "--init", "--show", "-s",
     "--edit", "-e", "--groups", "--changelog", "--completions", "--man", "--version", "-V",
     "--help", "-h", "--check"}
)  # fmt: skip
_JUST_DOTENV: Final = re.compile(r"(?m)^\s*set\s+dotenv-(?:load|path|filename|required)\b(.*)$")
_MAX_BODY: Final = 16 * 1024


def just(args: list[str], runner: Runner) -> None:
    given = option(args, ("-f", "--justfile"))
    found = first_text((given,) if given else _JUST_FILES, runner)
    if found is None:
        return
    text = _just_imports(found[1], runner)
    shell = _JUST_SHELLS.search(text)
    if shell is not None and shell.group(1).rsplit("/", 1)[-1] not in _POSIX_SHELLS:
        runner.unknown("just runs its recipes with a shell the justfile sets")
        return
    if re.search(r"(?m)^\s*set\s+script-interpreter\b", text):
        runner.unknown("just runs its script recipes with an interpreter the justfile sets")
    for setting in _JUST_DOTENV.findall(text):  # just loads an env file into every recipe
        if re.match(r"\s*:=\s*false\b", setting):
            continue
        named = re.findall(r"""['"]([^'"]+)['"]""", setting)
        runner.reading.reads.append(named[0] if named else ".env")
    recipes, order, variables = _just_recipes(text)
    for value in variables.values():
        for backtick in re.findall(r"`([^`]*)`", value):
            runner.script(backtick)  # just evaluates its backtick values whatever recipe runs
        runner.reading.reads.extend(re.findall(r"""\bread\(\s*['"]([^'"]+)['"]""", value))
    if any(word in _JUST_OWN or word.startswith("--show=") for word in args):
        return  # `just --list`, `--show x`: no recipe runs
    valued = frozenset({"-f", "--justfile", "-d", "--working-directory", "--set", "--shell"})
    words = operands(args, valued)
    chosen: dict[str, list[str]] = {}  # each recipe named, with the words after it
    for word in words:
        if word in recipes:
            chosen[word] = []
        elif chosen:
            chosen[list(chosen)[-1]].append(word)
    depends = lambda name: recipes[name].dependencies if name in recipes else []  # noqa: E731
    for recipe in closure(list(chosen) or order[:1], depends):
        found_recipe = recipes.get(recipe)
        if found_recipe is not None:
            values = dict(variables)
            values.update(found_recipe.arguments(chosen.get(recipe, [])))
            read_body("\n".join(found_recipe.body), values, runner, found_recipe.code)


_POSIX_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash"})


def _just_imports(text: str, runner: Runner) -> str:
    """The justfile with the files it ``import``s appended (one level, as written)."""
    extra: list[str] = []
    for path in re.findall(r"""(?m)^import\??\s+['"]([^'"]+)['"]""", text)[:16]:
        imported = runner.workspace_text(path)
        if imported is not None:
            extra.append(imported)
    if re.search(r"(?m)^mod\??\s", text):
        runner.unknown("the justfile loads recipes from modules")
    return "\n".join([text, *extra]) if extra else text


class Recipe:
    """A just recipe: what it depends on, its body lines, its parameters (name and default),
    and whether its body is program text (``[script(…)]``)."""

    __slots__ = ("body", "code", "dependencies", "parameters")

    def __init__(self, dependencies: list[str], parameters: list[tuple[str, str]], code: bool):
        self.dependencies = dependencies
        self.parameters = parameters
        self.body: list[str] = []
        self.code = code

    def arguments(self, words: list[str]) -> dict[str, str]:
        """The parameters' values for the words given after the recipe's name."""
        values: dict[str, str] = {}
        for index, (name, default) in enumerate(self.parameters):
            variadic = name.startswith(("*", "+"))
            taken = words[index:] if variadic else words[index : index + 1]
            values[name.lstrip("*+$")] = " ".join(taken) if taken else default
        return values


Recipes = dict[str, Recipe]
_PARAMETER: Final = re.compile(
    r"""([*+]?\$?[A-Za-z_][\w-]*)(?:\s*=\s*('[^']*'|"[^"]*"|[^\s'"]+))?"""
)


def _just_recipes(text: str) -> tuple[Recipes, list[str], dict[str, str]]:
    """``({name: recipe}, recipe order, variables)`` of a justfile's text."""
    recipes: Recipes = {}
    order: list[str] = []
    variables: dict[str, str] = {}
    current: list[str] | None = None
    script_attribute = False
    text = re.sub(r"\\\n[ \t]*", " ", text)  # a line continued with a backslash
    for line in text.splitlines()[:4096]:
        if line[:1] in (" ", "\t"):
            if current is not None:
                current.append(line.strip())
            continue
        current = None
        stripped = line.strip()
        if stripped.startswith("["):
            script_attribute |= stripped.startswith("[script")
            continue
        if not stripped or stripped.startswith("#"):
            continue
        variable = _JUST_VARIABLE.match(line)
        if variable is not None:
            variables[variable.group(1)] = _just_value(variable.group(2).strip())
            continue
        recipe = _RECIPE.match(line)
        if recipe is not None and not line.startswith(("alias ", "set ", "import", "mod")):
            name = recipe.group(1)
            dependencies = re.findall(r"[A-Za-z_][\w-]*", recipe.group(3).split("#", 1)[0])
            found = _PARAMETER.findall(recipe.group(2))
            parameters = [(param, _just_value(default)) for param, default in found]
            recipes[name] = made = Recipe(dependencies, parameters, script_attribute)
            current = made.body
            order.append(name)
        script_attribute = False
    return recipes, order, variables


def _just_value(value: str) -> str:
    """A just variable's value: quoted strings unquoted and joined (``".e" + "nv"``), anything
    else as written."""
    pieces = re.split(r"\s*\+\s*", value)
    if all(_QUOTED.fullmatch(piece) for piece in pieces):
        return "".join(piece[1:-1] for piece in pieces)
    return value


_QUOTED: Final = re.compile(r"'[^']*'|\"[^\"]*\"")


def read_body(body: str, variables: dict[str, str], runner: Runner, code: bool = False) -> None:
    """Read a recipe's body (``{{name}}`` put in); a ``#!`` body by its interpreter."""
    for _ in range(4):
        growth = sum(
            len(variables.get(m.group(1), "")) for m in _INTERPOLATION.finditer(body)
        )  # measured before the text is built: a value repeated 60 times is not built
        if len(body) + growth > _MAX_BODY:
            runner.unknown(f"a recipe grows beyond {_MAX_BODY // 1024} KiB with its values put in")
            return
        replaced = _INTERPOLATION.sub(lambda m: variables.get(m.group(1), m.group(0)), body)
        if len(replaced) > _MAX_BODY:
            runner.unknown(f"a recipe grows beyond {_MAX_BODY // 1024} KiB with its values put in")
            return
        if replaced == body:
            break
        body = replaced
    body = _PLACE_VALUES.sub(".", body)
    if "{{" in body:
        runner.unknown("a recipe uses a value its file does not give")
    if code:
        runner.read_text(body, code=True)
        return
    if body.startswith("#!"):
        interpreter = body[2:].split("\n", 1)[0]
        runner.read_text(body, code=not re.search(r"\b(?:ba|z|da|k)?sh\b", interpreter))
        return
    for line in body.splitlines():
        runner.script(line.lstrip("@-"))


__all__ = ["Recipe", "just", "read_body"]
