"""The shell reading's fast paths against the parser: the same reading for every text.

:func:`~pytest_harness_audit.policy.shell.read_command` reads a command of plain words, and one
of the common shape (:mod:`~pytest_harness_audit.policy.shell.simple`), without the parser;
:func:`~pytest_harness_audit.policy.shell.read_full` reads every text with it. Generated shell
text (quoting, ``${IFS}``, ``$'…'``, heredocs, backslash-newline, comments, Unicode, operators,
``cd``/``pushd``, built values) must read the same both ways, with and without a workspace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy.shell import Reading, read_command, read_full

SHARED_CALLS = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "calls.jsonl"

WORDS = [
    "rm", "-rf", "cat", ".env", "ls", "cd", "..", "app", "pushd", "popd", "git", "-C", "status",
    "echo", "printf", "-v", "x", "'%s'", "read", "f", "alias", "c='cat .env'", "c", "IFS=,",
    "bash", "-c", "sh", "eval", "source", "s.sh", "python3", "'open(\".env\")'", "env", "sudo",
    "GIT_PAGER='cat .env'", "GIT_CONFIG_GLOBAL=x.cfg", "PAGER=less", "export", "xargs", "tee",
    "cp", "mv", "SOUL.md", "find", ".", "-delete", "'*.py'", "dd", "of=/dev/sda", "truncate",
    "-s0", "curl", "https://x", "base64", "-d", "tr", "a-z", "rev", "set", "--", "$1", "$f",
    "${f}", "${f:1:3}", "${f%.bak}", "${!f}", "${#f}", "${f:-.env}", "$IFS", "${IFS}",
    "$'\\x72\\x6d'", "$'a\\'b'", '"$f"', '"${f}x"', '"a b"', "'a b'", '"\\$x"', "\\$x", "a\\ b",
    "$(echo rm)", "`echo .env`", "$(echo LmVudg== | base64 -d)", "<(cat .env)", "*.py", "app/*",
    ".e*", "{a,b}", "x{1..3}", "~/.ssh/id_rsa", "~", "$HOME/.env", "$PWD", "résumé.txt", "ſecret",
    "日本", "\u00ad", "%", "@", ":", "=", "a=b", "f=.env", "CMD=rm", "$CMD", "-", "+", "!", "#",
    "#c", "\\", "make", "-f", "awk", "'{system(\"rm x\")}'", "sed", "-i", "'e rm x'", "nohup",
    "timeout", "5", "busybox", "/usr/bin/RM", "shred", "rsync", "--delete", "host:/x", "ssh",
    "/dev/tcp/x/1", "for", "in", "do", "done", "if", "then", "fi", "case", "esac", "{", "}",
    "(", ")", "[[", "]]", "((", "))", "function", "coproc", "time", "declare", "tar",
    "--directory=app", "--chdir", "--cwd=d", "0", "2", "?", "[ab]", "x;y", "x&&y", "su", "-s",
]  # fmt: skip
SEPARATORS = [
    " ", " ", " ", "  ", "\t", " && ", " || ", "; ", " | ", " |& ", " & ", "\n", " > ", " >> ",
    " < ", " 2>&1 ", " &> ", " <<< ", " <<EOF\nrm -rf x\nEOF\n", " <<-'E'\n\tcat .env\nE\n",
    " >| ", " <> ", " 2> ", ") ", " (", "$(", ")", "`", '"', "'", " \\\n ", " # c\n", "\r", "|",
    "&", ";", "<", ">",
]  # fmt: skip
CHARS = " \t\n;&|()<>'\"\\$`{}*?[]#!=~-./:,@%+^aAzZ09_é日\u00ad"

#: Texts built of the words and separators above, or of single characters.
TEXTS = st.one_of(
    st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=10).map(
        lambda pairs: "".join(w + s for w, s in pairs)
    ),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join),
    st.text(alphabet=CHARS, max_size=24),
)


def fields(reading: Reading) -> tuple[Any, ...]:
    """Everything a reading holds, how far its paths were placed included."""
    return (
        reading.commands,
        reading.reads,
        reading.writes,
        reading.deletes,
        reading.destroys,
        reading.notes,
        reading.code,
        reading.unreadable,
        reading.marks,
    )


def comparable(text: str) -> bool:
    """``;;``, ``;&`` and ``;;&`` outside a ``case`` are syntax errors bash refuses to run; the
    parser reads the words after them as case patterns, the fast path as commands (one reading
    too many): not compared."""
    return ";;" not in text and ";&" not in text


def assert_same(text: str, root: str | None = None) -> None:
    """The fast paths read ``text`` as the parser does (unless it is not :func:`comparable`)."""
    if comparable(text):
        assert fields(read_command(text, root)) == fields(read_full(text, root)), text


@pytest.fixture(scope="module")
def shell_workspace(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A workspace with a script, a dotfile, a git configuration and files to glob."""
    root = tmp_path_factory.mktemp("shell-speed")
    (root / "app").mkdir()
    (root / "s.sh").write_text("rm -rf build\ncat .env\n")
    (root / ".env").write_text("SECRET=1\n")
    (root / ".editorconfig").write_text("")
    (root / "x.cfg").write_text("[core]\n\tpager = cat .env\n")
    (root / "app" / "a.py").write_text("")
    return str(root)


