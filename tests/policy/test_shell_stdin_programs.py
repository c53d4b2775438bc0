"""Program text handed to an interpreter on its standard input is judged as ``-c`` text is."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(tmp_path, {"app/a.py": "print(1)\n"}, ("app",))


@pytest.mark.parametrize(
    "command",
    [
        "printf 'import shutil\\nshutil.rmtree(\"app\")' | python3",
        "echo 'import shutil; shutil.rmtree(\"app\")' | python3 -",
        "python3 <<< 'import shutil; shutil.rmtree(\"app\")'",
        "printf 'use File::Path; rmtree(\"app\")' | perl",
        'echo \'require("fs").rmSync("app", {recursive: true})\' | node',
        "echo 'FileUtils.rm_rf(\"app\")' | ruby -rfileutils",
    ],
)
def test_a_deletion_on_the_standard_input_is_denied(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("deny", "deny-destructive-commands")


@pytest.mark.parametrize(
    "command",
    [
        "echo 'print(1)' | python3",
        "echo '{}' | python3 -m json.tool",
        "echo 'shutil.rmtree' | python3 -c 'import sys; print(sys.stdin.read())'",
        "echo 'rmtree(app)' | python3 app/a.py",
        "printf 'console.log(1)' | node",
    ],
)
def test_ordinary_programs_on_the_standard_input_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)
