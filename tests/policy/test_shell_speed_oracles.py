"""Cheaper shell-reading steps against the code they replaced, kept here as oracles.

* :func:`old_parse_simple`: the common-shape tokenizer as it was (one token a blank, operator,
  redirection or word, quotes removed by a regex) against :func:`.simple.parse_simple`.
* :func:`old_place` and :func:`old_dir_options`: placing paths as it was (every path list looked
  up by name, every word's command name worked out) against :meth:`.place.Place.place`.
* The token count of a parse, pinned: a literal word ends without a second look at what follows.
* The skip in :meth:`.place.Place.change`: only a name whose last character is ``d``/``D``/``r``/
  ``R`` can lower-case to ``cd``, ``pushd``, ``popd`` or ``chdir``.
"""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy.shell.nodes import (
    RESERVED_WORDS,
    Budget,
    Command,
    Lit,
    Redirect,
    Word,
)
from pytest_harness_audit.policy.shell.place import (
    _CHANGE_DIR,
    _DIR_OPTION_COMMANDS,
    PATH_LISTS,
    Place,
    _dir_options,
    command_name,
)
from pytest_harness_audit.policy.shell.reading import Reading
from pytest_harness_audit.policy.shell.simple import parse_simple
from pytest_harness_audit.policy.shell.syntax import parse
from pytest_harness_audit.policy.shell.tar_words import TARS, tar_words

_OLD_TOKEN = re.compile(
    r"""[ \t]+|(?P<op>&&|\|\||[;&](?!>)|\|(?![&>]))|(?P<redirect>\d?(?:>>|>\||>&|>|<)|&>>|&>)"""
    r"""|(?P<word>(?:[^\s'"\\$`;&|<>(){}*?\[\]#!]+|'[^']*'|"[^"\\$`!]*")+)"""
)
_OLD_QUOTES = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def old_parse_simple(text: str) -> list[Command] | None:
    """The tokenizer of the common shape before it took blanks with the token before them."""
    if len(text) > 2048 or "\x00" in text:
        return None
    commands: list[Command] = []
    current = Command()
    previous: Command | None = None
    redirect: Redirect | None = None
    end = 0
    for match in _OLD_TOKEN.finditer(text):
        if match.start() != end:
            return None
        end = match.end()
        kind = match.lastgroup
        if kind is None:
            continue
        value = match.group()
        if kind == "word":
            if "'" in value or '"' in value:
                if "=" in value:
                    return None
                unquoted = _OLD_QUOTES.sub(
                    lambda m: m.group(1) if m.group(1) is not None else m.group(2), value
                )
                word: Word = [Lit(unquoted, True)]
            else:
                word = [Lit(value, False)]
            if redirect is not None:
                redirect.target, redirect = word, None
            elif not current.words and value in RESERVED_WORDS:
                return None
            else:
                current.words.append(word)
        elif redirect is not None:
            return None
        elif kind == "redirect":
            redirect = Redirect(value.lstrip("0123456789"), None)
            current.redirects.append(redirect)
        else:
            if current.words or current.redirects:
                current.stdin = previous
                current.piped = value == "|"
                commands.append(current)
            previous = current if value == "|" else None
            current = Command()
    if end != len(text) or redirect is not None:
        return None
    if current.words or current.redirects:
        current.stdin = previous
        commands.append(current)
    return commands


_DIR_OPTIONS = ("--directory=", "--chdir=", "--cwd=")


def _in_full(word: str) -> str:
    """``word`` with an abbreviation of ``--directory``/``--chdir`` written in full, as
    ``getopt_long`` reads it (``--dir=x`` → ``--directory=x``)."""
    option, equals, value = word.partition("=")
    for full in ("--directory", "--chdir"):
        if len(option) >= 4 and full.startswith(option):
            return full + equals + value
    return word


def old_dir_options(argv: list[str]) -> list[str]:
    """``-C DIR`` and kin, as found before the words were first searched for them together
    (an abbreviated long option read in full)."""
    if not any(command_name(word) in _DIR_OPTION_COMMANDS for word in argv):
        return []
    found: list[str] = []
    for index, written in enumerate(argv):
        word = _in_full(written)
        if word == "-C" and index + 1 < len(argv):
            found.append(argv[index + 1])
        elif word.startswith(_DIR_OPTIONS):
            found.append(word.partition("=")[2])
        elif word in ("--directory", "--chdir") and index + 1 < len(argv):
            found.append(argv[index + 1])
    return [d for d in found if d and "$" not in d][:8]