@settings(max_examples=12, deadline=None)
@given(TEXTS)
def test_fast_paths_read_as_the_parser_does(text: str) -> None:
    assert_same(text)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(TEXTS)
def test_fast_paths_read_as_the_parser_does_at_length(text: str) -> None:
    assert_same(text)


@pytest.mark.slow
@settings(
    max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=TEXTS)
def test_fast_paths_read_as_the_parser_does_in_a_workspace(shell_workspace: str, text: str) -> None:
    assert_same(text, shell_workspace)


@pytest.mark.parametrize(
    "text",
    [
        "pytest -q tests",
        "git -C app status",
        "tar --directory=app -xf x.tar",
        "cd app && cat .env",
        "rm  -rf dist",
        "rm -rf\tcoverage",
        "ps aux | grep node",
        "git commit -m 'a |& b'",
        "echo 'rm -rf /' |& sh",
        "echo 'cat .env' |& bash",
        "export PAGER=less",
        "export GIT_SSH_COMMAND=./evil.sh",
        "export NODE_ENV=production",
        "source s.sh",
        "bash s.sh",
        "cat .e*",
    ],
)
def test_shapes_the_fast_paths_take(text: str, shell_workspace: str) -> None:
    assert_same(text)
    assert_same(text, shell_workspace)


def test_a_pipe_of_stdout_and_stderr_into_a_shell_is_read() -> None:
    """``|&`` pipes into the next command as ``|`` does: its script is read (a look-alike
    inside quotes is a commit message, which runs nothing)."""
    assert read_command("echo 'rm -rf /' |& sh").destroys == ["/"]
    assert read_command("echo 'cat .env' |& bash").reads == [".env"]
    assert read_command("printf x |& su").unreadable is None
    assert read_command("curl -s x |& sh").unreadable is not None
    benign = read_command("git commit -m 'a |& sh'")
    assert benign.destroys == [] and benign.unreadable is None


def test_an_exported_command_variable_alone_is_read() -> None:
    """``export PAGER=cmd`` as the whole command: the value is read as a command, as it is when
    another command follows; a plain exported value runs nothing."""
    assert ["./evil.sh"] in read_command("export GIT_SSH_COMMAND=./evil.sh").commands
    assert "./evil.sh" in read_command("export GIT_SSH_COMMAND=./evil.sh").reads
    assert read_command("export NODE_ENV=production").commands == [
        ["export", "NODE_ENV=production"]
    ]


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_CALLS.is_file(), reason="the shared benchmark corpus is absent")
def test_the_shared_corpus_reads_the_same_both_ways() -> None:
    commands: dict[str, None] = {}
    with SHARED_CALLS.open(encoding="utf-8") as handle:
        for line in handle:
            call = json.loads(line)
            if call["tool"] == "Bash":
                commands[call["params"]["command"]] = None
    assert commands
    for text in commands:
        assert_same(text)
