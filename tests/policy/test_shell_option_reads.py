"""Reads the shell reading takes from an option's value, from ``find -fprint``'s file, from a
substitution whose output is not known and from inside ``[[ … ]]``/``(( … ))`` tests
(:mod:`pytest_harness_audit.policy.shell.option_files`, :mod:`~.shell.conditionals`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell.echo import echo_output
from pytest_harness_audit.policy.shell.option_files import option_files

ROOT = "/srv/app"


@pytest.fixture(scope="module")
def safety() -> Policy:
    return Policy.preset("safety")


def _decided(policy: Policy, command: str) -> tuple[str, str | None]:
    evaluation = policy.evaluate("Bash", {"command": command}, root=ROOT)
    return evaluation.decision, evaluation.rule_id


READS = [
    "xargs -a .env echo", "xargs -a.env echo", "xargs --arg-file .env echo",
    "xargs --arg-file=.env printf '%s\\n'", "xargs -0a .env echo", "xargs -d '\\n' -a .env echo",
    "xargs -0 -a .env -I{} echo {}", "xargs -a .e''nv",
    "parallel -a .env echo", "parallel --arg-file .env echo", "parallel -a.env echo",
    "parallel --arg-file=.env echo", "parallel -j1 -a .env echo",
    "date -f .env", "date --file=.env", "date -uf .env", "date -f.env",
    "du --files0-from=.env", "du --files0-from .env", "du -X .env", "du --exclude-from=.env .",
    "find -files0-from .env", "tree --fromfile .env",
    "grep -f .env README.md", "grep -rf .env .", "grep --file=.env README.md", "rg -f .env",
    "sed -f .env README.md", "sed -n -f.env README.md",
    'cat "$(realpath .env)"', "cat \"$(sed 's/R.*/.env/' <<< README.md)\"",
    "cat \"$(awk 'BEGIN{print \".env\"}')\"", 'cat "$(cut -c2- <<< x.env)"',
    'f=.env; cat "$(realpath "$f")"', "cat `readlink -f .env`",
    "[[ $(cat .env) == *K* ]] && echo y", "[[ x == $(<.env) ]]", "[[ -n `cat .env` ]]",
    '[[ "$(<.env)" =~ sk-(.*) ]] && echo "${BASH_REMATCH[1]}"', "(( $(wc -c < .env) > 3 ))",
    "if [[ -f x && $(cat .env | base64) ]]; then :; fi",
    # printf conversions besides %s and %b
    "printf -v f '%c%s' . env; cat $f", "cat \"$(printf '.e%cv' n)\"", "cat $(printf '.%xnv' 14)",
    "cat $(printf '%.4s' .envXYZ)", "cat $(printf '%.*s' 4 .envXYZ)", "cat $(printf '%q' .env)",
    "printf '%c%s' . env > l; cat $(cat l)",
]  # fmt: skip


@pytest.mark.parametrize("command", READS)
def test_the_env_file_read_so_is_denied(safety: Policy, command: str) -> None:
    assert _decided(safety, command) == SECRET


FIND_PRINTS = [
    "find . -name .env -fprint l; xargs cat < l", "find . -name .env -fprint0 l; xargs -0 cat < l",
    "find . -name '.e*' -fprintf l '%f\\n'; cat $(cat l)",
    "find . -maxdepth 1 -fprint l; xargs cat < l", "find . -fprint l; xargs -a l cat",
]  # fmt: skip


FIND_BENIGN = [
    "find . -name README.md -fprint l; xargs cat < l",
    "find . -name '*.md' -fprint0 l; xargs -0 cat < l",
    "find . -name 'R*' -fprintf l '%f\\n'; cat $(cat l)",
]


@pytest.mark.parametrize("command", FIND_PRINTS + FIND_BENIGN)
def test_names_find_prints_to_a_file_are_read_back(
    safety: Policy, tmp_path: Path, command: str
) -> None:
    (tmp_path / ".env").write_text("K=1\n")
    (tmp_path / "README.md").write_text("hi\n")
    evaluation = safety.evaluate("Bash", {"command": command}, root=str(tmp_path))
    expected = SECRET if command in FIND_PRINTS else ALLOWED
    assert (evaluation.decision, evaluation.rule_id) == expected


@pytest.mark.parametrize(
    "command", ["[[ -n $(rm -rf app) ]]", "(( $(rm -rf app; echo 1) ))", "[[ `rm -rf app` ]]"]
)
def test_a_destructive_command_in_a_test_is_denied(safety: Policy, command: str) -> None:
    assert _decided(safety, command) == DESTROYS


BENIGN = [
    "xargs -a list.txt cat", "xargs -n1 -a list.txt echo", "echo a | xargs -0 echo",
    "parallel -j2 echo ::: a b", "parallel -a list.txt echo",
    "date -d tomorrow", "date -d '2020-01-01' +%Y", "du -sh .", "du --max-depth=1 .",
    "find . -name '*.py'", "grep -f patterns.txt README.md", "grep -e -f README.md",
    "sed -f fix.sed README.md", "sed -ie s/a/b/ README.md", "grep -rn TODO .",
    "find . -name '*.py' -fprint l; xargs wc -l < l", "find . -fls l; cat l",
    'cat "$(realpath README.md)"', 'echo "$(git rev-parse HEAD)"',
    "[[ $x == \"a<b\" ]]", "[[ a < b ]]", "(( 1 + 2 > 2 ))", "[[ $(git status --porcelain) ]]",
    '[[ "$(uname)" == Linux ]] && echo l', "(( $(wc -l < README.md) > 3 ))",
    "[[ x =~ ^(a|b)$ ]] && echo \"${BASH_REMATCH[0]}\"",
    "printf -v n '%03d' 7; cat \"app/$n.py\"", "cat $(printf '%.6s' README.md.bak)",
]  # fmt: skip


@pytest.mark.parametrize("command", BENIGN)
def test_look_alikes_stay_allowed(safety: Policy, command: str) -> None:
    assert _decided(safety, command) == ALLOWED


@pytest.mark.parametrize(
    ("args", "found"),
    [
        (["-f", "a"], ["a"]),
        (["-fa"], ["a"]),
        (["--file=a"], ["a"]),
        (["--file", "a"], ["a"]),
        (["-uf", "a"], ["a"]),
        (["-d", "-f", "x"], []),  # `-d`'s value, then a word
        (["-df", "x"], []),  # `-d f`: attached to `-d`
        (["--", "-f", "a"], []),
        (["-f"], []),
    ],
)
def test_option_files_reads_the_values_of_its_options(args: list[str], found: list[str]) -> None:
    assert option_files(args, frozenset({"-f", "--file"}), frozenset({"-d"})) == found


@pytest.mark.parametrize(
    ("argv", "printed"),
    [
        (["printf", "%c%s", ".", "env"], ".env"),
        (["printf", ".e%cv", "n"], ".env"),
        (["printf", ".%xnv", "14"], ".env"),
        (["printf", "%.4s", ".envXYZ"], ".env"),
        (["printf", "%.*s", "4", ".envXYZ"], ".env"),
        (["printf", "%*s|%-3s|", "3", "a", "b"], "  a|b  |"),
        (["printf", "%03d-%o-%X", "7", "010", "255"], "007-10-FF"),
        (["printf", "%d", "'A"], "65"),
        (["printf", "%s-%s\\n", "a", "b", "c"], "a-b\nc-\n"),
        (["printf", "%%s %s", "x"], "%s x"),
        (["printf", "%q", ".env"], ".env"),
        (["printf", "%q", "a b"], None),
        (["printf", "%d", "x"], None),
        (["printf", "%f", "1"], None),
    ],
)
def test_printf_conversions(argv: list[str], printed: str | None) -> None:
    assert echo_output(argv) == printed
