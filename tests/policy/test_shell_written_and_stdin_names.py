"""Names a listing hands on by ways of writing files other than ``>``/``tee``/``cp`` (``dd
of=FILE``, ``sort -o FILE``, ``uniq IN OUT``, ``shuf -o FILE``), then read back in the same
command, and names a script handed to a shell reads from its standard input through a command
substitution (``ls -a | sh -c 'cat $(head -1)'``) or ``read``. Judged through the ``safety``
preset in a workspace holding a ``.env`` after another dotfile; each has benign look-alikes."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET, safety_in, secret_workspace

from pytest_harness_audit.gate.store_guard import StoreGuard
from pytest_harness_audit.policy.targets import all_targets


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with a ``.env`` sorted after another dotfile, and project files."""
    files = {
        ".aaa": "x\n",
        "README.md": "hello\n",
        "app/main.py": "print('hi')\n",
        "in.txt": "b\na\n",
        "a.img": "x\n",
    }
    return secret_workspace(tmp_path, files)


# -- 4. names written by dd, sort -o, uniq, shuf -o and read back ------------------------------

WRITTEN = [
    "ls -a | sort -o /tmp/l; xargs cat < /tmp/l",
    "ls -a | sort -o/tmp/l; xargs cat < /tmp/l",
    "ls -a | sort --output=/tmp/l; xargs cat < /tmp/l",
    "ls -a | sort -r -o /tmp/l; xargs -a /tmp/l cat",
    "ls -a > /tmp/k; sort -o /tmp/l /tmp/k; xargs cat < /tmp/l",
    "ls -a > /tmp/k; sort /tmp/k -o /tmp/l; cat $(cat /tmp/l)",
    "ls -a | dd of=/tmp/l; xargs cat < /tmp/l",
    "ls -a | dd of=/tmp/l status=none; xargs cat < /tmp/l",
    "ls -a > /tmp/k; dd if=/tmp/k of=/tmp/l; xargs cat < /tmp/l",
    'ls -a | awk 1 | dd of=/tmp/l 2>/dev/null; while read f; do cat "$f"; done < /tmp/l',
    "ls -a | uniq - /tmp/l; xargs cat < /tmp/l",
    "ls -a > /tmp/k; uniq /tmp/k /tmp/l; xargs cat < /tmp/l",
    "ls -a | shuf -o /tmp/l; xargs cat < /tmp/l",
    "ls -a | tee -a /tmp/l >/dev/null; xargs cat < /tmp/l",
    "ls -a > /tmp/k; install /tmp/k /tmp/l; xargs cat < /tmp/l",
    "ls -a | cp /dev/stdin /tmp/l; xargs cat < /tmp/l",
    "ls -a | sort -o /tmp/l; sh -c 'xargs cat' < /tmp/l",
    "ls -a | dd of=/tmp/l bs=1M; xargs cat < /tmp/l",
    "ls -a | dd of=/tmp/l conv=notrunc; cat $(cat /tmp/l)",
    "ls -a | sort -u -o /tmp/l -; xargs cat < /tmp/l",
    "ls -a | sort -mo /tmp/l; xargs cat < /tmp/l",
    "ls -a | sort -o /tmp/l /dev/stdin; xargs cat < /tmp/l",
    "ls -a | install /dev/stdin /tmp/l; xargs cat < /tmp/l",
    "ls -a | sort -o /tmp/l; mv /tmp/l /tmp/m; xargs cat < /tmp/m",
    "ls -a | tee /tmp/k | sort -o /tmp/l; xargs cat < /tmp/l",
    "ls -a | sort -o /tmp/l; parallel cat :::: /tmp/l",
    "echo 'cat .env' | dd of=s.sh; sh s.sh",
    "echo 'cat .env' | sort -o s.sh; sh s.sh",
]
BENIGN_WRITTEN = [
    "sort -o out.txt in.txt",
    "sort in.txt -o out.txt; cat out.txt",
    "dd if=a.img of=b.img",
    "dd if=a.img of=b.img bs=4k; wc -c b.img",
    "ls | sort -o /tmp/l; xargs cat < /tmp/l",
    "ls -a | sort -o /tmp/l; wc -l /tmp/l",
    "ls | dd of=/tmp/l; xargs wc -l < /tmp/l",
    "uniq in.txt out.txt",
    "echo README.md | sort -o /tmp/l; xargs cat < /tmp/l",
    "echo hi | dd of=s.sh; sh s.sh",
    "sort -k2 -t, -o out.csv in.txt",
    "shuf -n 1 -e a b c",
]
WIPES = [
    "dd if=/dev/zero of=app/main.py",
    "dd if=/dev/urandom of=app/main.py bs=1k count=1",
    "dd of=app/main.py < /dev/zero",
    "dd of=app/main.py bs=1k count=1 < /dev/urandom",
]


