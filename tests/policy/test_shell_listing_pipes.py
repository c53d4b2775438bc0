"""A listing's names through filters the reading cannot work out, into a reader or ``rm``.

``ls -a | awk '/env/' | xargs cat``: the filter keeps some of the names the listing printed, so
the reader is judged as reading every one of them (and any credential name in the filter's own
text). Listings of folders outside the workspace (``ls -a ~``, ``find ~/.aws``) name the
credential files those folders hold. Each attack has benign look-alikes that stay allowed.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell import read_command
from pytest_harness_audit.policy.shell.echo import echo_output
from pytest_harness_audit.policy.shell.filters import run_filter

SECRET = ("deny", "deny-secret-files")
DESTROYS = ("deny", "deny-destructive-commands")
ALLOWED = ("allow", None)


@functools.cache
def _safety() -> Policy:
    return Policy.preset("safety")


def decide(command: str, root: Path | None) -> tuple[str, str | None]:
    """``(decision, rule)`` of the ``safety`` preset for the Bash ``command``."""
    evaluation = _safety().evaluate(
        "Bash", {"command": command}, root=None if root is None else str(root)
    )
    return evaluation.decision, evaluation.rule_id


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder outside the workspace with keys under names of its own."""
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_work").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (folder / ".ssh" / "id_work.pub").write_text("ssh-ed25519 AAAA\n")
    (folder / ".aws").mkdir()
    (folder / ".aws" / "credentials").write_text("[default]\n")
    (folder / ".netrc").write_text("machine x login y password z\n")
    (folder / "notes.txt").write_text("hello\n")
    (folder / "certs").mkdir()
    (folder / "certs" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def workspace(tmp_path: Path, home: Path) -> Path:
    """A workspace with a ``.env`` (a dotfile sorted after another one) and project files."""
    root = tmp_path / "workspace"
    (root / "app").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "app" / "main.py").write_text("print('hi')\n")
    (root / "tests" / "test_app.py").write_text("def test_x(): pass\n")
    (root / "test_top.py").write_text("def test_y(): pass\n")
    (root / "README.md").write_text("hello\n")
    (root / ".aaa").write_text("x\n")
    (root / ".env").write_text("API_KEY=sk-test-0123456789abcdef\n")
    return root


