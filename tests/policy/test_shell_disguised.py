"""Reads and deletions behind another purpose: env loaders, archivers of whole folders, installs
of a workspace project, deletions in disguise and expansion tricks, each with the ordinary
command that looks like it and must stay allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET, UNREADABLE, safety_in, secret_workspace

from pytest_harness_audit.policy.shell.code import code_paths

BUILD_READS_SECRET = "from setuptools import setup\nprint(open('.env').read())\nsetup()\n"
FILES = {
    "app/main.py": "print(1)\n",
    "app.js": "console.log(1)\n",
    "config/credentials.json": '{"token": "t"}',
    "clean/setup.py": "from setuptools import setup\nsetup(name='clean')\n",
    "evil/setup.py": BUILD_READS_SECRET,
    "req-evil.txt": "-e ./evil\n",
    "req-nested.txt": "-r req-evil.txt\n",
    "req-clean.txt": "requests\n-e ./clean\n",
    "backend/pyproject.toml": (
        "[build-system]\nrequires = []\nbuild-backend = 'hooks.build'\nbackend-path = ['.']\n"
    ),
    "backend/hooks/build.py": "print(open('.env').read())\n",
    "hatch/pyproject.toml": "[project]\nname = 'h'\n",
    "hatch/hatch_build.py": "open('.env').read()\n",
    "loader.js": "require('dotenv').config()\n",
    "loader.mjs": "import 'dotenv/config'\n",
    "loader.py": "from dotenv import load_dotenv\nload_dotenv()\n",
    "plain.py": "import os\nprint(os.environ.get('HOME'))\n",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return secret_workspace(tmp_path_factory.mktemp("disguised"), FILES, folders=("build", "empty"))


@pytest.mark.parametrize(
    "command",
    [
        "node -r dotenv/config app.js",
        "node --require dotenv/config app.js",
        "node --require=dotenv/config app.js",
        "node --import dotenv/config app.js",
        "node -r ./node_modules/dotenv/config.js app.js",
        "node -r dotenv-flow/config app.js",
        "node -r @dotenvx/dotenvx/config app.js",
        "tsx -r dotenv/config app.ts",
        "ruby -rdotenv/load app.rb",
        "NODE_OPTIONS='-r dotenv/config' node app.js",
        "NODE_OPTIONS='--require=dotenv/config' npm start",
        "export NODE_OPTIONS='--import dotenv/config'; node app.js",
        "python -m dotenv run python app/main.py",
        "python3 -m dotenv list",
        "pipenv run python app/main.py",
        "pipenv shell",
        "deno run --env app.ts",
        "foreman run env",
        "foreman start",
        "honcho run env",
        "env-cmd node app.js",
        "node loader.js",
        "node loader.mjs",
        "python loader.py",
    ],
)
def test_loading_an_env_file_into_the_environment_reads_it(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == SECRET, command


@pytest.mark.parametrize(
    "command",
    [
        "node -r ts-node/register app.js",
        "node --require ./app/setup.js app.js",
        "python plain.py",
        "python -m pytest --co -q app",
        "pipenv lock",
        "deno run app.ts",
    ],
)
def test_commands_that_load_no_env_file_stay_allowed(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == ALLOWED, command


def test_a_command_an_env_loader_runs_is_read(workspace: Path) -> None:
    assert safety_in("python -m dotenv run -- rm -rf app", workspace) == DESTROYS
    assert safety_in("python -m dotenv run rm -rf app", workspace) == DESTROYS
    assert safety_in("env-cmd -f x.env rm -rf app", workspace) == DESTROYS
    assert safety_in("foreman run -e x.env rm -rf app", workspace) == DESTROYS


@pytest.mark.parametrize(
    "command",
    [
        "pax -w -f /tmp/ws.pax .",
        "pax -wf /tmp/ws.pax .",
        "pax -rw . /tmp/copy",
        "python -m zipfile -c /tmp/ws.zip .",
        "python3 -m tarfile -c /tmp/cfg.tar config",
        "jar cf /tmp/ws.jar .",
        "rar a /tmp/ws.rar .",
        "ditto . /tmp/copy",
        "restic backup .",
        "borg create /tmp/repo::ws .",
        "zstd -r . -o /tmp/ws.zst",
        "gzip -rk config",
        "echo .env | cpio -o > /tmp/e.cpio",
        "git archive HEAD -o /tmp/ws.zip",
        "git -C . archive HEAD config",
        "git bundle create /tmp/ws.bundle --all",
        "git config -f .env --list",
        "git config --file=config/credentials.json -l",
    ],
)
def test_packing_a_folder_reads_its_credential_files(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == SECRET, command


@pytest.mark.parametrize(
    "command",
    [
        "pax -w -f /tmp/app.pax app",
        "python -m zipfile -c /tmp/app.zip app",
        "python -m zipfile -l /tmp/app.zip",
        "python -m tarfile -l /tmp/app.tar",
        "jar cf /tmp/app.jar app",
        "gzip -rk app",
        "echo app/main.py | cpio -o > /tmp/a.cpio",
        "git archive --format=tar HEAD app",
        "git config user.name agent",
    ],
)
def test_packing_a_source_folder_stays_allowed(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == ALLOWED, command


def test_names_on_an_unknown_input_are_flagged(workspace: Path) -> None:
    assert safety_in("git ls-files | cpio -o > /tmp/ws.cpio", workspace) == UNREADABLE


def test_names_a_find_lists_are_packed(workspace: Path) -> None:
    assert safety_in("find . -depth -print | cpio -o > /tmp/ws.cpio", workspace) == SECRET


@pytest.mark.parametrize(
    "command",
    [
        "pip install ./evil",
        "pip install -e ./evil",
        "pip install --editable=./evil",
        "pip install evil",
        "pip install evil/",
        "pip install 'evil[dev]'",
        "pip install file:./evil",
        "pip install -r req-evil.txt",
        "pip install -r req-nested.txt",
        "pip wheel ./evil",
        "pip download ./evil",
        "python -m pip install -Ue ./evil",
        "uv pip install -e ./evil",
        "uv tool install ./evil",
        "pipx install ./evil",
        "python -m build backend",
        "pyproject-build backend",
        "uv build backend",
        "pip install ./hatch",
        "poetry install --directory evil",
    ],
)
def test_installing_a_workspace_project_reads_its_build_code(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == SECRET, command


@pytest.mark.parametrize(
    "command",
    [
        "pip install ./clean",
        "pip install -e clean",
        "pip install -r req-clean.txt",
        "pip install requests",
        "pip install 'requests[socks]>=2'",
        "uv pip install requests",
        "pipx install black",
        "python -m build clean",
        "pip list",
    ],
)
def test_installs_with_harmless_build_code_stay_allowed(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == ALLOWED, command


@pytest.mark.parametrize(
    "command",
    [
        "tar -cf /tmp/x.tar --remove-files app",
        "tar cf /tmp/x.tar app --remove-files",
        "zip -rm /tmp/app.zip app",
        "zip -r --move /tmp/app.zip app",
        "7z a -sdel /tmp/app.7z app",
        "rar m /tmp/app.rar app",
        "gzip -r app",
        "xz -r app",
        "mv app /tmp",
        "mv app ../gone",
        "mv -t /tmp app",
        "mv --target-directory=/tmp app",
        "trap 'rm -rf app' EXIT",
    ],
)
def test_deletions_in_disguise_destroy(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == DESTROYS, command


@pytest.mark.parametrize(
    "command",
    [
        "tar czf /tmp/app.tgz app",
        "zip -r /tmp/app.zip app",
        "gzip -c app/main.py > /tmp/main.gz",
        "mv app/main.py app/cli.py",
        "mv build empty/",
        "trap 'echo done' EXIT",
        "trap - EXIT",
    ],
)
def test_their_look_alikes_stay_allowed(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == ALLOWED, command


def test_a_file_moved_out_or_compressed_masks_no_credential_read(workspace: Path) -> None:
    # a `delete:` target is warned by a rule placed before the credential rule: these are left
    # to the effect inspection, so the read in the same command stays denied
    assert safety_in("mv app/main.py /tmp/ && cat .env", workspace) == SECRET
    assert safety_in("gzip .env", workspace) == SECRET
    assert safety_in("gzip app/main.py; cat .env", workspace) == SECRET


@pytest.mark.parametrize(
    "command",
    [
        "a=(.env); cat ${a[0]}",
        "a=(x .env); cat ${a[1]}",
        'a=(x .env); cat "${a[@]}"',
        "a+=(.env); cat ${a[-1]}",
        "declare -a a=(app .env); cat ${a[*]}",
        'a=($(echo .env)); cat "${a[@]}"',
        "cat ${HOME:+.env}",
        "cat ${UNSET_HERE+.env}",
        "cat .e$(:)nv",
        "cat .e$(true)nv",
        "trap 'cat .env' EXIT",
        "trap -- 'cat .env' EXIT",
        'set -- .env; cat "$@"',
        "set -- x .env; shift; cat $1",
        "set -- x y .env; shift 2; cat $*",
        "readarray -t a <<< .env; cat ${a[0]}",
        "mapfile -t < <(echo .env); cat ${MAPFILE[0]}",
        "python -c \"print(open('.e'+'nv').read())\"",
        "python -c \"print(open(chr(46)+'env').read())\"",
        "python -c \"print(open('.' + 'e' + \\\"nv\\\").read())\"",
        "node -e \"require('fs').readFileSync(String.fromCharCode(46, 101)+'nv')\"",
    ],
)
def test_names_put_together_by_expansion_or_code_are_read(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == SECRET, command


@pytest.mark.parametrize(
    "command",
    [
        'a=(app/main.py app.js); cat "${a[@]}"',
        'set -- app/main.py .env; shift 2; cat app.js "$@"',
        'set -- a b; echo "$@"',
        "echo ${VERBOSE:+--verbose}",
        "x=; cat app/main.py ${x:+.env}",
        "python -c \"print('cat .e' + 'nv')\"",
        "python -c \"print('a' + 'b')\"",
    ],
)
def test_their_ordinary_forms_stay_allowed(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == ALLOWED, command


def test_code_paths_keep_joined_text_that_is_no_name_out() -> None:
    assert ".env" in code_paths("open('.e' + 'nv')")
    assert ".env" in code_paths("load_dotenv()")
    assert ".env" not in code_paths("print('cat .e' + 'nv')")
