"""Inline Python (``python3 -c``) read for the paths it names: a string it only shows
(``print``, a logger) opens nothing; one it opens, or can run, is read
(``program_strings.shown_blanked``)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from pytest_harness_audit.policy import Policy

SAFETY = Policy.preset("safety")
SECRET = ("deny", "deny-secret-files")
DESTROY = ("deny", "deny-destructive-commands")


def _decision(root: Path, code: str) -> tuple[str, str | None]:
    (root / "app").mkdir(exist_ok=True)
    (root / ".env").write_text("KEY=1\n")
    evaluation = SAFETY.evaluate(
        "Bash", {"command": f"python3 -c {shlex.quote(code)}"}, root=str(root)
    )
    return evaluation.decision, evaluation.rule_id


@pytest.mark.parametrize(
    ("code", "verdict"),
    [
        ("open('.env').read()", SECRET),
        ("print(open('.env').read())", SECRET),
        ("print('.env', file=open('out', 'w'))", SECRET),
        ("print = exec; print('print(open(\".env\").read())')", SECRET),
        ("print(f'{open(\".env\").read()}')", SECRET),
        ("import shutil; print(shutil.copy('.env', '/tmp/x'))", SECRET),
        ("import sys; sys.stdout.write(open('.env').read())", SECRET),
        ("exec(\"print(open('.env').read())\")", SECRET),
        ("import builtins; builtins.print = exec; print('open(\".env\").read()')", SECRET),
        ("import os; os.system('rm -rf app')", DESTROY),
        ("exec('import shutil; shutil.rmtree(\"app\")')", DESTROY),
        ("import shutil; eval('shutil.rmtree(\"app\")')", DESTROY),
        ("import shutil; getattr(shutil, 'rm' + 'tree')('app')", DESTROY),
        ("__import__('shutil').rmtree('app')", DESTROY),
    ],
)
def test_what_the_code_opens_or_runs_is_judged(
    tmp_path: Path, code: str, verdict: tuple[str, str | None]
) -> None:
    assert _decision(tmp_path, code) == verdict


def test_a_module_of_the_workspace_standing_in_keeps_the_string(tmp_path: Path) -> None:
    (tmp_path / "logging.py").write_text("info = lambda p: print(open(p).read())\n")
    assert _decision(tmp_path, "import logging; logging.info('.env')") == SECRET


@pytest.mark.parametrize(
    "code",
    [
        "print('edit your .env')",
        "import logging; logging.info('see .env for the keys')",
        "import sys; sys.stderr.write('copy .env.example to .env\\n')",
        "print('set KEY in', '.env')",
    ],
)
def test_a_path_the_code_only_shows_is_not_read(tmp_path: Path, code: str) -> None:
    assert _decision(tmp_path, code) == ("allow", None)
