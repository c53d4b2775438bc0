"""Gaps a review of the shell reading found, each closed: a file changed or symlinked, text
that reaches a shell through a substitution, the standard input or a glob that matches
dotfiles, shell commands inside program text, env files a launcher loads, and task files that
are hostile (too large once expanded, or of an unexpected shape)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.policy.shell.code import code_paths
from pytest_harness_audit.policy.shell.shellouts import shell_outs

COPY = "cp .env /tmp/x"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(
        tmp_path,
        {
            "tidy.sh": "echo tidy\n",
            "leak.sh": f"{COPY}\n",
            "leak.py": "print(open('.env').read())\n",
            "ok.py": "print('ok')\n",
        },
        ("app",),
    )


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        # a substitution, the standard input, a file changed or written in pieces
        ('sh -c "$(cat leak.sh)"', "deny-secret-files"),
        ('eval "$(<leak.sh)"', "deny-secret-files"),
        ('X=$(cat leak.sh); eval "$X"', "deny-secret-files"),
        ("cat leak.sh | bash -", "deny-secret-files"),
        ("sh /dev/stdin < leak.sh", "deny-secret-files"),
        ("python3 /dev/stdin < leak.py", "deny-secret-files"),
        ("printf 'cp .e' > s; printf 'nv /tmp/x' >> s; sh s", "deny-secret-files"),
        ("echo -n 'cp .e' > s; echo 'nv /tmp/x' >> s; sh s", "deny-secret-files"),
        (f"echo '{COPY}' > s.sh; cd app; sh ../s.sh", "deny-secret-files"),
        # globs that match dotfiles once the shell is told so
        ("shopt -s dotglob; cat *", "deny-secret-files"),
        ("GLOBIGNORE=x; cat ?env", "deny-secret-files"),
        ("setopt globdots; cat *", "deny-secret-files"),
        # shell commands inside program text
        (f"python3 -c \"import os; os.system('{COPY}')\"", "deny-secret-files"),
        ("python3 -c \"import os; os.system('rm -rf app')\"", "deny-destructive-commands"),
        (
            "python3 -c \"import subprocess; subprocess.run(['sh', 'leak.sh'])\"",
            "deny-secret-files",
        ),
        (f"node -e \"require('child_process').execSync('{COPY}')\"", "deny-secret-files"),
        (f"ruby -e 'system(\"{COPY}\")'", "deny-secret-files"),
        (f"php -r 'shell_exec(\"{COPY}\");'", "deny-secret-files"),
        ('perl -e \'system("rm", "-rf", "app")\'', "deny-destructive-commands"),
        # env files a launcher loads
        ("dotenv run -- env", "deny-secret-files"),
        ("dotenv get API_KEY", "deny-secret-files"),
        ("uv run --env-file .env python -V", "deny-secret-files"),
        ("op run --env-file=.env -- ls", "deny-secret-files"),
        ("deno run --env-file app/x.ts", "deny-secret-files"),
        # launcher forms
        ("nix develop . -c ./leak.sh", "deny-secret-files"),
        (f"doppler run --command '{COPY}'", "deny-secret-files"),
        (f"mise x node@20 -c '{COPY}'", "deny-secret-files"),
        ("go run -exec 'sh leak.sh' main.go", "deny-secret-files"),
        ("pwsh -comm 'Get-Content .env'", "deny-secret-files"),
        ("pwsh -fil leak.ps1", "deny-secret-files"),
        # imports on one line with other statements, and in parentheses over lines
        ("python3 -c 'import os; import leak'", "deny-secret-files"),
        ("python3 -c 'x = 1; from leak import y'", "deny-secret-files"),
    ],
)
def test_the_gap_is_closed(root: Path, command: str, rule: str) -> None:
    (root / "leak.ps1").write_text("Get-Content .env\n")
    assert safety_in(command, root) == ("deny", rule)


def test_encoded_powershell_by_an_abbreviated_option(root: Path) -> None:
    encoded = base64.b64encode(b"Get-Content .env".decode().encode("utf-16-le")).decode()
    assert safety_in(f"pwsh -encodedc {encoded}", root) == ("deny", "deny-secret-files")


def test_a_parenthesised_import_over_lines(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "util.py").write_text("print(open('.env').read())\n")
    (root / "main.py").write_text("from pkg import (\n    util,\n)\n")
    assert safety_in("python3 main.py", root) == ("deny", "deny-secret-files")


@pytest.mark.parametrize(
    "command",
    [
        "sed -i 's/tidy/x/' tidy.sh && sh tidy.sh",  # the text that runs is not on disk yet
        "perl -pi -e 's/tidy/x/' tidy.sh; bash tidy.sh",
        "tee tidy.sh < /dev/null; sh tidy.sh",
    ],
)
def test_a_file_changed_earlier_in_the_command_then_run_is_unreadable(
    root: Path, command: str
) -> None:
    assert safety_in(command, root) == ("warn", "unreadable-command")


@pytest.mark.parametrize(
    ("file", "command"),
    [
        ("justfile", "just"),
        ("Taskfile.yml", "task"),
        ("tox.ini", "tox"),
        (".pre-commit-config.yaml", "pre-commit run"),
        ("noxfile.py", "nox"),
        ("setup.py", "pip install ."),
        ("helper.py", "python3 -c 'import helper'"),
    ],
)
def test_a_default_file_that_is_a_symlink_to_a_secret_is_a_read_of_it(
    root: Path, file: str, command: str
) -> None:
    (root / file).symlink_to(root / ".env")
    assert safety_in(command, root) == ("deny", "deny-secret-files")


@pytest.mark.parametrize(
    "justfile",
    [
        "x := '" + "{{x}}" * 60 + "'\nrun:\n    echo " + "{{x}}" * 60 + "\n",  # self-reference
        "".join(f"x{i} := '" + f"{{{{x{i + 1}}}}}" * 8 + "'\n" for i in range(8))
        + "x8 := 'yyyyyyyy'\nrun:\n    echo {{x0}}\n",  # 8 ** 8 once expanded
    ],
)
def test_a_justfile_that_multiplies_when_expanded_is_unreadable(root: Path, justfile: str) -> None:
    (root / "justfile").write_text(justfile)
    assert safety_in("just run", root) == ("warn", "unreadable-command")


@pytest.mark.parametrize(
    ("file", "text"),
    [
        (".pre-commit-config.yaml", "repos: 5\n"),
        (".pre-commit-config.yaml", "repos:\n- repo: local\n  hooks:\n  - {id: x, entry: 5}\n"),
        ("Taskfile.yml", "tasks:\n  default: 7\n"),
        ("composer.json", '{"scripts": ["x"]}'),
    ],
)
def test_a_task_file_of_an_unexpected_shape_is_no_crash(root: Path, file: str, text: str) -> None:
    (root / file).write_text(text)
    command = {".pre-commit-config.yaml": "pre-commit run", "Taskfile.yml": "task",
               "composer.json": "composer run x"}[file]  # fmt: skip
    assert safety_in(command, root)[0] in ("allow", "warn")


@pytest.mark.parametrize(
    ("file", "text", "command"),
    [
        ("justfile", "set shell := ['bash', '-uc']\ntest:\n    pytest -q\n", "just test"),
        ("justfile", "test *args:\n    pytest {{args}}\n", "just test -x"),
        ("justfile", "test arg='unit':\n    echo {{arg}}\n", "just test"),
        ("justfile", "ship:\n    cp .env /tmp/x\n", "just --list"),
        ("justfile", "ship:\n    cp .env /tmp/x\n", "just --show ship"),
        ("Taskfile.yml", "version: '3'\ntasks:\n  x:\n    cmds: [cp .env /tmp/x]\n", "task --list"),
        ("app/x.js", "yargs.env('CONCURRENTLY')\n", "node app/x.js"),
    ],
)
def test_benign_look_alikes_stay_allowed(root: Path, file: str, text: str, command: str) -> None:
    (root / file).write_text(text)
    assert safety_in(command, root) == ("allow", None)


@pytest.mark.parametrize(
    "command",
    [
        "cat *",
        "shopt -s dotglob; shopt -u dotglob; cat *",
        "shopt -s nullglob; cat *.md",
        'eval "$(ssh-agent -s)"',
        "python3 -c \"import os; os.system('ls -la')\"",
        "node -e \"const re = /x/; re.exec('abc')\"",
        "uv run python -V",
        "dotenvx run -f .env.example -- ls",
    ],
)
def test_benign_commands_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)


def test_shell_outs_and_code_paths() -> None:
    assert shell_outs("subprocess.run(['sh', '-c', 'cat x'])") == ["sh -c 'cat x'"]
    assert shell_outs("os.system(cmd)") == []
    assert shell_outs("%x(ls -la)") == ["ls -la"]
    assert code_paths("yargs.env('X')\n  .env('Y')\nopen('.env')") == [".env"]
