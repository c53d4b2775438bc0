"""Notebooks run by a command: the code of their cells is read as the program they are.

``jupyter execute NB``, ``jupyter nbconvert --execute NB`` (or
``--ExecutePreprocessor.enabled=True``), ``jupyter run NB``, ``papermill NB OUT``,
``jupytext --execute NB``, ``quarto render NB --execute``, ``runipy NB``, ``treon NB``,
``ipython NB``, ``pytest --nbmake NB`` (or ``--nbval``) and the same tools as
``python -m MODULE`` run the code cells of each workspace
notebook they are given. A notebook is JSON; its code cells are read as Python, and what IPython
runs besides (``!command`` lines, ``%%bash`` cells, ``%run F``, ``%cd D`` …) as the shell
commands it amounts to (:mod:`.ipython_cells`). Other magic lines are left out of the Python
text. Converting a notebook without executing it (``jupyter nbconvert --to html NB``) runs
nothing and is not read.

A notebook's outputs (plots, tables) often make it larger than a script file read whole: a
workspace notebook of up to 16 MiB is read for its cells, and only their code counts against
the script file limit (beyond it the command cannot be read). One written earlier in the same
command is read as it was written.
"""

from __future__ import annotations

import json
import os
import posixpath
from typing import Final

from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.expand import SCRIPT_FILE_LIMIT, file_key
from pytest_harness_audit.policy.shell.imports import follow_loads
from pytest_harness_audit.policy.shell.ipython_cells import CellReading

#: Programs that run notebooks (as a command name or a ``python -m`` module).
NOTEBOOK_RUNNERS: Final = frozenset(
    {"jupyter", "jupyter-execute", "jupyter-nbconvert", "jupyter-run", "papermill", "jupytext",
     "quarto", "runipy", "treon", "ipython", "ipython3", "nbconvert", "nbclient", "pytest",
     "py.test"}
)  # fmt: skip
#: What runs its notebooks only when asked to execute them.
_EXECUTE_WHEN_ASKED: Final = frozenset({"nbconvert", "jupyter-nbconvert", "jupytext", "quarto"})
_NOTEBOOK_PLUGINS: Final = frozenset({"--nbmake", "--nbval", "--nbval-lax", "--nbval-current-env"})
_JUPYTER_RUNS: Final = frozenset({"execute", "nbconvert", "run"})
_MAX_NOTEBOOKS: Final = 16
_MAX_CELLS: Final = 4096
_MAX_NOTEBOOK_BYTES: Final = 16 * 1024 * 1024


def notebooks(name: str, args: list[str], ctx: Context) -> None:
    """Read the code of the notebooks ``name args`` runs (module doc)."""
    if name.startswith("python"):
        if "-m" not in args[:-1]:
            return
        at = args.index("-m")
        name, args = args[at + 1], args[at + 2 :]
        if name not in NOTEBOOK_RUNNERS:
            return
    if name == "jupyter":
        words = [w for w in args if not w.startswith("-")]
        if not words or words[0] not in _JUPYTER_RUNS:
            return
        name, args = f"jupyter-{words[0]}", args[args.index(words[0]) + 1 :]
    if name in _EXECUTE_WHEN_ASKED and not any(_asks_to_execute(w) for w in args):
        return
    if name in ("pytest", "py.test") and _NOTEBOOK_PLUGINS.isdisjoint(args):
        return  # pytest runs notebooks only through a plugin that collects them
    found = [w for w in args if w.lower().endswith(".ipynb") and not w.startswith("-")]
    if name == "papermill":
        found = found[:1]  # `papermill IN OUT`: only the input runs
    for path in found[:_MAX_NOTEBOOKS]:
        text = _large_notebook(path, ctx)
        if text is None:
            text = ctx.workspace_text(path)
        if text is not None:
            read_notebook(text, posixpath.dirname(path), ctx)


def _large_notebook(path: str, ctx: Context) -> str | None:
    """The text of a workspace notebook past the script file limit (module doc), when it was
    not written earlier in the command; ``None`` for any other file."""
    root, real = ctx.workspace_root, ctx.real_path(path)
    if root is None or real is None or file_key(path) in map(file_key, ctx.reading.writes):
        return None
    top = os.path.realpath(root).rstrip("/") + "/"
    try:
        if not real.startswith(top) or not os.path.isfile(real):
            return None
        if not SCRIPT_FILE_LIMIT < os.path.getsize(real) <= _MAX_NOTEBOOK_BYTES:
            return None
        with open(real, "rb") as handle:
            return handle.read(_MAX_NOTEBOOK_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def _asks_to_execute(word: str) -> bool:
    return word == "--execute" or word.startswith("--ExecutePreprocessor.enabled")


def read_notebook(text: str, folder: str, ctx: Context) -> None:
    """Read a notebook's cells: Python as program text, IPython's shell lines as scripts."""
    code, scripts = notebook_code(text)
    if len(code) + sum(len(script) for script in scripts) > SCRIPT_FILE_LIMIT:
        ctx.unknown(f"a notebook it runs holds more than {SCRIPT_FILE_LIMIT // 1024} KiB of code")
        return
    for script in scripts:
        ctx.script(script)
    if code.strip():
        ctx.read_text(code, True)
        follow_loads(code, folder, ctx, paths=bool(folder))


def notebook_code(text: str) -> tuple[str, list[str]]:
    """The Python text of a notebook's code cells and, as shell scripts, what IPython runs
    besides (module doc); a text that is no notebook is read as Python as it is."""
    try:
        notebook = json.loads(text)
    except ValueError:
        return text, []
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        worksheets = notebook.get("worksheets") if isinstance(notebook, dict) else None
        first = worksheets[0] if isinstance(worksheets, list) and worksheets else None
        cells = first.get("cells") if isinstance(first, dict) else None  # the v3 format
    reading = CellReading()
    for cell in cells[:_MAX_CELLS] if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        body = (
            "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else source
        )
        if isinstance(body, str):
            reading.cell(body)
    return "\n".join(reading.code), reading.scripts
