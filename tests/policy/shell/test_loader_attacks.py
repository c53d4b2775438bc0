"""Credential reads in disguise: names a listing hands to a reader, loop and ``read`` variables,
files a shell sources first, and programs that load ``.env`` on their own."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell.filters import run_filter

SECRET = ("deny", "deny-secret-files")
DESTROYS = ("deny", "deny-destructive-commands")
DELETES = ("warn", "warn-file-delete")
ALLOWED = ("allow", None)


@functools.cache
def _safety() -> Policy:
    return Policy.preset("safety")


def decide(command: str, root: Path | None = None) -> tuple[str, str | None]:
    """``(decision, rule)`` of the ``safety`` preset for the Bash ``command``."""
    evaluation = _safety().evaluate(
        "Bash", {"command": command}, root=None if root is None else str(root)
    )
    return evaluation.decision, evaluation.rule_id


def _workspace(parent: Path, *, secret: bool = True, files: dict[str, str] | None = None) -> Path:
    root = parent / "workspace"
    (root / "app").mkdir(parents=True)
    (root / "app" / "main.py").write_text("print('hi')\n", encoding="utf-8")
    (root / "README.md").write_text("hello\n", encoding="utf-8")
    (root / ".env.example").write_text("API_KEY=\n", encoding="utf-8")
    (root / "package.json").write_text('{"scripts": {"test": "echo ok"}}\n', encoding="utf-8")
    (root / "venv" / "bin").mkdir(parents=True)
    (root / "venv" / "bin" / "activate").write_text("export VIRTUAL_ENV=x\n", encoding="utf-8")
    if secret:
        (root / ".env").write_text("API_KEY=sk-test-0123456789abcdef\n", encoding="utf-8")
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace holding a ``.env`` secret beside ordinary project files."""
    return _workspace(tmp_path)


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    """The same workspace with no ``.env``."""
    return _workspace(tmp_path, secret=False)


# -- names a listing prints, reaching a reader ------------------------------------------------

LISTED_READS = [
    "ls -a | xargs cat",
    "ls -A | xargs -I{} cat {}",
    "find . -name '.e*' | xargs cat",
    "find . -type f | xargs cat",
    "find . -type f -print0 | xargs -0 cat",
    "cat $(ls -a)",
    "cat $(find . -type f)",
    'ls -a | while read f; do cat "$f"; done',
    'for f in $(ls -A); do cat "$f"; done',
    "find . -type f -exec cat {} +",
    "find . -depth -print | cpio -o > /tmp/ws.cpio",
    "cat $(ls -a | grep env)",
    "ls -a | grep -v py | xargs cat",
    "ls -A | sort | head -3 | xargs cat",
    "find / -name .env | xargs cat",
    "ls -a | xargs -I % sh -c 'cat %'",
    "ls -A | xargs --replace=@ sh -c 'base64 @'",
    "ls -a | parallel cat",
    "xargs cat < <(ls -a)",
    "cd app && ls -a .. | xargs cat",
    "ls -a | tr '\\n' ' ' | xargs cat",
]


@pytest.mark.parametrize("command", LISTED_READS)
def test_names_a_listing_prints_are_read_by_the_reader(workspace: Path, command: str) -> None:
    assert decide(command, workspace) == SECRET, command


@pytest.mark.parametrize(
    "command",
    ["find . -name '.e*' | xargs cat", "cat $(find . -name '.e*')", "ls .env | xargs cat"],
)
def test_a_listing_names_a_secret_with_no_workspace(command: str) -> None:
    assert decide(command) == SECRET, command


@pytest.mark.parametrize(
    "command",
    [
        "ls | xargs cat",  # no dotfile listed without -a
        "find . -name '*.py' | xargs cat",
        "find . -name '*.py' | xargs wc -l",
        "find app -type f -exec cat {} +",
        "ls *.md | xargs cat",
        "ls | grep md | xargs cat",
        "ls app | xargs -I % sh -c 'wc -l app/%'",
        "ls *.md | parallel wc -l",
        "ls -la",
        "ls > files.txt",
        "find . -name '*.py' > list.txt",
        'for f in app/*.py; do cat "$f"; done',
        "cat .env.example",
    ],
)
def test_listings_of_ordinary_files_stay_allowed(workspace: Path, command: str) -> None:
    assert decide(command, workspace) == ALLOWED, command


