"""Values bash decodes or defaults that the shell reading took as they were written.

* ``p='\\044(cat .env)'; echo "${p@P}"``: a prompt expansion decodes the prompt's escapes
  first (``\\NNN`` octal, three digits, modulo 256; ``\\[``/``\\]`` dropped; ``\\\\``), then
  expands the text, so an octal ``$`` or backquote makes a substitution the quotes hid; the
  same in ``PS4`` traced by ``set -x``. ``p='.e\\156v'; cat "${p@P}"`` names ``.env``.
* ``x=(); cat .e${x[0]-nv}``: an array's element that is not set takes the default word
  (``${x[0]-w}``, ``${x[@]:-w}``, ``${x[1]=w}``), whatever the other elements hold; ``$x`` of an
  array is its element 0, which may be unset while others are (``x[1]=a``).
* ``${x//[A-Z]/}``, ``${x~~}``, ``${x:0:n}``: a glob pattern replaced, the case toggled, an
  offset computed were left unknown.
* ``printf '\\u002eenv'``: bash's ``printf`` decodes ``\\uHHHH`` and ``\\UHHHHHHHH``.
* ``tr -d -- -``, ``tr -d '[:digit:]'``, ``tr -d '\\170'``: a ``tr`` set after ``--``, with a
  class or an octal escape, was left unknown.
* ``${a[@]@k}``: an array's keys and values, each a word (``declare -A m=([.env]=1)``).
* ``x=README.md; unset x; cat ${x:-.env}``: ``unset`` (of a variable, an element, a nameref's
  target) was not read, so the value before it stood in for the default word.

Each behaviour was checked against bash 5.2.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET, safety_in, secret_workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(tmp_path, {"README.md": "# x\n", "app/main.py": "print(1)\n"}, ("app",))


PROMPT_ESCAPES = [
    "p='\\044(cat .env >&2)'; echo \"${p@P}\"",
    "p='\\140cat .env >&2\\140'; : \"${p@P}\"",
    "p='$\\050cat .env >&2)'; : \"${p@P}\"",
    "p='\\444(cat .env >&2)'; : \"${p@P}\"",  # 0444 & 0xFF is `$`
    "p='\\[\\044\\](cat .env >&2)'; : \"${p@P}\"",
    "PS4='\\044(cat .env >&2) '; set -x; :",
    "read -r PS4 <<< '\\044(cat .env >&2)'; set -x; :",
    "p='.e\\156v'; cat \"${p@P}\"",
    "p='\\056env'; cat ${p@P}",
]


@pytest.mark.parametrize("command", PROMPT_ESCAPES)
def test_a_prompt_is_read_after_its_escapes_are_decoded(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


def test_a_prompt_destroying_by_an_octal_dollar_is_denied(root: Path) -> None:
    assert safety_in("p='\\044(rm -rf app)'; : \"${p@P}\"", root) == DESTROYS


ELEMENT_DEFAULTS = [
    "x=(); cat .e${x[0]-nv}",
    'x=(); cat ".e${x[@]:-nv}"',
    "a=(); cat .e${a[*]-nv}",
    "x=(a); cat .e${x[1]:-nv}",
    "x=(); y=${x[0]-nv}; cat .e$y",
    "x=(); : ${x[0]=.env}; cat ${x[0]}",
    "x=(); x+=(); cat .e${x[0]-nv}",
    "declare -A m=([k]=v); cat .e${m[z]:-nv}",
    "x[1]=a; cat .e${x-nv}",
    "x=(a); cat ${x[1]-.env}",
    'x=(); cat "${x[@]:-.env}"',
    'i=1; x[1]=.env; cat "${x[i]-README.md}"',  # an index computed: the word and the elements
]


@pytest.mark.parametrize("command", ELEMENT_DEFAULTS)
def test_an_unset_element_takes_its_default_word(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


UNSET = [
    "x=a; unset x; cat .e${x-nv}",
    "x=README.md; unset -v x; cat ${x:-.env}",
    "x=(a); unset 'x[0]'; cat .e${x-nv}",
    "x=(a b); unset x[0]; cat .e${x-nv}",
    "declare -n r=x; x=a; unset r; cat .e${x-nv}",
]


@pytest.mark.parametrize("command", UNSET)
def test_an_unset_variable_gives_the_default_word(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


def test_unset_of_other_names_keeps_a_value(root: Path) -> None:
    assert safety_in("x=.env; unset y; cat $x", root) == SECRET
    assert safety_in("x=.env; unset -f x; cat $x", root) == SECRET
    assert safety_in('IFS=:; unset IFS; x=".env README.md"; cat $x', root) == SECRET


BENIGN = [
    "unset GIT_DIR; git status",
    'out=build; unset out; ls "${out:-app}"',
    "PS4='+ ${BASH_SOURCE}:${LINENO}: '; set -x; ls",
    "PS4='\\011+ \\t '; set -x; ls app",
    "p='\\u@\\h:\\w\\$ '; echo \"${p@P}\"",
    "p='build \\044HOME'; echo \"${p@P}\"",
    "p='\\[\\e[32m\\]ok\\[\\e[0m\\]'; echo \"${p@P}\"",
    'args=(); python3 -m pytest -q "${args[@]:-app}"',
    'files=(); wc -l "${files[@]:-README.md}"',
    'opts=(-l); ls "${opts[@]-}" app',
    'x=(a b); echo "${x[2]:-none}"',
    'declare -A cfg=([port]=80); echo "${cfg[host]:-localhost}" "${cfg[port]}"',
]


@pytest.mark.parametrize("command", BENIGN)
def test_look_alikes_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED


KEYS_AND_VALUES = [
    "declare -A m=([.env]=1); cat ${m[@]@k}",
    'a=(x .env); cat "${a[@]@k}"',
    "a=(x .env); cat ${a[*]@k}",
    "declare -A m=([k]=.env); for f in ${m[@]@k}; do cat $f; done",
]


@pytest.mark.parametrize("command", KEYS_AND_VALUES)
def test_an_arrays_keys_and_values_are_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


def test_keys_and_quoted_values_name_no_file(root: Path) -> None:
    assert safety_in('declare -A ports=([web]=80); echo "${ports[@]@K}"; ls', root) == ALLOWED
    assert safety_in("a=(README.md); wc -l ${a[@]@k} 2>/dev/null; ls app", root) == ALLOWED


OPERATORS_WORKED_OUT = [
    "x=.eXnv; cat ${x//[A-Z]/}",
    "x=.eXnv; cat ${x//[[:upper:]]/}",
    "x=.eXYnv; cat ${x/X?}",
    "x=xx.env; cat ${x/#x*./.}",
    "x=.envXYZ; cat ${x/%X*/}",
    "x=.ENV; cat ${x~~}",
    "x=.env; cat ${x:0:$((2+2))}",
    "x=.envxx; n=4; cat ${x:0:n}",
    "x=.envxx; n=4; cat ${x:0:$n}",
]


@pytest.mark.parametrize("command", OPERATORS_WORKED_OUT)
def test_glob_replacements_toggled_case_and_computed_offsets_are_worked_out(
    root: Path, command: str
) -> None:
    assert safety_in(command, root) == SECRET


def test_operators_that_name_no_secret_stay_allowed(root: Path) -> None:
    assert safety_in("x=.e.nv; cat ${x/./} 2>/dev/null; ls", root) == ALLOWED
    assert safety_in('f=README.md; echo "${f%.*}" "${f//[aeiou]/_}"; ls app', root) == ALLOWED
    assert safety_in("x=app/main.py; wc -l ${x//[0-9]/}", root) == ALLOWED


UNICODE_ESCAPES = [
    "cat \"$(printf '\\u002eenv')\"",
    "cat \"$(printf '\\U0000002eenv')\"",
    "cat \"$(printf '%b' '\\u002eenv')\"",
]


@pytest.mark.parametrize("command", UNICODE_ESCAPES)
def test_printf_unicode_escapes_are_decoded(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


def test_printf_of_a_unicode_mark_stays_allowed(root: Path) -> None:
    assert safety_in("printf '\\u2713 ok\\n'; ls app", root) == ALLOWED


TR_SETS = [
    "cat $(echo .e-nv | tr -d -- -)",
    "cat $(echo .e1nv | tr -d '[:digit:]')",
    "cat $(echo .exnv | tr -d '\\170')",
]


@pytest.mark.parametrize("command", TR_SETS)
def test_tr_sets_with_classes_escapes_and_an_end_of_options_are_worked_out(
    root: Path, command: str
) -> None:
    assert safety_in(command, root) == SECRET


def test_tr_of_ordinary_text_stays_allowed(root: Path) -> None:
    assert safety_in("echo hello | tr '[:lower:]' '[:upper:]'; ls app", root) == ALLOWED
    assert safety_in("echo a-b | tr -d -- -; ls app", root) == ALLOWED
