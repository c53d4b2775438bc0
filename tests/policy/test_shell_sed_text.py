"""A name edited by ``sed`` (``s///``, ``y///``) or translated by ``tr`` from a text the command
holds is a constant: the reading works it out and judges the file it names."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.policy.shell.awk_text import awk_output
from pytest_harness_audit.policy.shell.filters import run_filter
from pytest_harness_audit.policy.shell.perl_text import perl_output
from pytest_harness_audit.policy.shell.sed_text import sed_output


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(tmp_path, {"README.md": "# x\n"}, ("app",))


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ('cat $(echo xenv | sed "s/x/./")', "deny-secret-files"),
        ("cat $(sed 's/x/./' <<< xenv)", "deny-secret-files"),
        ("echo xenv | sed s/x/./ | xargs cat", "deny-secret-files"),
        ('v=xenv; cat $(echo $v | sed "s/x/./")', "deny-secret-files"),
        ("cat $(printf %s xenv | sed -e 's/x/./')", "deny-secret-files"),
        ("cat $(echo xenvx | sed 's|x|.|;s/x$//')", "deny-secret-files"),
        ("cat $(echo XENV | sed 's/X/./; s/env/&/I' | tr A-Z a-z)", "deny-secret-files"),
        ("cat $(echo ENV | sed 's/.*/.\\L&/')", "deny-secret-files"),
        ("cat $(echo a_env | sed -E 's/^a(_)/./')", "deny-secret-files"),
        ("cat $(echo _e_n_v | sed 's/_//2g; s/_/./')", "deny-secret-files"),
        ('f=$(echo Xenv | sed "y/X/./"); cat $f', "deny-secret-files"),
        ("cat $(echo xenv | perl -pe 's/x/./')", "deny-secret-files"),
        ("cat $(echo xenv | awk '{sub(/x/, \".\")} 1')", "deny-secret-files"),
        ("cat $(echo 'x env' | awk '{print \".\" $2}')", "deny-secret-files"),
        ("echo a_ENV | awk -F_ '{print \".\" tolower($2)}' | xargs cat", "deny-secret-files"),
        ("echo XENV | perl -lpe 's/X/./; s/.*/\\L$&/' | xargs cat", "deny-secret-files"),
        ("cat $(echo xenv | sed -n 's/x/./p')", "deny-secret-files"),
        (
            "cat $(printf 'a\\nxenv\\n' | sed -n '/env/s/x/./p')",
            "deny-secret-files",
        ),
        ("cat $(echo xenv | sed 's/x/\\x2e/')", "deny-secret-files"),
        ("cat $(echo xenv | sed 's/x/./;q')", "deny-secret-files"),
        ("cat $(echo .e-nv | tr -d '\\-')", "deny-secret-files"),
        ("cat $(echo _env | tr '_\\-' '.-')", "deny-secret-files"),
        (
            "cat $(echo x.app | sed 's/x\\.//') && rm -rf $(echo xpp | sed 's/x/a/')",
            "deny-destructive-commands",
        ),
    ],
)
def test_an_edited_name_is_judged(root: Path, command: str, rule: str) -> None:
    assert safety_in(command, root) == ("deny", rule)


@pytest.mark.parametrize(
    "command",
    [
        "cat $(echo xREADME.md | sed 's/x//')",
        "sed -n 's/x/y/p' README.md",
        "sed 's/foo/bar/g' README.md > out.md",
        "git log --format=%s | sed 's/^/- /'",
        "echo .env | sed 's/.env/README.md/' | xargs cat",
        "cat $(echo a-b | tr -d '\\-').md 2>/dev/null || true",
        "ls app | sed 's/\\.py$//'",
        "perl -pe 's/x/./' README.md",
        "git log --oneline | awk '{print $1}'",
        "cat $(echo README | awk '{print $0 \".md\"}')",
        "git log --oneline | perl -pe 's/^(\\w+)/[$1]/'",
    ],
)
def test_ordinary_edits_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)


_SED_CASES = [
    (["s/x/./"], "xenv\n"),
    (["s/x/./g"], "xenvx\n"),
    (["s/X/./I"], "xenv\n"),
    (["-E", "s/(.)x/\\1/g"], "axbx\n"),
    (["s/\\(e\\)n/\\1\\1/"], "xenv\n"),
    (["y/abc/xyz/"], "abc\n"),
    (["s/^/./"], "env\n"),
    (["s/$/v/"], ".en\n"),
    (["s/a*/-/g"], "baaac\n"),
    (["s/a/b/2g"], "aaaa\n"),
    (["-e", "s/x/./", "-e", "s/n/N/"], "xenv\n"),
    (["s/.*/\\U&/"], ".env\n"),
    (["s/a\\|ab/X/"], "ab\n"),
    (["s/[[:upper:]]/./"], "Xenv\n"),
    (["s/a+/X/"], "aa+\n"),
    (["s/a\\{2\\}/X/"], "aaa\n"),
    (["s/*/y/"], "a*b\n"),
    (["s/a$b/y/"], "a$b\n"),
    (["s/[]x]/y/g"], "]x\n"),
    (["s,x,\\,,"], "xenv\n"),
    (["s/x/./"], "a\nxb\nxc"),
    (["-n", "s/x/./p"], "xenv\nabc\n"),
    (["-n", "/e/p"], "a\nbe\nce\n"),
    (["1d"], "a\nb\n"),
    (["2q"], "a\nb\nc\n"),
    (["-n", "$p"], "a\nb"),
    (["/a/s/x/./"], "ax\nbx\n"),
    (["s/x/\\x2e/"], "xenv\n"),
    (["s/x/\\o056/"], "xenv\n"),
    (["-nE", "s/(x)/./p"], "xenv\n"),
]


@pytest.mark.parametrize(("args", "text"), _SED_CASES)
def test_sed_output_is_what_sed_prints(args: list[str], text: str) -> None:
    try:
        real = subprocess.run(
            ["sed", *args], input=text, capture_output=True, text=True, check=True
        )
    except FileNotFoundError:  # pragma: no cover - a machine without sed
        pytest.skip("no sed")
    assert sed_output(args, text, ordered=True) == real.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["-n", "2{p}"],
        ["1,2s/x/./"],
        ["s/x/./", "file"],
        ["s/\\(x\\)\\1/./"],
        ["s/x/./w out"],
        ["s/x/./e"],
        ["s/x/\\2/"],
        ["-i", "s/x/./"],
        ["s//x/"],
        ["s/x/./;n"],
    ],
)
def test_sed_scripts_not_worked_out(args: list[str]) -> None:
    assert sed_output(args, "xenv\n") is None


@pytest.mark.parametrize(
    ("args", "text", "out"),
    [
        (["-d", "\\-"], ".e-nv", ".env"),
        (["-d", "\\055"], ".e-nv", ".env"),
        (["a\\-z", "123"], "a-z", "123"),
        (["-d", "a\\\\"], "a\\b", "b"),
        (["X-", "._"], "X-env", "._env"),
    ],
)
def test_tr_escapes(args: list[str], text: str, out: str) -> None:
    assert run_filter("tr", args, text) == out


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["-pe", "s/x/./g"], "xenvx\n"),
        (["-pe", "s|X|.|i"], "xenv\n"),
        (["-pe", "s/(.)x/$1/g"], "axbx\n"),
        (["-lpe", "s/$/v/"], ".en\n"),
        (["-pe", "s/a|ab/X/"], "ab\n"),
        (["-p", "-e", "s/.*/\\U$&/"], ".env\n"),
        (["-pe", "s/\\d+/N/g; s/x/\\$/"], "a1b22x\n"),
    ],
)
def test_perl_output_is_what_perl_prints(args: list[str], text: str) -> None:
    try:
        real = subprocess.run(
            ["perl", *args], input=text, capture_output=True, text=True, check=True
        )
    except FileNotFoundError:  # pragma: no cover - a machine without perl
        pytest.skip("no perl")
    assert perl_output(args, text) == real.stdout


@pytest.mark.parametrize(
    "args",
    [["-ne", "print"], ["-pe", "s/x/$y/"], ["-pi", "-e", "s/x/./"], ["-pe", "s/x/./e"],
     ["-pe", "tr/a/b/"], ["-pe", "s/x/./; print"]],
)  # fmt: skip
def test_perl_programs_not_worked_out(args: list[str]) -> None:
    assert perl_output(args, "xenv\n") is None


def test_perl_expressions_that_may_match_the_newline_are_not_worked_out() -> None:
    # without -l the line keeps its newline: `Q[^a]` takes `Q\n` off `.envQ\n`
    assert perl_output(["-pe", "s/Q[^a]//"], ".envQ\n") is None
    assert perl_output(["-pe", "s/v\\s/x/"], ".env\n") is None
    assert perl_output(["-lpe", "s/Q[^a]//"], ".envQb\n") == ".env\n"


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (['{gsub("x", "."); print}'], "xenvx\n"),
        (["-F_", '{print "."$2}'], "a_env\n"),
        (["{print $1, $NF}"], "a b c\n"),
        (["{print toupper(substr($0, 2))}"], "xenv\n"),
        (['{ print NR ":" $0 }'], "a\nb\n"),
        (["{print substr($0, 2, 3)}"], "abcdef\n"),
        (['{gsub(/a*/, "-")}1'], "baaac\n"),
        (['{sub(/e/, "[&]")}1'], "xenv\n"),
    ],
)
def test_awk_output_is_what_awk_prints(args: list[str], text: str) -> None:
    try:
        real = subprocess.run(
            ["awk", *args], input=text, capture_output=True, text=True, check=True
        )
    except FileNotFoundError:  # pragma: no cover - a machine without awk
        pytest.skip("no awk")
    assert awk_output(args, text) == real.stdout


@pytest.mark.parametrize(
    "args",
    [["/x/{print}"], ["{print x}"], ["-v", "a=1", "{print}"], ["{print}", "file"], ["{x=1}"],
     ["BEGIN{print 1}"]],
)  # fmt: skip
def test_awk_programs_not_worked_out(args: list[str]) -> None:
    assert awk_output(args, "xenv\n") is None