def old_place(place: Place, reading: Reading, argv: list[str] | None = None) -> None:
    """Placing paths before a script that had not moved skipped the loop (the folders of ``-C
    DIR`` and kin as found now: their finding has an oracle of its own, with tar's letters)."""
    extra = _dir_options(argv) if argv else []
    for name in PATH_LISTS:
        paths: list[str] = getattr(reading, name)
        marks = reading.marks
        start = marks.get(name, 0)
        end = len(paths)
        if start >= end:
            continue
        if place.cwd != "." or place.unknown or extra or place.home:  # (`cd ~`: the home)
            for path in paths[start:end]:
                paths.extend(place._forms(path, extra))
        marks[name] = len(paths)


TOKENS = [
    "a", "-rf", "x.py", "'a b'", '"c d"', "'it\"s'", '"it\'s"', "'$x'", '"*"', "2", "12", "=",
    "a=b", "a='b'", "if", "case", "{", "*", "$x", "`", "(", "#", "!", "é", "日", "ſ", "\u00ad",
]  # fmt: skip
GLUE = [
    " ", "  ", "\t", "", "&&", "||", ";", ";;", "|", "|&", "&", "&>", "&>>", ">", ">>", ">|",
    ">&", "<", "<<", "<>", "2>", "2>&1", "\n", "\r", "\\",
]  # fmt: skip
SHAPES = st.one_of(
    st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(GLUE)), max_size=12).map(
        lambda pairs: "".join(t + g for t, g in pairs)
    ),
    st.text(alphabet=" \t&|;<>'\"=2ab-$*#\n", max_size=20),
)


def commands_of(commands: list[Command] | None) -> object:
    """The commands with each one's input named by position (``Command`` compares by value)."""
    if commands is None:
        return None
    position = {id(c): i for i, c in enumerate(commands)}
    return [
        (c.words, c.redirects, c.piped, None if c.stdin is None else position.get(id(c.stdin)))
        for c in commands
    ]


@settings(max_examples=15, deadline=None)
@given(SHAPES)
def test_the_common_shape_tokenizes_as_before(text: str) -> None:
    assert commands_of(parse_simple(text)) == commands_of(old_parse_simple(text))


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(SHAPES)
def test_the_common_shape_tokenizes_as_before_at_length(text: str) -> None:
    assert commands_of(parse_simple(text)) == commands_of(old_parse_simple(text))


@pytest.mark.parametrize(
    "text",
    [
        "  ls  -la\t",
        "a && b || c ; d | e & f",
        "a |& b",
        "a ;; b",
        "echo 'it\"s' \"it's\" 'x'\"y\"",
        "git commit -m 'a b'",
        "a=b c",
        "a='b' c",
        "x 2>&1 >out <in",
        "x >",
        "x > > y",
        "x &> y &>> z",
        "if true",
        "\t",
        "",
        "a\nb",
        "echo $HOME",
        "echo '$HOME' x",
        'echo "$HOME"',
        "ls `pwd`",
        "echo hi!",
        "a\\ b",
        "echo 'a!b' c\\d",
    ],
)
def test_shapes_tokenize_as_before(text: str) -> None:
    assert commands_of(parse_simple(text)) == commands_of(old_parse_simple(text))


ARGV_WORDS = [
    "git", "tar", "make", "env", "/usr/bin/GIT", "cat", "-C", "app", "--directory=d",
    "--directory", "--chdir", "--chdir=x", "--cwd=y", "--cwd", "-Cx", "$D", "", "--dir", "a/b",
    "../c", "~/d", "/abs", "*", "--config", "--count",
]  # fmt: skip
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["cd", "pushd", "popd", "ls", "CD", "/bin/cd", "chdir", "rd", "sudo"]),
        st.lists(st.sampled_from(ARGV_WORDS), max_size=4),
        st.sampled_from(PATH_LISTS),
        st.lists(st.sampled_from(ARGV_WORDS), max_size=3),
        st.booleans(),
    ),
    max_size=8,
)


