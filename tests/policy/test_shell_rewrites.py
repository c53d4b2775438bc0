"""A command that rewrites workspace files with a text the reading cannot know makes the files
the same command runs afterwards unknown: judged on the old text, they would be a lie."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, UNREADABLE, safety_in, secret_workspace

from pytest_harness_audit.policy.shell.rewrites import rewrites_tree, writes_files

FILES = {
    "tidy.sh": "echo tidy\n",
    "gen.py": "open('tidy.sh', 'w').write('cat .e' + 'nv')\n",
    "app.py": "import helper\nopen('app.log', 'a').write('started')\nhelper.run()\n",
    "helper.py": "def run():\n    print('ok')\n",
    "p.diff": "--- a/tidy.sh\n+++ b/tidy.sh\n@@ -1 +1 @@\n-echo tidy\n+cat .env\n",
    "Makefile": "all:\n\tpython gen.py\n\tsh tidy.sh\n",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return secret_workspace(tmp_path, FILES)


@pytest.mark.parametrize(
    "command",
    [
        "git apply p.diff && sh tidy.sh",
        "git stash pop && sh tidy.sh",
        "git stash && ./tidy.sh",
        "git merge feature && sh tidy.sh",
        "git -C . rebase main; sh tidy.sh",
        "git checkout main && sh tidy.sh",
        "git switch main && sh tidy.sh",
        "git cherry-pick abc123 && sh tidy.sh",
        "git restore --source=HEAD~3 tidy.sh; sh tidy.sh",
        "patch -p1 < p.diff && sh tidy.sh",
        "tar xf tools.tar && sh tidy.sh",
        "tar -xzf tools.tgz; bash tidy.sh",
        "unzip -o tools.zip && sh tidy.sh",
        "cp -r template/. . && sh tidy.sh",
        "rsync -a template/ ./ && sh tidy.sh",
        "gawk -i inplace '{print}' tidy.sh && sh tidy.sh",
        "python gen.py && sh tidy.sh",
        "python3 gen.py; ./tidy.sh",
        "node -e \"require('fs').writeFileSync('tidy.sh', 'x')\" && sh tidy.sh",
        "make",
    ],
)
def test_a_file_run_after_a_rewrite_is_unknown(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == UNREADABLE, command


@pytest.mark.parametrize(
    "command",
    [
        "git checkout -b feature && sh tidy.sh",
        "git switch -c feature && sh tidy.sh",
        "git stash list && sh tidy.sh",
        "git apply --check p.diff && sh tidy.sh",
        "patch --dry-run -p1 < p.diff && sh tidy.sh",
        "tar tzf tools.tgz && sh tidy.sh",
        "unzip -l tools.zip && sh tidy.sh",
        "git status && sh tidy.sh",
        "sh tidy.sh && git stash pop",
        "python app.py",  # writes a log and imports a helper: its own imports are read
        "python gen.py",
        "cp tidy.sh backup.sh && sh backup.sh",
    ],
)
def test_what_changes_no_file_run_later_stays_allowed(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == ALLOWED, command


def test_a_file_written_with_a_known_text_after_the_rewrite_is_read(workspace: Path) -> None:
    command = "git stash pop && echo 'rm -rf build' > s.sh && sh s.sh"
    assert safety_in(command, workspace)[0] == "deny"


def test_what_counts_as_a_rewrite() -> None:
    assert rewrites_tree("git", ["-c", "a=b", "checkout", "main"])
    assert not rewrites_tree("git", ["checkout", "-b", "new"])
    assert rewrites_tree("git", ["checkout", "-b", "new", "origin/main"])
    assert rewrites_tree("git", ["reset", "--hard"]) and not rewrites_tree("git", ["reset", "x"])
    assert rewrites_tree("tar", ["xf", "a.tar"]) and not rewrites_tree("tar", ["czf", "a", "."])
    assert rewrites_tree("gzip", ["-d", "a.gz"]) and not rewrites_tree("gzip", ["a"])
    assert not rewrites_tree("ls", ["-la"])
    assert writes_files("with open(path, mode='w') as f: f.write(x)")
    assert writes_files("fs.promises.writeFile('x', y)")
    assert not writes_files("with open(path) as f: print(f.read())")
    assert not writes_files("open('config.json', 'r')")
