"""Bash forms that spell the env file's name at run time are read as the file they name.

Namerefs, ``${!PREFIX@}`` with indirection, parameter transformations (``${x@E}``), case changes
of some letters, slices with an empty offset, ``BASH_REMATCH``, ``$_``, substitutions the
reading can compute (``basename``, ``printf %b``, ``rev <<<``, ``tr <<<``) and POSIX bracket
classes. A part that cannot be known (``$unset``, ``$(whoami)``) makes the word the glob it
could be (``.env$unset`` is ``.env*``), for redirections too. Ordinary look-alikes stay allowed.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell.reading import read_command

SECRET = ("deny", "deny-secret-files")
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


HIDDEN = [
    'declare -n r=f; f=.env; cat "$r"',
    'typeset -n r=f; f=.env; cat "$r"',
    'declare -n a=b; declare -n b=f; f=.env; cat "$a"',  # a chain of namerefs
    'f_a=.env; for v in ${!f_@}; do cat "${!v}"; done',
    'f_a=.env; for v in ${!f_*}; do cat "${!v}"; done',
    "f=.env; x='$f'; cat \"${x@P}\"",
    "x='\\x2eenv'; cat \"${x@E}\"",
    'x=.ENV; cat "${x@L}"',
    'x=.env; cat "${x@U}" "${x@L}"',
    'x=.eNV; cat "${x,,[NV]}"',
    'x=.ENV; cat "${x,,[A-Z]}"',
    'x=.envXYZ; cat "${x::4}"',
    'cat .env"$unset"',
    "cat .env${unset}",
    "cat .env$unset",
    "cat .e$(whoami)v",
    "cat .e${x@A}v",
    '[[ .env =~ .* ]]; cat "${BASH_REMATCH[0]}"',
    '[[ x.envy =~ .env ]]; cat "${BASH_REMATCH[0]}"',
    '[[ .env =~ [[:punct:]][[:alpha:]]+ ]]; cat "${BASH_REMATCH[0]}"',  # POSIX classes
    ': .env; cat "$_"',
    'cat "$(basename /x/.env)"',
    'cat "$(basename /x/.env.bak .bak)"',
    "cat \"$(printf '%b' '\\056env')\"",
    "printf -v x '%b' '\\x2eenv'; cat \"$x\"",
    'cat "$(echo -e "\\x2eenv")"',
    'cat "$(rev <<< vne.)"',
    'cat "$(tr a-z n-za-m <<< .rai)"',
    'cat "$(echo .rai | tr a-z n-za-m)"',  # (read before: the pipe's form of the one above)
    "cat .[[:alpha:]]nv",
    "cat .e[[:lower:]]v",
    "cat .[[=e=]]nv",
    "cat .[[.e.]]nv",
    "shopt -s dotglob; cat [[:punct:]]env",
    "shopt -s dotglob; cat ?env",
    'echo "X=1" >> .env$unset',
    'echo "X=1" >> .env"${unset}"',
]


@pytest.mark.parametrize("command", HIDDEN)
def test_a_hidden_spelling_of_the_env_file_is_denied(command: str, tmp_path: Path) -> None:
    assert decide(command) == SECRET
    (tmp_path / ".env").write_text("API_KEY=x\n", encoding="utf-8")
    assert decide(command, tmp_path) == SECRET


LOOK_ALIKES = [
    'declare -n r=cfg; cfg=README.md; cat "$r"',
    'x=readme; cat "${x^^}.md"',
    'cat "$HOME/.bashrc"',
    'echo "${x,,}"',
    "printf -v y '%s' hello",
    '[[ $a =~ ^v ]] && echo "${BASH_REMATCH[0]}"',
    "[[ x =~ .env ]] && echo yes",  # a test, no read
    'basename "$PWD"',
    "tr a-z A-Z < README.md",
    "ls .[a-z]*",
    "rev <<< hello",
    'cat "$f"',  # nothing known of the name
    "cat src/$name.py",
    "cat .[[:punct:]]env",  # bash matches no `.env` here
    "cat [[:punct:]]env",  # nor here, the leading dot not spelt out
    "cat .e[[:digit:]]v",
]


@pytest.mark.parametrize("command", LOOK_ALIKES)
def test_a_look_alike_stays_allowed(command: str) -> None:
    assert decide(command) == ALLOWED


def test_an_unknown_part_adds_the_names_it_could_be_and_keeps_the_word() -> None:
    reads = read_command("cat .env$unset").reads
    assert reads[0] == ".env$unset"
    assert ".env" in reads
    assert read_command("cat $f").reads == ["$f"]  # a word of no known character: no name


def test_a_regular_expression_python_warns_of_is_read_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reading = read_command('[[ x =~ [[x] ]]; cat "${BASH_REMATCH[0]}"')
    assert reading.unreadable is None


def test_a_regular_expression_that_could_take_exponential_time_is_not_run() -> None:
    command = "[[ " + "a" * 64 + 'b =~ (a+)+$ ]]; cat "${BASH_REMATCH[0]}"'
    assert read_command(command).reads == ["${BASH_REMATCH}"]
