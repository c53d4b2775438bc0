"""A folder made for the code that deletes it (``tempfile.mkdtemp()``, the ``tmp_path`` pytest
hands a test or fixture) is tidied up, not lost: running a suite whose fixtures remove their
folders is not refused. A deletion of anything else through the same words still is."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.policy import Policy

SAFETY = Policy.preset("safety")

_TIDY_FIXTURES = """\
import shutil, tempfile
import pytest

@pytest.fixture
def work(tmp_path):
    yield tmp_path
    shutil.rmtree(tmp_path)

@pytest.fixture
def scratch():
    folder = tempfile.mkdtemp()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)

@pytest.fixture
def nested(tmp_path_factory):
    made = tmp_path_factory.mktemp("data") / "inner"
    yield made
    shutil.rmtree(made)
"""
_TESTS = "def test_x(work, scratch, nested):\n    assert work\n"


def _decision(root: Path, command: str = "pytest -q") -> str:
    return SAFETY.evaluate("Bash", {"command": command}, root=str(root)).decision


def _suite(tmp_path: Path, conftest: str, tests: str = _TESTS) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(conftest)
    (tmp_path / "tests" / "test_a.py").write_text(tests)
    return tmp_path


def test_fixtures_that_remove_their_own_folders_keep_pytest_allowed(tmp_path: Path) -> None:
    root = _suite(tmp_path, _TIDY_FIXTURES)
    assert _decision(root) == "allow"
    assert _decision(root, "python -m pytest tests -q") == "allow"


def test_a_script_removing_the_folder_it_made_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "build.py").write_text(
        "import shutil, tempfile\n\ndef main():\n    d = tempfile.mkdtemp()\n"
        "    shutil.rmtree(d)\n\nif __name__ == '__main__':\n    main()\n"
    )
    assert _decision(tmp_path, "python3 build.py") == "allow"


@pytest.mark.parametrize(
    "body",
    [
        # the name given another folder
        "def test_x(tmp_path):\n    tmp_path = Path('app')\n    shutil.rmtree(tmp_path)\n",
        # a folder climbed out of the one handed over
        "def test_x(tmp_path):\n    d = tmp_path / '..' / '..'\n    shutil.rmtree(d)\n",
        "def test_x(tmp_path):\n    d = tmp_path / '/srv/app'\n    shutil.rmtree(d)\n",
        "def test_x(tmp_path):\n    shutil.rmtree(tmp_path.parent)\n",
        # a helper pytest does not call: its tmp_path is whatever it is given
        "def helper(tmp_path):\n    shutil.rmtree(tmp_path)\n\n"
        "def test_x():\n    helper(Path('app'))\n",
        # a made folder, then another value
        "def test_x():\n    d = tempfile.mkdtemp()\n    d = 'app'\n    shutil.rmtree(d)\n",
        "def test_x():\n    for d in ['app']:\n        shutil.rmtree(d)\n",
    ],
)
def test_a_deletion_of_anything_else_stays_refused(tmp_path: Path, body: str) -> None:
    header = "import shutil, tempfile\nfrom pathlib import Path\n\n"
    root = _suite(tmp_path, "", header + body)
    assert _decision(root) == "deny", body


def test_a_tmp_path_of_the_suite_s_own_is_not_pytest_s(tmp_path: Path) -> None:
    # a conftest defining its own `tmp_path` fixture: the folder a test is handed is its own
    conftest = (
        "import pytest\nfrom pathlib import Path\n\n@pytest.fixture\n"
        "def tmp_path():\n    return Path('app')\n"
    )
    tests = "import shutil\n\ndef test_x(tmp_path):\n    shutil.rmtree(tmp_path)\n"
    root = _suite(tmp_path, conftest, tests)
    assert _decision(root) == "deny"
