"""More forms of git and npm that run or read something: git options whose value is a command,
``commit -F FILE``, configuration files read as git reads them, npm spellings and local
dependencies by path, node's data URLs, env files and test reporters."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

COPY = "cp .env /tmp/x"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = secret_workspace(
        tmp_path,
        {
            "evil.sh": f"#!/bin/sh\n{COPY}\n",
            "reporter.mjs": "import fs from 'fs'; fs.copyFileSync('.env', '/tmp/x')\n",
            "package.json": json.dumps(
                {"scripts": {"test": COPY, "build": "tsc"}, "dependencies": {"x": "./vendor/x"}}
            ),
            "vendor/x/package.json": json.dumps({"scripts": {"postinstall": "rm -rf ../../app"}}),
        },
        ("app",),
    )
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    return workspace


def _config(root: Path, text: str) -> None:
    path = root / ".git" / "config"
    path.write_text(path.read_text() + text)


@pytest.mark.parametrize(
    "command",
    [
        f"git fetch --upload-pack='{COPY}' .",
        f"git ls-remote --upl='{COPY}' .",
        f"git clone -u '{COPY}' . /tmp/y",
        f"git push --receive-pack='{COPY}' .",
        f"git archive --remote=. --exec='{COPY}' HEAD",
        f"git difftool -x '{COPY}' HEAD",
        f"git difftool --extcmd='{COPY}' HEAD",
        f"git grep -O'{COPY}' foo",
        "git commit -F .env",
        "git commit --file=.env",
        "npm --depth 0 test",
        "npm --color always test",
        "npm tes",
        "npm run-scrip test",
        "npm runScript test",
        "node --env-file=.env -e 1",
        'node --import=\'data:text/javascript,import fs from "fs"; fs.readFileSync(".env")\' x.js',
        "node --test --test-reporter=./reporter.mjs",
    ],
)
def test_the_form_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("deny", "deny-secret-files")


def test_a_dependency_by_path_runs_its_install_scripts(root: Path) -> None:
    assert safety_in("npm install", root) == ("deny", "deny-destructive-commands")


@pytest.mark.parametrize(
    "entry",
    [
        "[core]\n\tfsmonitor = sh \\\n ./evil.sh\n",  # a value continued on the next line
        '[man "x"]\n\tpath = ./evil.sh\n',
    ],
)
def test_configuration_read_as_git_reads_it(root: Path, entry: str) -> None:
    _config(root, entry)
    command = "git help -m x" if "man" in entry else "git status"
    assert safety_in(command, root) == ("deny", "deny-secret-files")


def test_a_byte_order_mark_does_not_hide_the_configuration(root: Path) -> None:
    path = root / ".git" / "config"
    path.write_text("\ufeff" + path.read_text() + "[core]\n\tfsmonitor = ./evil.sh\n")
    assert safety_in("git status", root) == ("deny", "deny-secret-files")


def test_a_lone_carriage_return_does_not_end_a_comment(root: Path) -> None:
    _config(root, "# note\r[alias]\r\tstatus = !./evil.sh\n")
    assert safety_in("git status", root) == ("allow", None)


def test_includes_that_fan_out_are_unreadable_not_slow(root: Path) -> None:
    _config(root, "".join(f"[include]\n\tpath = inc{i}.cfg\n" for i in range(40)))
    for i in range(40):
        links = "".join(f"[include]\n\tpath = inc{j}.cfg\n" for j in range(40))
        (root / ".git" / f"inc{i}.cfg").write_text(links)
    assert safety_in("git status", root) == ("warn", "unreadable-command")


@pytest.mark.parametrize(
    "command",
    [
        "git commit -F msg.txt",
        "git commit -m 'fix .env loading'",
        "git grep -n TODO",
        "git difftool -y HEAD~1",
        "npm run build",
        "npm --omit dev run build",
        "npm ls --depth 0",
        "node --test",
        "ssh -i ~/.ssh/id_ed25519 host uptime",
        "scp -i deploy.pem dist.tgz host:",
    ],
)
def test_benign_forms_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root)[0] in ("allow", "warn")
    assert safety_in(command, root)[1] in (None, "warn-network")


def test_an_ssh_key_in_the_repository_configuration_is_no_secret_read(root: Path) -> None:
    _config(root, "[core]\n\tsshCommand = ssh -i ~/.ssh/id_ed25519\n")
    assert safety_in("git push", root) == ("warn", "warn-network")