@settings(max_examples=10, deadline=None)
@given(STEPS, st.sampled_from([None, "/", "/w", "/a/b/c/d/e/f/g/h/i/j"]))
def test_paths_are_placed_as_before(
    steps: list[tuple[str, list[str], str, list[str], bool]], root: str | None
) -> None:
    new_place, old_place_ = Place.for_root(root), Place.for_root(root)
    new_reading, old_reading = Reading(), Reading()
    for name, args, kind, paths, dynamic in steps:
        argv = [name, *args]
        for place, reading, how in (
            (new_place, new_reading, "new"),
            (old_place_, old_reading, "old"),
        ):
            getattr(reading, kind).extend(paths)
            if how == "new":
                place.place(reading)
                place.place(reading, argv)
            else:
                old_place(place, reading)
                old_place(place, reading, argv)
            place.change(argv, [dynamic] * len(argv))
        assert new_reading == old_reading
        assert new_reading.marks == old_reading.marks
        assert new_place == old_place_


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from(ARGV_WORDS), max_size=6))
def test_directory_options_are_found_as_before(argv: list[str]) -> None:
    found, before = _dir_options(argv), old_dir_options(argv)
    assert found[: len(before)] == before
    assert all(folder in _tar_folders(argv) for folder in found[len(before) :])


def _tar_folders(argv: list[str]) -> list[str]:
    """The folders ``tar`` itself reads from its words (``tar -Cx``, ``tar xfC a.tar x``): the
    only ones found beyond the words searched one by one."""
    at = next((i for i, word in enumerate(argv) if command_name(word) in TARS), -1)
    words = tar_words(command_name(argv[at]), argv[at + 1 :]) if at >= 0 else None
    return words.all_values("-C", "--directory") if words else []


@pytest.mark.parametrize(
    "argv",
    [
        ["git", "--directory=d", "status"],
        ["tar", "--directory", "x", "-xf", "a.tar"],
        ["make", "--chdir", "x"],
        ["env", "--chdir=x", "ls"],
        ["git", "--cwd=y"],
        ["git", "-C", "app", "status"],
        ["/usr/bin/GIT", "-C", "a"],
        ["sudo", "tar", "-C", "$D", "-x"],
        ["cat", "-C", "x"],
        ["git", "--count", "--config", "--dir"],
        ["git", "-C"],
        ["tar", "--dir=..", "-cf", "b.tar", "audit"],
        ["env", "--ch", "..", "ls"],
        ["make", "--di"],
    ],
)
def test_each_directory_option_is_found_as_before(argv: list[str]) -> None:
    assert _dir_options(argv) == old_dir_options(argv)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(STEPS, st.sampled_from([None, "/w"]))
def test_paths_are_placed_as_before_at_length(
    steps: list[tuple[str, list[str], str, list[str], bool]], root: str | None
) -> None:
    test_paths_are_placed_as_before.hypothesis.inner_test(steps, root)


@pytest.mark.slow
def test_only_the_letters_the_skip_lets_through_lower_case_to_a_directory_command_ending() -> None:
    """The proof behind :meth:`Place.change`'s skip (``dDrRsSnNtT``), over every code point: the
    names that move the shell, those that run one as a builtin, and ``set`` (``set -P``)."""
    endings = {name[-1] for name in (*_CHANGE_DIR, "builtin", "command", "set")}
    found = {
        chr(point) for point in range(sys.maxunicode + 1) if chr(point).lower()[-1:] in endings
    }
    assert found == set("dDrRsSnNtT")


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("ls -la src", 1984),
        ("a;b|c&&d", 1978),
        ("f() { x; }", 1978),
        ("echo $HOME/x y", 1983),
        ("for f in a b; do cat $f; done", 1963),
        ("x(y)", 1984),
    ],
)
def test_a_word_ended_by_a_blank_or_an_operator_costs_its_tokens_as_before(
    text: str, left: int
) -> None:
    """The parser ends a literal word at a blank or an operator without looking again: the step
    it saves still counts against the budget, as it did (so the bound is where it was)."""
    budget = Budget()
    parse(text, budget)
    assert budget.tokens == left