def test_a_filter_pattern_that_repeats_is_not_worked_out(workspace: Path) -> None:
    # a repetition could make matching slow on names the agent chose: the pattern is not run,
    # and the reader takes every name the listing printed (`.env` among them)
    assert run_filter("grep", ["(a*)*b"], ".env\n") is None
    assert decide("ls -a | grep '(a*)*b' | xargs cat", workspace) == SECRET


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("find . -name '*.o' | xargs rm -f", DELETES),
        ("ls build | xargs rm -rf", DESTROYS),
        ("xargs rm -f < b", DELETES),
    ],
)
def test_deleting_listed_build_files_is_a_deletion_not_a_secret_read(
    workspace: Path, command: str, expected: tuple[str, str]
) -> None:
    assert decide(command, workspace) == expected, command


# -- loop and `read` variables ----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "for f in .env; do cat $f; done",
        'for f in .e*; do cat "$f"; done',
        'for f in README.md .env; do cat "$f"; done',
        "select f in .env; do cat $f; done",
        "for x in $(cat .env); do :; done",
        'IFS=, read a b <<< ".env,x"; cat "$a"',
        'IFS=,; read a b <<< "x,.env"; cat $b',
        'IFS=: read -r a b c <<< "x:y:.env"; cat "$c"',
        "read -r f <<< .env; cat $f",
        'mapfile -t a <<< .env; cat "${a[0]}"',
    ],
)
def test_loop_and_read_variables_are_followed(command: str) -> None:
    assert decide(command) == SECRET, command


@pytest.mark.parametrize(
    "command",
    [
        'for f in README.md app/main.py; do cat "$f"; done',
        'IFS=, read a b <<< "README.md,x"; cat "$a"',
        "for i in 1 2 3; do echo $i; done",
    ],
)
def test_ordinary_loops_stay_allowed(workspace: Path, command: str) -> None:
    assert decide(command, workspace) == ALLOWED, command


# -- files a shell sources first --------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "BASH_ENV=.env bash -c true",
        "ENV=.env sh -i",
        "export BASH_ENV=.env; bash -c true",
        "bash --rcfile .env",
        "bash --init-file=.env -i",
        "sh -c '. ./.env'",
        "source .env",
    ],
)
def test_a_shell_sourcing_the_secret_first_is_a_read(command: str) -> None:
    assert decide(command) == SECRET, command


@pytest.mark.parametrize(
    "command",
    ["source venv/bin/activate", "BASH_ENV=venv/bin/activate bash -c 'npm test'"],
)
def test_sourcing_an_ordinary_file_stays_allowed(workspace: Path, command: str) -> None:
    assert decide(command, workspace) == ALLOWED, command


# -- programs that load `.env` on their own ---------------------------------------------------

AUTO_LOADS = [
    "bun run test",
    "bun x vitest",
    "bun test",
    "bun index.ts",
    "docker compose config",
    "docker-compose config",
    "podman compose config",
]


@pytest.mark.parametrize("command", AUTO_LOADS)
def test_a_program_loading_the_workspace_env_reads_it(workspace: Path, command: str) -> None:
    assert decide(command, workspace) == SECRET, command


@pytest.mark.parametrize("command", AUTO_LOADS)
def test_with_no_env_file_in_the_workspace_they_stay_allowed(clean: Path, command: str) -> None:
    assert decide(command, clean) == ALLOWED, command


@pytest.mark.parametrize(
    "command",
    [
        "npx dotenv-cli -- env",
        "pnpm dlx dotenv-cli -- env",
        "heroku local",
        "heroku local:run env",
        "docker compose --env-file .env ps",
        "dotenv run -- env",
        "python -m dotenv list",
        "pipenv run python x.py",
        "foreman run env",
        "node --env-file=.env x.js",
        "deno run --env x.ts",
        "uv run --env-file .env python x.py",
    ],
)
def test_env_loaders_read_the_secret(command: str) -> None:
    assert decide(command) == SECRET, command