@pytest.mark.parametrize("command", WRITTEN)
def test_names_written_by_other_writers_reach_the_reader(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == SECRET


@pytest.mark.parametrize("command", BENIGN_WRITTEN)
def test_benign_writes_stay_allowed(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == ALLOWED


@pytest.mark.parametrize("command", WIPES)
def test_dd_of_a_file_from_zeros_destroys_it(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == DESTROYS


@pytest.mark.parametrize(
    "command", ["sort -o SOUL.md in.txt", "ls | sort -o SOUL.md", "shuf -o SOUL.md in.txt"]
)
def test_sort_output_is_a_write(workspace: Path, command: str) -> None:
    # a persona file written by any means is denied as destructive (as `cp x SOUL.md` is)
    assert safety_in(command, workspace) == DESTROYS


# -- 5. a script's standard input read through a substitution or `read` ----------------------

STDIN_SUBSTITUTIONS = [
    "ls -a | sh -c 'cat $(head -1)'",
    "ls -a | sh -c 'cat $(head -n1)'",
    "ls -a | sh -c 'cat $(head -n 1)'",
    "ls -a | sh -c 'cat \"$(head -n1)\"'",
    "ls -a | sh -c 'cat $(tail -1)'",
    "ls -a | sh -c 'cat $(grep env)'",
    "ls -a | sh -c 'cat $(grep -m1 env)'",
    "ls -a | sh -c 'cat $(sed -n 3p)'",
    "ls -a | sh -c 'cat $(awk \"NR==3\")'",
    "ls -a | sh -c 'cat $(sort | head -1)'",
    "ls -a | sh -c 'cat $(tail -n +3 | head -1)'",
    "ls -a | sh -c 'cat $(head -1 /dev/stdin)'",
    "ls -a | sh -c 'cat $(head -1 -)'",
    "ls -a | sh -c 'f=$(head -1); cat $f'",
    "ls -a | bash -c 'f=$(grep env); base64 \"$f\"'",
    "ls -a | sh -c 'cat $(cut -c1-)'",
    "ls -a | sh -c 'cat `head -1`'",
    "ls -a | sh -c 'read f; cat \"$f\"'",
    "ls -a | sh -c 'read -r f; cat \"$f\"'",
    "ls -a | sh -c 'IFS= read -r f; cat \"$f\"'",
    "ls -a | sh -c 'read a; read b; read c; read d; cat \"$d\"'",
    "ls -a | sh -c 'cat $(xargs)'",
    "ls -a | sh -c 'cat $(xargs -n1 | sed -n 4p)'",
    "ls -a | sh -c 'cat $(sort -r)'",
    "ls -a | sh -c 'cat $(nl -ba | cut -f2)'",
    "ls -a | sh -c 'exec cat $(head -1)'",
    "ls -a | sh -c 'eval cat $(head -1)'",
    "ls -a | sh -c 'sh -c \"cat \\$(head -1)\"'",
    "ls -a | sh -c 'cp $(head -1) /tmp/x'",
    "ls -a | sh -c 'f=`sed -n 4p`; cat $f'",
    "ls -a | bash -c 'cat $(dd bs=1 count=5 2>/dev/null)'",
    "ls -a | sh -c 'cat $(head -1 2>/dev/null)'",
    "cat $(echo .env 2>/dev/null)",
    "ls -a | bash -c 'cat $(perl -ne \"print if 4..4\")'",
    "ls -a | bash -c 'read -r f < /dev/stdin; cat \"$f\"'",
    "echo .env | sh -c 'cat $(head -1)'",
    "echo .env | sh -c 'cat $(grep env)'",
    "ls -a | awk 1 | sh -c 'cat $(head -1)'",
]
BENIGN_STDIN = [
    "ls | sh -c 'read f; echo \"$f\"'",
    "ls | sh -c 'cat $(head -1)'",
    "ls -a | sh -c 'echo $(head -1)'",
    "ls -a | sh -c 'cat $(head -1 README.md)'",
    "echo README.md | sh -c 'cat $(head -1)'",
    "sh -c 'cat $(head -1 README.md)'",
    "ls -a | bash -c 'cat <(head -1)'",
    "ls -a | sh -c 'cat $(date +%F).log'",
    "ls -a | sh -c 'read a b c; cat \"$c\"'",
]


@pytest.mark.parametrize("command", STDIN_SUBSTITUTIONS)
def test_a_substitution_reading_the_scripts_input(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == SECRET


@pytest.mark.parametrize("command", BENIGN_STDIN)
def test_benign_stdin_substitutions_stay_allowed(workspace: Path, command: str) -> None:
    assert safety_in(command, workspace) == ALLOWED


# -- names separated by NUL (`xargs -0`) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("printf '.env\\0' | xargs -0 cat", SECRET),
        ("printf '%s\\0' .e?v | xargs -0 cat", SECRET),
        ("printf '%s\\0' app README.md | xargs -0 rm -rf", DESTROYS),
        ("printf '%s\\0' README.md | xargs -0 cat", ALLOWED),
        ("find . -name '*.md' -print0 | xargs -0 wc -l", ALLOWED),
    ],
)
def test_names_separated_by_nul_are_words(workspace: Path, command: str, expected: object) -> None:
    assert safety_in(command, workspace) == expected


def test_a_nul_separated_store_path_is_out_of_reach(tmp_path: Path) -> None:
    root = secret_workspace(tmp_path, {"README.md": "hello\n"})
    store = tmp_path / "audit"
    (store / "audit").mkdir(parents=True)
    guard = StoreGuard(store, str(root))
    for command in (
        "printf '%s\\0' ../* | xargs -0 rm -rf",
        "cd ..; printf '%s\\0' * | xargs -0 rm",
    ):
        assert guard.offending(all_targets({"command": command}, str(root)), {}), command
