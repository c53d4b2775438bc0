"""Searches that print no matched line (names, counts, an exit status) read the credential files
their patterns may match: ``grep -rc 'API_KEY=s' .`` tells one character of the secret."""

from __future__ import annotations

import os

import pytest
from policy_support import ALLOWED, SECRET, safety_in, secret_workspace

from pytest_harness_audit.policy.shell.search_oracles import (
    filter_hides_lines,
    hides_lines,
)

FILES = {
    "src/app.py": "import os\n# TODO: tidy\nprint(os.environ['API_KEY'])\n",
    "README.md": "# demo\nTODO list\n",
}


@pytest.fixture
def workspace(tmp_path):
    return secret_workspace(tmp_path, FILES)


@pytest.mark.parametrize(
    "command",
    [
        "grep -rc 'API_KEY=sk' .",
        "grep -rl API_KEY=sk .",
        "grep -rL 'API_KEY=sk-test-0' .",
        "grep -rq 'API_KEY=sk-t' . && echo yes",
        "if grep -rq 'KEY=sk' .; then echo y; fi",
        "grep --recursive --count KEY=s .",
        "grep -r --files-with-matches KEY=s .",
        "grep -r --cou KEY=s .",  # an abbreviated long option
        "grep -rci 'api_key=SK' .",
        "grep -rcF 'KEY=sk-' .",
        "fgrep -rc 'KEY=sk-' .",
        "grep -rc -e nothing -e 'KEY=s' .",
        "grep -rc --regexp=KEY=s .",
        "grep -rcE 'KEY=s[a-z]' .",  # a bracket: not analysed, so it may match
        "grep -rc 'KEY=s\\(k\\)' .",
        "grep -rcv TODO .",  # inverted: matches almost any file
        "grep -r 'KEY=s' . | wc -l",
        "grep -rh 'KEY=s' . | wc -c",
        "grep -rh 'KEY=s' . | sort | wc -l",
        "grep -rh 'KEY=s' . | head -c 1",
        "grep -rh 'KEY=s' . | grep -c sk",
        "grep -rh 'KEY=s' . | grep -q sk && echo y",
        "rg --hidden -c KEY=s",
        "rg --hidden -l KEY=s .",
        "rg -uu --count-matches KEY=s",
        "rg --hidden -q KEY=s && echo y",
        "ag --hidden -c KEY=s",
        "ag --hidden -l KEY=s .",
        "diff -rq . /tmp/guess",
        "grep -r 'KEY=sk.test' . | wc -l",
        "rg --hidden -r '' KEY=s",  # every match replaced: the rest of the line is cut up
        "ack -c KEY=s",
        "ack -l 'KEY=sk' .",
        "git grep --no-index -c KEY=s",
        "git grep --untracked -l KEY=s",
        "git grep --untracked --name-only -e KEY=s",
        "git -C src grep --no-index -q KEY=s .. && echo y",
        "git grep --no-index KEY=s | base64",
        "grep -rc KEY=s . --exclude=x.log --include='*.py'",  # first filter an exclude: searched
        "grep -rc KEY=s . --include='*.py' --include='.e*'",
        "rg --hidden -c KEY=s -g '!*.py'",
        "rg --hidden -c KEY=s --iglob '*.ENV'",
        "rg --hidden --files-with-matches KEY=s",  # no folder: the pattern is not one
        "grep -r --files-with-matches KEY=s",
    ],
)
def test_a_search_that_tells_only_whether_the_secret_matched_is_a_read(workspace, command):
    assert safety_in(command, workspace) == SECRET


@pytest.mark.parametrize(
    "command",
    [
        "grep -rc TODO .",  # .env holds no `todo`: the count says nothing of it
        "grep -rl 'def main' .",
        "grep -rq TODO . && echo yes",
        "grep -rn TODO . | wc -l",
        "grep -rn TODO . | grep -v test | wc -l",
        "grep -rh 'KEY=zz' . | wc -l",  # a literal the secret file does not hold
        "grep -rc --exclude=.env 'KEY=s' .",
        "grep -rc 'KEY=s' src",  # a folder without the secret file
        "rg -c KEY=s",  # rg skips hidden files unless told otherwise
        "grep -r KEY .",  # printed lines: the output scan finds the secret
        "grep -rn 'KEY=s' . | head",
        "grep -c TODO README.md",
        "ack -c TODO",
        "git grep -c KEY=s",  # tracked files only: the untracked .env is not searched
        "git grep --no-index -c TODO",
        "git grep --no-index KEY",  # printed lines: the output scan finds the secret
        "grep -rc KEY=s --include='*.py' .",  # only Python files are opened
        "grep -rc KEY=s . --include '*.py' --exclude=x.log",
        "grep -r KEY=s --include='*.py' . > /tmp/found",
        "rg --hidden -c KEY=s -g '*.py'",
    ],
)
def test_benign_counts_and_lists_stay_allowed(workspace, command):
    assert safety_in(command, workspace) == ALLOWED


def test_a_hit_on_the_secret_file_only_is_what_counts(workspace):
    """The same count over a pattern found in the secret file and one found elsewhere."""
    assert safety_in("grep -rc API_KEY .", workspace) == SECRET
    assert safety_in("grep -rc environ .", workspace) == ALLOWED


def test_patterns_from_a_file_are_read(workspace):
    (workspace / "pats.txt").write_text("nothing\nKEY=sk\n", encoding="utf-8")
    (workspace / "none.txt").write_text("nothing\n", encoding="utf-8")
    assert safety_in("grep -rc -f pats.txt .", workspace) == SECRET
    assert safety_in("grep -rc -f none.txt .", workspace) == ALLOWED
    assert safety_in("grep -rc -f missing.txt .", workspace) == SECRET


def test_a_large_secret_file_may_match_anything(workspace):
    (workspace / ".env").write_text("X=1\n" * 300_000, encoding="utf-8")
    assert safety_in("grep -rc TODO .", workspace) == SECRET


@pytest.mark.parametrize(
    ("name", "args", "hides"),
    [
        ("grep", ["-rn", "KEY", "."], False),
        ("grep", ["-rl", "KEY", "."], True),
        ("grep", ["-e", "-lc", "."], True),  # an option's value read as options: more, not less
        ("grep", ["--files-without-match", "KEY"], True),
        ("rg", ["-c", "KEY"], True),
        ("rg", ["--json", "KEY"], False),
        ("ag", ["-L", "KEY"], True),
        ("diff", ["-rq", "a", "b"], True),
        ("diff", ["-r", "a", "b"], False),
        ("sed", ["-n", "p"], False),
    ],
)
def test_hides_lines(name, args, hides):
    assert hides_lines(name, args) is hides


@pytest.mark.parametrize(
    ("name", "args", "hides"),
    [
        ("wc", ["-l"], True),
        ("head", ["-c", "3"], True),
        ("head", ["-c3"], True),
        ("tail", ["--bytes=3"], True),
        ("head", ["-n", "3"], False),
        ("sort", ["-u"], False),
        ("grep", ["-q", "x"], True),
        ("grep", ["-v", "x"], False),
    ],
)
def test_filter_hides_lines(name, args, hides):
    assert filter_hides_lines(name, args) is hides


def test_a_fifo_in_the_secret_file_s_place_does_not_block_the_gate(workspace):
    (workspace / ".env").unlink()
    os.mkfifo(workspace / ".env")
    assert safety_in("grep -rc TODO .", workspace) == SECRET  # unknown text: it may match