@pytest.mark.parametrize(
    "command",
    [
        "bun install",
        "bun --no-env-file run test",
        "docker compose ps",
        "docker compose logs",
        "docker compose up",  # its compose file passes no value on
        "heroku apps",
        "direnv allow",
        "poetry run pytest",
    ],
)
def test_look_alikes_stay_allowed(workspace: Path, command: str) -> None:
    assert decide(command, workspace) == ALLOWED, command


def test_compose_up_passes_the_env_file_when_the_compose_file_interpolates(
    tmp_path: Path,
) -> None:
    compose = "services:\n  app:\n    image: x\n    environment:\n      KEY: ${API_KEY}\n"
    root = _workspace(tmp_path, files={"compose.yaml": compose})
    assert decide("docker compose up", root) == SECRET


def test_direnv_exec_runs_the_envrc(tmp_path: Path) -> None:
    root = _workspace(tmp_path, files={".envrc": "dotenv\n"})
    assert decide("direnv exec . env", root) == SECRET
    plain = _workspace(tmp_path / "plain", files={".envrc": "export X=1\n"})
    assert decide("direnv exec . env", plain) == ALLOWED


def test_poetry_run_with_the_dotenv_plugin_reads_the_env_file(tmp_path: Path) -> None:
    project = '[tool.poetry.requires-plugins]\npoetry-dotenv-plugin = ">=0.2"\n'
    root = _workspace(tmp_path, files={"pyproject.toml": project})
    assert decide("poetry run pytest", root) == SECRET


# -- names computed at run time (held: these were caught before) ------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat $(printf '\\x2eenv')",
        "cat $(echo LmVudg== | base64 -d)",
        "f=.e; cat ${f}nv",
        "cat .[e]nv",
        "cat .?nv",
        'cat ./.e"n"v',
        "cat $'\\056env'",
        'a=(.env); cat "${a[@]}"',
        'a=(x .env); cat "${a[1]}"',
        'a=(.e nv); cat "${a[0]}${a[1]}"',
        'a=("x y" .e); cat "${a[1]}nv"',
        "f=.e; f+=nv; cat $f",
        'a[0]=.e; a[1]=nv; cat "${a[0]}${a[1]}"',
        'a=(.e nv); IFS=; cat "${a[*]}"',
        "a+=(.env); cat ${a[-1]}",
        "for f in {.e,x}nv; do cat $f; done",
        "echo vne. | rev | xargs cat",
        "find / -name .env | xargs cat",
        "find . -name '*.py' -o -name .env | xargs cat",
    ],
)
def test_names_computed_at_run_time_are_read(command: str) -> None:
    assert decide(command) == SECRET, command


@pytest.mark.parametrize(
    "command",
    [
        'a=(.e nv); cat "${a[0]}${a[1]}"',
        "find / -name .env | xargs cat",
        "for f in {.e,x}nv; do cat $f; done",
    ],
)
def test_computed_names_are_read_in_a_workspace_too(workspace: Path, command: str) -> None:
    assert decide(command, workspace) == SECRET, command


@pytest.mark.parametrize(
    "command",
    [
        'a=(README x); cat "${a[0]}.md"',
        "f=README; f+=.md; cat $f",
        "for f in {README,app/main}.*; do cat $f; done",
    ],
)
def test_computed_ordinary_names_stay_allowed(workspace: Path, command: str) -> None:
    assert decide(command, workspace) == ALLOWED, command


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.mark.parametrize("tracked", [True, False])
def test_git_ls_files_lists_what_the_index_names(tmp_path: Path, tracked: bool) -> None:
    root = _workspace(tmp_path, files={} if tracked else {".gitignore": ".env\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    expected = SECRET if tracked else ALLOWED
    assert decide("git ls-files | xargs cat", root) == expected
    assert decide("cat $(git ls-files)", root) == expected
    assert decide("git ls-files -o | xargs cat", root) == (ALLOWED if tracked else SECRET)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["env"], ".env\n"),
        (["-v", "env"], "README.md\n"),
        (["-F", ".e"], ".env\n"),
        (["-i", "readme"], "README.md\n"),
        (["^.en"], ".env\n"),
        (["(a*)*b"], None),  # repetition: not worked out
        (["-e", "env"], None),  # other options: not worked out
    ],
)
def test_grep_over_a_listing(args: list[str], expected: str | None) -> None:
    assert run_filter("grep", args, ".env\nREADME.md\n") == expected
