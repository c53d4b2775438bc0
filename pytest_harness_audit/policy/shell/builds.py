"""Installs and builds of a workspace project: they run its build code.

``pip install .``/``-e DIR``/``./local``/``'.[dev]'``/``file:DIR``, the same in a requirements
file (``-r req.txt`` holding ``-e .``), ``pip wheel``/``download`` of a folder, ``uv pip
install``, ``uv build``/``sync``, ``uv tool install DIR``, ``python -m build``,
``pyproject-build``, ``pipx install DIR``, ``poetry install``/``build``, ``pdm
install``/``build``/``sync`` and ``hatch build`` build the project of a folder, and building
runs its code: ``setup.py``, an in-tree backend (``backend-path`` with ``build-backend`` in
``pyproject.toml``), a hatch or pdm build hook (``hatch_build.py``, ``pdm_build.py``) and
poetry's ``build`` script. Each is read as program text, as ``python setup.py`` is, and judged
as its ``python -c`` text (:mod:`.program_files`): ``pip install -e .`` of a ``setup.py`` that
removes a folder is that removal.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.program_files import program_text
from pytest_harness_audit.policy.shell.task_words import operands, option

#: The commands read here, with the subcommands that build the project (``None``: any).
BUILDERS: Final[dict[str, frozenset[str] | None]] = {
    "pip": frozenset({"install", "wheel", "download"}),
    "pip3": frozenset({"install", "wheel", "download"}),
    "uv": frozenset({"pip", "build", "sync", "tool"}),
    "pipx": frozenset({"install", "inject", "run"}),
    "poetry": frozenset({"install", "build"}),
    "pdm": frozenset({"install", "build", "sync"}),
    "hatch": frozenset({"build"}),
    "pyproject-build": None,
    "build": None,
}
#: Most commands a reading records (as :data:`.reading.MAX_COMMANDS`).
_MAX_COMMANDS: Final = 512
#: Most requirement files followed from one command (``-r`` inside ``-r``).
MAX_REQUIREMENT_FILES: Final = 8
_PIP_VALUED: Final = frozenset(
    {"-r", "--requirement", "-c", "--constraint", "-t", "--target", "-i", "--index-url",
     "--extra-index-url", "-f", "--find-links", "--prefix", "--root", "--python", "-p", "-o",
     "--outdir", "--out-dir", "-d", "--dest", "-w", "--wheel-dir", "--src", "--config-settings",
     "-C", "--upgrade-strategy", "--platform", "--python-version", "--implementation", "--abi",
     "--extra", "--group", "--package", "--with", "--spec", "--suffix"}
)  # fmt: skip
_BACKEND: Final = re.compile(r"""(?m)^\s*build-backend\s*=\s*["']([\w.]+)(?::[\w.]+)?["']""")
_BACKEND_PATH: Final = re.compile(r"""(?m)^\s*backend-path\s*=\s*\[([^\]]*)\]""")
_POETRY_BUILD: Final = re.compile(r"""(?m)^\s*(?:script|build)\s*=\s*["']([\w./-]+\.py)["']""")
_QUOTED: Final = re.compile(r"""["']([^"'\n]+)["']""")


def builds(name: str, args: list[str], runner: Runner) -> None:
    """Read the build code of each workspace project ``name args`` builds (module doc)."""
    subcommands = BUILDERS[name]
    words = operands(args, _PIP_VALUED)
    if subcommands is not None and (not words or words[0] not in subcommands):
        return
    rest = args[args.index(words[0]) + 1 :] if subcommands is not None else args
    if name == "uv" and words[0] in ("pip", "tool"):
        if len(words) < 2 or words[1] not in ("install", "sync", "run"):
            return
        rest = rest[rest.index(words[1]) + 1 :]
    folders: list[str] = []
    if (name == "uv" and words[0] in ("build", "sync")) or name in ("poetry", "pdm", "hatch"):
        folders.append(option(rest, ("--directory", "--project", "-C", "-p")) or ".")
    projects = operands(rest, _PIP_VALUED)
    if name in ("pyproject-build", "build"):
        folders.append(projects[0] if projects else ".")
    for word in [*projects, *_editables(rest)]:
        folders.extend(_local(word, runner))
    for path in _requirement_files(rest):
        folders.extend(_from_requirements(path, runner, [path]))
    for folder in dict.fromkeys(folders):
        _build_code(folder, runner)


def _editables(args: list[str]) -> list[str]:
    found: list[str] = []
    for index, word in enumerate(args):
        if word in ("-e", "--editable") and index + 1 < len(args):
            found.append(args[index + 1])
        elif word.startswith("--editable="):
            found.append(word.partition("=")[2])
        elif word.startswith("-e") and len(word) > 2 and word[2] != "-":
            found.append(word[2:])
        elif word[:1] == "-" and word[1:2] != "-" and word.endswith("e") and index + 1 < len(args):
            found.append(args[index + 1])  # `pip install -Ue .`
    return found


def _requirement_files(args: list[str]) -> list[str]:
    found: list[str] = []
    for index, word in enumerate(args):
        if word in ("-r", "--requirement", "-c", "--constraint") and index + 1 < len(args):
            found.append(args[index + 1])
        elif word.startswith(("--requirement=", "--constraint=")):
            found.append(word.partition("=")[2])
        elif word.startswith("-r") and len(word) > 2:
            found.append(word[2:])
    return found


def _from_requirements(path: str, runner: Runner, seen: list[str]) -> list[str]:
    """The local projects a requirements file names (``-e .``, ``./pkg``, ``-r more.txt``)."""
    text = runner.workspace_text(path) or ""
    folder = posixpath.dirname(path)
    found: list[str] = []
    for line in text.splitlines()[:1024]:
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] in ("-r", "--requirement", "-c", "--constraint") and len(words) > 1:
            nested = posixpath.join(folder, words[1])
            if nested not in seen and len(seen) < MAX_REQUIREMENT_FILES:
                seen.append(nested)
                found.extend(_from_requirements(nested, runner, seen))
            continue
        word = words[1] if words[0] in ("-e", "--editable") and len(words) > 1 else words[0]
        word = word.partition("=")[2] if word.startswith("--editable=") else word
        if word.startswith((".", "/", "file:")):  # pip reads these from where it runs
            found.extend(_local(word, runner))
    return found


