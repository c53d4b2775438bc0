"""A workspace script file an interpreter runs is judged as the ``-c`` text it is
(:mod:`pytest_harness_audit.policy.shell.program_files`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.gate.store_guard import StoreGuard
from pytest_harness_audit.policy.shell import read_command
from pytest_harness_audit.policy.shell.expand import SCRIPT_FILE_LIMIT
from pytest_harness_audit.policy.shell.program_files import program_text
from pytest_harness_audit.policy.targets import all_targets

FILES = {
    "clean.py": "import shutil\nshutil.rmtree('app')\n",
    "tools/__init__.py": "",
    "tools/clean.py": "from shutil import rmtree\n\nrmtree('app')\n",
    "hidden.py": "exec(\"import shutil; shutil.rmtree('app')\")\n",
    "clean.js": "const fs = require('fs')\nfs.rmSync('app', {recursive: true, force: true})\n",
    "clean.rb": "require 'fileutils'\nFileUtils.rm_rf 'app'\n",
    "clean.pl": "use File::Path qw(rmtree);\nrmtree('app');\n",
    "shebang": "#!/usr/bin/env python3\nimport shutil\nshutil.rmtree('app')\n",
    "one.py": "import os\nos.remove('app/a.py')\n",
    "one.js": "require('fs').unlinkSync('app/a.py')\n",
    "manage.py": (
        "#!/usr/bin/env python\nimport os\nimport sys\n\n\ndef main():\n"
        "    os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'app.settings')\n"
        "    from django.core.management import execute_from_command_line\n"
        "    execute_from_command_line(sys.argv)\n\n\nif __name__ == '__main__':\n    main()\n"
    ),
    "server.js": (
        "const http = require('http')\n// serves the app; nothing is removed\n"
        "http.createServer((req, res) => res.end('ok')).listen(8080)\n"
    ),
    "main.js": "const path = require('path')\nconsole.log(path.join(__dirname, 'app'))\n",
    "hint.py": (
        "# rmtree would remove the build folder; this only says so\n"
        "print('call shutil.rmtree to clean up')\nprint(\"os.remove or unlink: \" + 'rmtree')\n"
    ),
    "hint.js": "console.log('fs.rmSync with recursive removes a folder') /* rmSync */\n",
    "app/a.py": "print(1)\n",
    "clean.ts": "import fs from 'node:fs'\nfs.rmSync('app', {recursive: true})\n",
    "inline.sh": "set -e\npython3 -c \"import shutil; shutil.rmtree('app')\"\n",
    "runs.sh": "echo cleaning\npython3 clean.py\n",
    "outer.sh": "bash inline.sh\n",
    "ok.sh": "python3 -c 'print(1)'\nnode -e 'console.log(1)'\necho rmtree\n",
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workspace = secret_workspace(tmp_path_factory.mktemp("programs"), FILES, ("app",))
    (workspace / "shebang").chmod(0o755)
    return workspace


@pytest.mark.parametrize(
    "command",
    [
        "python3 clean.py",
        "python clean.py --verbose",
        "python3 -u clean.py",
        "python3 -m tools.clean",
        "python3 hidden.py",
        "node clean.js",
        "ruby clean.rb",
        "perl clean.pl",
        "./shebang",
        "cd tools && python3 clean.py",
        "sudo -u nobody python3 clean.py",
        "python3 -mtools.clean",
        "bun clean.ts",
        "bun run clean.ts",
        "deno clean.ts",
        # the program text in a shell script file a command runs
        "bash inline.sh",
        ". ./inline.sh",
        "sh runs.sh",
        "bash outer.sh",
        "printf 'import shutil\\nshutil.rmtree(\"app\")' > gone.py && python3 gone.py",
    ],
)
def test_a_recursive_deletion_in_a_script_file_is_denied(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("deny", "deny-destructive-commands")


@pytest.mark.parametrize("command", ["python3 one.py", "node one.js"])
def test_a_file_removed_by_a_script_file_is_flagged(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("warn", "warn-file-delete")


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        ("python manage.py test", ("allow", None)),
        ("python -m pytest", ("allow", None)),
        ("python3 -m pytest -q tests", ("allow", None)),
        ("node server.js", ("warn", "warn-network")),  # as before: a server is network
        ("node main.js", ("allow", None)),
        ("python3 hint.py", ("allow", None)),
        ("node hint.js", ("allow", None)),
        ("python3 -c 'print(1)' clean.py", ("allow", None)),
        ("cat clean.py", ("allow", None)),
        ("python3 -m json.tool clean.json", ("allow", None)),
        ("sh ok.sh", ("allow", None)),
        ("python3 -m", ("allow", None)),
    ],
)
def test_ordinary_script_files_keep_their_verdict(
    root: Path, command: str, verdict: tuple[str, str | None]
) -> None:
    assert safety_in(command, root) == verdict


def test_only_a_file_of_the_workspace_is_read(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "clean.py"
    outside.write_text(FILES["clean.py"], encoding="utf-8")
    assert safety_in(f"python3 {outside}", root) == ("allow", None)
    assert safety_in("python3 ../clean.py", root) == ("allow", None)
    large = root / "large.py"
    large.write_text("x = 1\n" * (SCRIPT_FILE_LIMIT // 6 + 1) + FILES["clean.py"])
    try:  # too large to read: unreadable, so warned, never read past the bound
        assert safety_in("python3 large.py", root) == ("warn", "unreadable-command")
    finally:
        large.unlink()


def test_the_file_is_recorded_as_its_inline_code(root: Path) -> None:
    commands = read_command("python3 clean.py", str(root)).commands
    assert ["python3", "-c", "import shutil\nshutil.rmtree('')\n"] in commands
    assert ["ruby", "-e", FILES["clean.rb"]] in read_command("ruby clean.rb", str(root)).commands


def test_store_names_built_in_a_script_file_are_out_of_reach(tmp_path: Path) -> None:
    workspace = secret_workspace(
        tmp_path,
        {
            "wipe.py": "import shutil\nshutil.rmtree('.harness' + '-audit')\n",
            "wipe.js": "require('fs').rmSync(['.harness', 'audit'].join('-'), {recursive: 1})\n",
            "keep.py": "print('.harness-audit holds the chain')\n",
        },
    )
    store = workspace / ".harness-audit"
    (store / "audit").mkdir(parents=True)
    guard = StoreGuard(store, str(workspace))
    for command in ("python3 wipe.py", "node wipe.js"):
        targets = all_targets({"command": command}, str(workspace))
        assert guard.offending(targets, {"command": command}) is not None, command


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("print('rmtree')\n", "python", "print('')\n"),
        ("x = 1  # rmtree\n", "python", "x = 1  #\n"),
        ('s = """a\nshutil.rmtree\n"""\n', "python", 's = """"""\n'),
        ("exec('shutil.rmtree(p)')", "python", "exec('shutil.rmtree(p)')"),
        ("f'{shutil.rmtree(p)}'", "python", "f'{shutil.rmtree(p)}'"),
        ("s = 'it\\'s'; rmtree(p)", "python", "s = ''; rmtree(p)"),
        ("a = '#'; rmtree(p)", "python", "a = ''; rmtree(p)"),
        ("log('x') // rmSync\n", "js", "log('') //\n"),
        ("/* rmSync */ f()", "js", "/**/ f()"),
        ("`${fs.rmSync(p)}`", "js", "`${fs.rmSync(p)}`"),
        # a regex literal read as a string: the parts that may be code are kept
        ("x = /'/; fs.rmSync('a'); y = /'/", "js", "x = /'/; fs.rmSync('a'); y = /'/"),
        ("puts 'rm_rf'", "ruby", "puts ''"),
        ("puts 'rm_rf' + x", "ruby", "puts 'rm_rf' + x"),
        # a quote reused inside an f-string (Python 3.12) opens a string the scanner misreads:
        # what it holds is kept when it may be code
        (
            "a = f\"{d['''\"''']}\"\nfrom shutil import rmtree as r\nb = 1  # '''\nr('app')\n",
            "python",
            "a = f\"\"''']}\"\nfrom shutil import rmtree as r\nb = 1  # '''\nr('')\n",
        ),
        ("print('x = shutil.rmtree')", "python", "print('')"),
        ("exec('x = shutil.rmtree')", "python", "exec('x = shutil.rmtree')"),
        ("'unclosed\nrmtree(p)", "python", "'\nrmtree(p)"),
    ],
)
def test_strings_and_comments_without_a_call_are_blanked(
    text: str, language: str, expected: str
) -> None:
    assert program_text(text, language) == expected
