"""A workspace module a program imports is judged by what importing it runs
(``policy/shell/import_time.py``): its top level, not the functions it only defines."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell.import_time import import_time_code

SAFETY = Policy.preset("safety")
HELPER = "import shutil\n\ndef clean(folder):\n    shutil.rmtree(folder)\n"


def _decision(root: Path, files: dict[str, str], command: str) -> tuple[str, str | None]:
    (root / "app").mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    evaluation = SAFETY.evaluate("Bash", {"command": command}, root=str(root))
    return evaluation.decision, evaluation.rule_id


DENIED = ("deny", "deny-destructive-commands")


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"tidy.py": "import shutil\nshutil.rmtree('app')\n"}, "python3 -c 'import tidy'"),
        ({"tidy.py": "import shutil\nshutil.rmtree('app')\n"}, "python3 -c 'from tidy import *'"),
        (
            {"tidy.py": "import shutil\nshutil.rmtree('app')\n", "main.py": "import tidy\n"},
            "python3 main.py",
        ),
        (
            {"tidy.py": "import shutil\ndef run():\n    shutil.rmtree('app')\nrun()\n"},
            "python3 -c 'import tidy'",
        ),
        (
            {"tidy.py": "import atexit, shutil\ndef run():\n    shutil.rmtree('app')\n"
             "atexit.register(run)\n"},
            "python3 -c 'import tidy'",
        ),
        (
            {"tidy.py": "import shutil\nclass Cleaner:\n    shutil.rmtree('app')\n"},
            "python3 -c 'import tidy'",
        ),
        (
            {"tools/__init__.py": "import shutil\nshutil.rmtree('app')\n"},
            "python3 -c 'import tools'",
        ),
        (
            {"a.py": "import b\n", "b.py": "import shutil\nshutil.rmtree('app')\n"},
            "python3 -c 'import a'",
        ),
        # what the importer calls of the module runs too
        ({"util.py": HELPER}, "python3 -c 'import util; util.clean(\"app\")'"),
        ({"util.py": HELPER}, "python3 -c 'from util import clean; clean(\"app\")'"),
        ({"util.py": HELPER}, "python3 -c 'from util import clean as c; c(\"app\")'"),
        ({"util.py": HELPER}, "python3 -c 'from util import *; clean(\"app\")'"),
        ({"util.py": HELPER}, "python3 -c 'import util; getattr(util, \"cle\" + \"an\")(\"app\")'"),
        ({"util.py": HELPER, "main.py": "from util import clean\nclean('app')\n"},
         "python3 main.py"),
        (
            {"util.py": HELPER, "job.py": "import util\ndef run():\n    util.clean('app')\n",
             "main.py": "import job\njob.run()\n"},
            "python3 main.py",
        ),
        (
            {"util.py": HELPER, "runner.py": "import inspect\ndef run_all(m):\n"
             "    for n, f in inspect.getmembers(m, inspect.isfunction):\n        f('app')\n"},
            "python3 -c 'import util, runner; runner.run_all(util)'",
        ),
        # code read after the module (another import, another test file) names its function
        (
            {"util.py": HELPER, "b.py": "import util\nutil.clean('app')\n",
             "main.py": "import util\nimport b\n"},
            "python3 main.py",
        ),
        (
            {"tests/test_a.py": "from util import clean\ndef test_a():\n    pass\n",
             "tests/test_b.py": "import util\nutil.clean('app')\n", "util.py": HELPER},
            "python -m pytest tests/test_a.py tests/test_b.py",
        ),
        ({"tidy.py": HELPER + "def noted(x: clean('app')):\n    pass\n"},
         "python3 -c 'import tidy'"),
        # a class named at import runs its methods
        (
            {"tidy.py": "import shutil\nclass C:\n    def __init__(self):\n"
             "        shutil.rmtree('app')\nC()\n"},
            "python3 -c 'import tidy'",
        ),
        (
            {"tidy.py": "import shutil, sys\ndef clean():\n    shutil.rmtree('app')\n"
             "getattr(sys.modules[__name__], 'cle' + 'an')()\n"},
            "python3 -c 'import tidy'",
        ),
    ],
)  # fmt: skip
def test_what_an_import_runs_is_judged(tmp_path: Path, files: dict[str, str], command: str) -> None:
    assert _decision(tmp_path, files, command) == DENIED


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"util.py": HELPER, "main.py": "from util import clean\nprint(1)\n"}, "python3 main.py"),
        ({"util.py": HELPER}, "python3 -c 'import util'"),
        ({"util.py": HELPER + "def size(d):\n    return 1\n"},
         "python3 -c 'import util; util.size(1)'"),
        (
            {"util.py": HELPER, "main.py": "import util\nprint(util.__name__)\n"},
            "python3 main.py",
        ),
        (
            {"tidy.py": "import shutil\nif __name__ == '__main__':\n    shutil.rmtree('app')\n"},
            "python3 -c 'import tidy'",
        ),
        (
            {"tests/conftest.py": "import shutil, pytest\n@pytest.fixture\ndef work(tmp_path):\n"
             "    yield tmp_path\n    shutil.rmtree(tmp_path)\n",
             "tests/test_x.py": "def test_x(tmp_path):\n    assert tmp_path\n"},
            "python -m pytest tests",
        ),
    ],
)  # fmt: skip
def test_modules_that_only_define_their_work_stay_allowed(
    tmp_path: Path, files: dict[str, str], command: str
) -> None:
    assert _decision(tmp_path, files, command) == ("allow", None)


def test_the_code_an_import_runs() -> None:
    text = (
        "import shutil\n@register\ndef a():\n    shutil.rmtree('x')\n"
        "def b():\n    print('b')\nclass C:\n    size = b()\n    def m(self):\n        pass\n"
        "if __name__ == '__main__':\n    a()\n"
    )
    code = import_time_code(text, frozenset())
    assert code is not None
    assert code.splitlines() == ["import shutil", "register", "size = b()", "print('b')"]
    assert import_time_code("def f():\n    pass\n", frozenset()) is None
    assert import_time_code("def f():\n    pass\n") == "pass"  # no importer known: all run
    assert import_time_code("!not python") is None


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"tests/test_x.py": "import shutil\ndef test_x():\n    shutil.rmtree('app')\n"},
         "python -m pytest tests"),
        ({"tests/test_x.py": "import shutil\ndef test_x():\n    shutil.rmtree('app')\n"},
         "pytest -q"),
        ({"tests/test_x.py": "import shutil, unittest\nclass T(unittest.TestCase):\n"
          "    def test_x(self):\n        shutil.rmtree('app')\n"},
         "python -m unittest discover -s tests"),
        ({"conftest.py": "import shutil\ndef pytest_sessionstart(session):\n"
          "    shutil.rmtree('app')\n"}, "pytest -q"),
        ({"conftest.py": "import shutil, pytest\n@pytest.fixture(autouse=True)\ndef wipe():\n"
          "    shutil.rmtree('app')\n"}, "pytest -q"),
    ],
)  # fmt: skip
def test_what_a_test_runner_calls_is_judged(
    tmp_path: Path, files: dict[str, str], command: str
) -> None:
    assert _decision(tmp_path, files, command) == DENIED