def _local(word: str, runner: Runner) -> list[str]:
    """The workspace folder a requirement names, when it is one (``.[dev]``, ``./pkg``,
    ``file:pkg``, ``pkg/``, or ``pkg`` when a workspace folder holds a project)."""
    word = word.removeprefix("file://").removeprefix("file:").split("#", 1)[0]
    word = re.sub(r"\[[^\]]*\]$", "", word.strip("\"'")) or "."
    if "://" in word or "@" in word or "==" in word or not word:
        return []
    explicit = word.startswith((".", "/", "~")) or word.endswith("/")
    if explicit or any(
        runner.workspace_text(posixpath.join(word, project)) is not None
        for project in ("setup.py", "pyproject.toml")
    ):
        return [word.rstrip("/") or "/"]
    return []


def _build_code(folder: str, runner: Runner) -> None:
    """Read the code building ``folder``'s project runs (module doc)."""
    paths = ["setup.py", "hatch_build.py", "pdm_build.py"]
    settings = runner.workspace_text(posixpath.join(folder, "pyproject.toml")) or ""
    backend = _BACKEND.search(settings)
    where = _BACKEND_PATH.search(settings)
    if backend and where:
        module = backend.group(1).replace(".", "/")
        for base in _QUOTED.findall(where.group(1))[:8]:
            paths.append(posixpath.join(base, f"{module}.py"))
            paths.append(posixpath.join(base, module, "__init__.py"))
    if "[tool.poetry.build]" in settings or "build =" in settings:
        paths += _POETRY_BUILD.findall(settings)[:4]
    for path in dict.fromkeys(paths):
        full = posixpath.normpath(posixpath.join(folder, path))
        text = runner.workspace_text(full)
        if text is not None:
            runner.script_file(full, code=True)
            if text and len(runner.reading.commands) < _MAX_COMMANDS:  # judged as `python -c`
                runner.reading.commands.append(["python", "-c", program_text(text, "python")])


__all__ = ["BUILDERS", "MAX_REQUIREMENT_FILES", "builds"]