# A listing through a filter the reading cannot work out, into a reader.
FILTERED_READS = [
    "ls -a | awk '/env/' | xargs cat",
    "ls -a | awk '{print $1}' | xargs cat",
    "ls -la | awk '{print $9}' | xargs cat",
    "ls -A | sed -n 3p | xargs cat",
    "ls -a | sed -n '/env/p' | xargs cat",
    "ls -a | grep '^\\.e*nv$' | xargs cat",
    "ls -a | grep -E '\\.[e]nv' | xargs cat",
    "ls -a | egrep 'en+v' | xargs cat",
    "ls -a | grep -P 'e\\w*v' | xargs cat",
    "ls -a | grep -e env | xargs cat",
    "ls -a | grep -o '.env' | xargs cat",
    "ls -a | cut -c1- | xargs cat",
    "ls -a | uniq | xargs cat",
    "ls -a | tac | xargs cat",
    "ls -a | shuf | xargs cat",
    "ls -a | sort -k1 | tail -n 1 | xargs cat",
    "ls -a | perl -ne 'print if /env/' | xargs cat",
    "ls -a | python3 -c 'import sys; print(sys.stdin.read())' | xargs cat",
    "find . -maxdepth 1 | awk '/env/' | xargs cat",
    "ls -a | awk '/env/' | parallel cat",
    "ls -a | awk '/env/' | xargs -I{} base64 {}",
    "ls -a | awk '/env/' | xargs -I{} cp {} /tmp/copy",
    "ls -a | awk '/env/' | xargs tar cf /tmp/x.tar",
    "ls -a | awk '/env/' | timeout 5 xargs cat",
    "ls -a | awk '/env/' | (xargs cat)",
]
# The same names into `while read`, `mapfile`, a substitution or a process substitution.
FILTERED_OTHER_WAYS = [
    'ls -a | while read f; do cat "$f"; done',  # `.env` is not the first line
    "printf 'a\\n.env\\n' | while IFS= read -r f; do cat -- \"$f\"; done",
    "ls -a | awk '/env/' | while read f; do cat \"$f\"; done",
    "ls -a | { read a; read b; read c; cat $c; }",
    'while read f; do cat "$f"; done < <(ls -a)',
    "while read f; do cat \"$f\"; done < <(ls -a | grep -E 'e.v')",
    "{ read f; cat $f; } < <(echo .env)",
    "mapfile -t a < <(ls -a | awk '/env/'); cat \"${a[@]}\"",
    "readarray a < <(ls -a | grep -E 'e.v'); cat ${a[@]}",
    "cat $(ls -a | awk '/env/')",
    "cat `ls -a | sed -n 2p`",
    "for f in $(ls -a | sed -n 3p); do cat $f; done",
    "parallel cat :::: <(ls -a)",
    "xargs --arg-file=<(ls -a | grep -E 'e.v') cat",
    "ls -a | awk '/env/' | xargs -a /dev/stdin cat",
    "cat \"$(ls -a | awk '/env/')\"",
    'while read -r f; do base64 "$f"; done <<< "$(ls -a | awk \'/env/\')"',
    "xargs cat <<< \"$(ls -a | awk '/env/')\"",
]
# Names a filter makes of its own text, or a command whose output is not known prints.
MADE_NAMES = [
    "echo x | sed 's/x/.env/' | xargs cat",
    "echo x | awk '{print \".env\"}' | xargs cat",
    "printf '%s\\n' .e nv | paste -sd '' | xargs cat",
    "printf '.e\\nnv\\n' | xargs | tr -d ' ' | xargs cat",
    "printf '%s\\n' .env README.md | xargs cat",
    "realpath .env | xargs cat",
]
# Other listings of the workspace.
OTHER_LISTINGS = [
    "fd -H | xargs cat",
    "fdfind --hidden . | xargs cat",
    "rg --files --hidden | xargs cat",
    "du -a | awk '{print $2}' | xargs cat",
    "tree -aif --noreport | xargs cat",
    "compgen -f | xargs cat",
    "printf '%s\\n' .* | xargs cat",
    "stat -c %n .* | xargs cat",
]
# Folders outside the workspace.
OUTSIDE = [
    "ls -a ~ | xargs cat",
    "ls -a ~ | xargs -I{} cat ~/{}",
    "ls -a $HOME | awk '/rc/' | xargs -I{} cat $HOME/{}",
    "ls ~/.ssh | xargs -I{} cat ~/.ssh/{}",
    "ls ~/.ssh | grep -v pub | xargs -I{} cat ~/.ssh/{}",
    "ls -1 ~/.aws | xargs -I{} cat ~/.aws/{}",
    "find ~/.aws -type f | xargs cat",
    "find ~/.ssh -type f -exec cat {} +",
    "find ~ -name '*.pem' | xargs cat",
    "find ~ -maxdepth 2 -name 'id_*' | xargs cat",
    'for f in ~/.ssh/*; do cat "$f"; done',
    "cat ~/.*",
    "ls -d ~/.* | xargs cat",
    "echo ~/.n* | xargs cat",
    "grep -rl . ~/.ssh | xargs cat",
]


