"""IPython's own syntax, its shell object, code runners named otherwise and computer-use typing
are judged as what they run (``policy/shell/ipython_cells.py``, ``ipython_api.py``,
``projects.CODE_ALIKES``, ``views.command_params``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell.ipython_cells import CellReading, ipython_scripts

SAFETY = Policy.preset("safety")


def _judged(tmp_path: Path, tool: str, params: dict[str, Any]) -> tuple[str, str | None]:
    (tmp_path / "app").mkdir(exist_ok=True)
    (tmp_path / ".env").write_text("API_KEY=sk-test-0000000000000000\n")
    evaluation = SAFETY.evaluate(tool, params, root=str(tmp_path))
    return evaluation.decision, evaluation.rule_id


DESTROY = ("deny", "deny-destructive-commands")
SECRET = ("deny", "deny-secret-files")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ipython -c '!rm -rf app'", DESTROY),
        ("ipython -c '%%bash\nrm -rf app'", DESTROY),
        ("ipython -c '%rm -rf app'", DESTROY),
        ("ipython -c 'rm -rf app'", DESTROY),  # automagic: a one-line cell
        ("ipython -c 'cat .env'", SECRET),
        ("ipython3 -c 'files = !cat .env'", SECRET),
        ("ipython -c '%sx cat .env'", SECRET),
        ("ipython -c '%load .env'", SECRET),
        ("ipython -c '%cd ..\n!rm -rf *'", DESTROY),
        ("ipython -c '%alias nuke rm -rf app\n%nuke'", DESTROY),
        ("ipython -c 'import shutil; shutil.rmtree(\"app\")'", DESTROY),
        ("ipython -c 'get_ipython().system(\"rm -rf app\")'", DESTROY),
        ("python3 -c 'get_ipython().system(\"rm -rf app\")'", DESTROY),
        ("ipython -c 'k=get_ipython(); k.run_cell_magic(\"sh\", \"\", \"rm -r app\")'", DESTROY),
        ("ipython -c 'get_ipython().run_line_magic(\"sx\", \"cat .e\" + \"nv\")'", SECRET),
        ("ipython -c 'import IPython; IPython.get_ipython().getoutput(\"cat .env\")'", SECRET),
        ("ipython -c 'get_ipython().run_cell(raw_cell=\"!rm -rf app\")'", DESTROY),
        ("ipython -c 'getattr(get_ipython(), \"sys\" + \"tem\")(\"rm -rf app\")'", DESTROY),
        ("ipython -c 'get_ipython().magic(\"system rm -rf app\")'", DESTROY),
        ("tsx -e 'require(\"fs\").rmSync(\"app\", {recursive: true})'", DESTROY),
        ("ts-node -e 'require(\"fs\").rmSync(\"app\", {recursive: true})'", DESTROY),
        ("jython -c 'import shutil; shutil.rmtree(\"app\")'", DESTROY),
        ("graalpy -c 'import shutil; shutil.rmtree(\"app\")'", DESTROY),
        ("irb -e 'require \"fileutils\"; FileUtils.rm_rf(\"app\")'", DESTROY),
    ],
)  # fmt: skip
def test_what_ipython_and_code_runners_run_is_judged(
    tmp_path: Path, command: str, expected: tuple[str, str]
) -> None:
    assert _judged(tmp_path, "Bash", {"command": command}) == expected


def test_a_command_built_at_run_time_for_ipython_is_unreadable(tmp_path: Path) -> None:
    command = "ipython -c 'c = input(); get_ipython().system(c)'"
    assert _judged(tmp_path, "Bash", {"command": command}) == ("warn", "unreadable-command")


@pytest.mark.parametrize(
    ("tool", "params", "expected"),
    [
        ("python", {"code": "!rm -rf app"}, DESTROY),
        ("code_interpreter", {"code": "!cat .env"}, SECRET),
        ("execute_code", {"code": "%%bash\nrm -rf app"}, DESTROY),
        ("python", {"code": "get_ipython().system('rm -rf app')"}, DESTROY),
        ("run_cell", {"cell": "!rm -rf app"}, DESTROY),
        ("mcp__jupyter__execute_cell", {"cell_source": "!cat .env"}, SECRET),
        ("mcp__jupyter__insert_execute_code_cell", {"cell_source": "%rm -rf app"}, DESTROY),
        ("computer", {"action": "type", "text": "rm -rf app\n"}, DESTROY),
        ("computer_use", {"type": "type", "text": "cat .env"}, SECRET),
    ],
)  # fmt: skip
def test_tools_running_cells_or_typing_are_judged(
    tmp_path: Path, tool: str, params: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert _judged(tmp_path, tool, params) == expected


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("Bash", {"command": "ipython -c 'print(1)'"}),
        ("Bash", {"command": "ipython -c '!ls -la'"}),
        ("Bash", {"command": "ipython -c 'ls'"}),
        ("Bash", {"command": "ipython -c '%timeit sum(range(10))'"}),
        ("Bash", {"command": "ipython -c 'ls = [1, 2]\nprint(ls)'"}),
        ("Bash", {"command": "ipython -c 'get_ipython().run_line_magic(\"time\", \"1\")'"}),
        ("Bash", {"command": "tsx -e 'console.log(1)'"}),
        ("Bash", {"command": "python3 -c 'print(\"%s\" % 3)'"}),
        ("python", {"code": "x = 1\nif x:\n    print(x\n          != 2)"}),
        ("python", {"code": "%matplotlib inline\nimport pandas as pd\nprint(pd.__version__)"}),
        ("python", {"code": "query = '''\n%s\n!important\n'''\nprint(query)"}),
        ("python", {"code": "rm = 3"}),
        ("python", {"code": "rm"}),
        ("run_cell", {"cell": "print('hello')"}),
        ("computer", {"action": "type", "text": "Hello, world"}),
        ("computer", {"action": "type", "text": "Remember: never rm -rf app!"}),
        ("computer", {"action": "key", "text": "ctrl+c"}),
        ("computer", {"action": "left_click", "coordinate": [10, 20]}),
    ],
)  # fmt: skip
def test_ordinary_work_stays_allowed(tmp_path: Path, tool: str, params: dict[str, Any]) -> None:
    assert _judged(tmp_path, tool, params) == ("allow", None)


def test_a_kernel_keeps_its_folder_and_aliases_between_cells() -> None:
    reading = CellReading()
    reading.cell("%cd build")
    reading.cell("%alias clean rm -rf out")
    reading.cell("x = 1\n%clean")
    reading.cell("!ls")
    assert reading.scripts == ["cd build\nrm -rf out", "cd build\nls"]
    assert reading.code == ["x = 1"]


def test_text_with_no_ipython_form_gives_no_script() -> None:
    assert ipython_scripts("import os\nprint(os.getcwd())\n") == []
    assert ipython_scripts("a = 1\nb = (a\n     != 2)\n") == []
    assert ipython_scripts("ls = 3") == []
    assert ipython_scripts("rm -rf app") == ["rm -rf app"]
