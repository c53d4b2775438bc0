"""The command line builds only the command group it is given: the same parse, fewer imports."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_harness_audit.cli import build_parser, main


@pytest.mark.parametrize(
    "argv",
    [
        ["hook", "pre", "--warn", "pass"],
        ["--storage", "store", "hook", "post"],
        ["--storage=store", "policy", "test", "Bash", "ls"],
        ["audit", "verify", "--storage", "store"],
        ["view", "--storage", "store"],
    ],
)
def test_one_group_parses_as_every_group_does(argv: list[str]) -> None:
    group = next(word for word in argv if not word.startswith("-") and word != "store")
    whole = vars(build_parser().parse_args(argv))
    alone = vars(build_parser(group).parse_args(argv))
    assert {k: v for k, v in whole.items() if k != "func"} == {
        k: v for k, v in alone.items() if k != "func"
    }
    assert whole["func"].__qualname__ == alone["func"].__qualname__


def test_a_hook_event_imports_no_other_command() -> None:
    code = (
        "import sys\n"
        "from pytest_harness_audit.cli import build_parser, _group_named\n"
        "build_parser(_group_named(['hook', 'pre']))\n"
        "groups = ('audit', 'proxy', 'relay', 'immune', 'view', 'init')\n"
        "print([g for g in groups if f'pytest_harness_audit.cli.{g}_cmd' in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("argv", [["--help"], ["nonsense"]])
def test_help_and_a_wrong_group_still_name_every_group(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    for group in ("policy", "audit", "proxy", "relay", "hook", "immune", "view", "init"):
        assert group in text