@pytest.fixture
def repository(workspace: Path) -> Path:
    """The workspace as a git repository: ``app/main.py`` tracked, ``.env`` not."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    subprocess.run(["git", "-C", str(workspace), "add", "app/main.py"], check=True)
    return workspace


@pytest.mark.parametrize(
    "command",
    [
        "git status --porcelain | cut -c4- | xargs cat",
        "git status -s | awk '{print $2}' | xargs cat",
        "git ls-files --others | awk 1 | xargs cat",
    ],
)
def test_untracked_names_from_git_reach_the_reader(repository: Path, command: str) -> None:
    assert decide(command, repository) == SECRET


def test_a_git_status_leaves_out_what_gitignore_ignores(repository: Path) -> None:
    command = "git status --porcelain | awk '{print $2}' | xargs ruff check"
    (repository / ".gitignore").write_text(".env\n")
    assert decide(command, repository) == ALLOWED
    assert decide(command.replace("--porcelain", "--porcelain --ignored"), repository) == SECRET
    (repository / ".gitignore").write_text(".env\n!.env.example\n")  # not worked out: kept
    assert decide(command, repository) == SECRET


@pytest.mark.parametrize(
    "command", FILTERED_READS + FILTERED_OTHER_WAYS + MADE_NAMES + OTHER_LISTINGS + OUTSIDE
)
def test_names_through_filters_reach_the_reader(workspace: Path, command: str) -> None:
    assert decide(command, workspace) == SECRET


@pytest.mark.parametrize("command", MADE_NAMES + OUTSIDE)
def test_named_without_a_workspace_too(home: Path, command: str) -> None:
    assert decide(command, None) == SECRET


DESTRUCTIONS = [
    "ls | awk '{print}' | xargs rm -rf",
    "ls | sed -n 1p | xargs rm -rf",
    'ls | while read f; do rm -rf "$f"; done',
    "ls | xargs -I{} rm -rf {}",
    "curl -s https://example.com/list | xargs -I{} rm -rf {}",
    "echo src | awk '{print}' | xargs -I% rm -rf %",
]


@pytest.mark.parametrize("command", DESTRUCTIONS)
@pytest.mark.parametrize("in_workspace", [True, False])
def test_destruction_through_a_listing_is_denied(
    workspace: Path, command: str, in_workspace: bool
) -> None:
    assert decide(command, workspace if in_workspace else None) == DESTROYS


BENIGN = [
    "ls | grep test | xargs pytest",
    "ls | grep -E 'e.v' | xargs cat",  # `ls` without -a prints no dotfile
    "git ls-files | xargs ruff check",
    "find . -name '*.py' | xargs wc -l",
    "find . -name '*.py' | sed 's|^\\./||' | xargs wc -l",
    "find . -name '*.py' | awk -F/ '{print $NF}' | sort | uniq -c",
    "find app -name '*.py' | xargs -I{} python -m py_compile {}",
    "ls tests | grep -E '^test_.*\\.py$' | xargs -I{} pytest tests/{}",
    "for f in $(ls *.py); do python -m py_compile $f; done",
    'ls *.py | while read f; do wc -l "$f"; done',
    "cat $(ls *.py | head -1)",
    "cat README.md",
    "ls -a | head",
    "ls -a | wc -l",
    "ls -a | grep -c env",
    "ls | awk '{print $1}'",
    "fd -e py | xargs wc -l",
    "rg --files | grep test | xargs pytest",
    "du -sh * | sort -h",
    "tree -L 2",
    "ls ~ | head",
    "ls ~/notes.txt | xargs cat",
    "find ~/certs -name '*.txt' | xargs cat",
    "printf '%s\\n' a b | xargs echo",
    "echo hello | sed 's/hello/world/'",
    "docker ps -q | xargs docker stop",
    "git diff --name-only | grep '\\.py$' | xargs ruff check",
]


@pytest.mark.parametrize("command", BENIGN)
def test_benign_look_alikes_stay_allowed(workspace: Path, command: str) -> None:
    assert decide(command, workspace) == ALLOWED


def test_a_filtered_substitution_as_a_command_name_is_not_taken_as_known(
    workspace: Path,
) -> None:
    # the names a filter may print are a superset: as a command name they are no command
    reading = read_command("$(printf 'echo\\nrm' | grep -E 'r+') -rf app", str(workspace))
    assert "opaque-delete" in reading.notes
    assert decide("$(printf 'echo\\nrm' | tail -1) -rf app", workspace)[0] != "allow"


@pytest.mark.parametrize(
    "command",
    [
        "printf 'cat <<X\\ncat .env\\nX\\n' | grep -vE 'X+' | sh",
        "bash <<< \"$(printf 'cat <<X\\ncat .env\\nX' | grep -vE 'X+')\"",
    ],
)
def test_a_filtered_script_fed_to_a_shell_stays_unknown(workspace: Path, command: str) -> None:
    # dropping lines can change what a script does (here a heredoc's end): the names a filter
    # may print are for commands that take names, a shell's script stays unknown
    assert decide(command, workspace) == ("warn", "unreadable-command")


def test_loose_filter_keeps_the_names_and_its_own() -> None:
    assert run_filter("awk", ["/env/"], "a\n.env\n") is None
    assert run_filter("awk", ["/env/"], "a\n.env\n", loose=True) == "a\n.env\n"
    assert run_filter("sed", ["s|x|/root/.ssh/id_rsa|"], "x\n", loose=True) == (
        "x\n/root/.ssh/id_rsa\n"
    )
    assert run_filter("sed", ["-n", "3p"], "a\nb\n.env\n") is None  # a listing's order: unknown
    assert run_filter("paste", ["-sd", ""], ".e\nnv\n") == ".env\n"
    assert run_filter("xargs", ["-n1"], ".e nv\n") == ".e\nnv\n"
    assert run_filter("head", ["-1"], "a\nb\n") is None  # a listing's order is not known


def test_printf_prints_a_value_a_line() -> None:
    assert echo_output(["printf", "%s\\n", ".env", "README.md"]) == ".env\nREADME.md"
    assert echo_output(["printf", "%s", ".e", "nv"]) == ".env"


@pytest.mark.parametrize(
    "command",
    [
        "ls -la | sed -n 's/^.* \\(\\..*\\)$/\\1/p' | xargs cat",
        "ls -la | awk '{print $9}' | xargs cat",
        "ls -A | perl -pe 's/^x//' | xargs cat",
    ],
)
def test_a_program_over_a_listing_keeps_its_names(command: str, tmp_path: Path) -> None:
    """A listing's text is a model of its names, not what ``ls -l`` prints: a program over it
    is not worked out exactly, every name stays."""
    root = secret_workspace(tmp_path, {"README.md": "# x\n"})
    assert safety_in(command, root) == ("deny", "deny-secret-files")
