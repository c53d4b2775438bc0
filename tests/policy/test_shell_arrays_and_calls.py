"""Names the shell reading did not follow: arrays built by ``declare`` and the builtins, the
keys of an array, function calls, arithmetic, and the file ``xargs -a`` takes words from.

* ``declare -a x='([0]=".env")'`` (``typeset``/``local``/``readonly``, ``-A``, a value from a
  variable, an ``x`` already an array): bash reads a quoted value in parentheses as a compound
  assignment; the reading kept it as the text ``([0]=.env)``.
* ``x=([k]=.e [j]=nv)``: elements by key (``${x[k]}``), and ``${!x[@]}`` (the keys).
* ``read -a``/``mapfile`` give arrays whose elements join by ``IFS`` (``"${p[*]}"``).
* ``echo(){ command cat "$@"; }; echo .env``: a function named as a builtin; ``f(){ cat
  "$1$2"; }; f .e nv``: the body's parameters are the call's arguments.
* ``$(( $(cat .env >&2) ))``, ``${x[$(cat .env >&2)]}``: substitutions inside an arithmetic
  expression, a subscript or an offset run; ``eval "cat \\$a$((i))"`` builds a name with one.
* ``shopt -s extglob`` then ``cat .@(env)``: the pattern-list was read as a subshell.
* ``let``/``(( i = 1 ))``, ``read -n 4``, ``${x:=.env}``, ``${a[@]:1}``, a nameref assigned
  through, ``$(f)`` of a function, ``$(cat <<EOF …)``, ``head -c``/``tail -c``/``cut`` of a
  known text: values the reading left unknown.
* ``ls app/*.py > l; xargs -a l wc -l`` was unreadable (``-a``'s file taken for a program).

Each behaviour was checked against bash 5.2.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET, UNREADABLE, safety_in, secret_workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(tmp_path, {"README.md": "# x\n", "app/main.py": "print(1)\n"}, ("app",))


COMPOUND = [
    'declare -a x=\'([0]=".env")\'; cat "${x[0]}"',
    "declare -a x='(.env)'; cat \"${x[0]}\"",
    'declare -a x="(.env)"; cat "${x[@]}"',
    "declare -A x='([k]=.env)'; cat \"${x[k]}\"",
    "typeset -a x='(.env)'; cat \"${x[0]}\"",
    "f(){ local -a x='(.env)'; cat \"${x[@]}\"; }; f",
    "readonly -a x='(.env)'; cat \"${x[0]}\"",
    "declare -ra x='(.env)'; cat \"${x[0]}\"",
    "declare -a x='(a [5]=.env)'; cat \"${x[5]}\"",
    'declare -a "x=(.env)"; cat "${x[0]}"',
    "declare -a 'x=(a .env)'; cat \"${x[1]}\"",
    "declare -a x+='(a .env)'; cat \"${x[1]}\"",
    'v="(.env)"; declare -a x=$v; cat "${x[0]}"',
    "x=(); declare x='(.env)'; cat \"${x[0]}\"",
    'declare -a x=\\(.env\\); cat "${x[0]}"',
    "declare -a x='($(cat .env))'; echo \"${x[0]}\"",  # bash expands inside it
    'declare "x=.env"; cat "$x"',
    'a=x; declare "$a=.env"; cat "$x"',
    # keys
    'declare -A m=([a]=.e [b]=nv); cat "${m[a]}${m[b]}"',
    'x=([3]=.e [7]=nv); cat "${x[3]}${x[7]}"',
    'declare -A x=([.env]=1); cat "${!x[@]}"',
    'declare -A m; m[.env]=1; for k in "${!m[@]}"; do cat "$k"; done',
    'declare -A m=([\'.env\']=x); for k in "${!m[@]}"; do cat "$k"; done',
    # the builtins
    "mapfile -t a <<< $'.e\\nnv'; cat \"${a[0]}${a[1]}\"",
    'read -r -a p <<< ". e n v"; IFS=; cat "${p[*]}"',
    'IFS=: read -a x <<< "a:.env"; cat "${x[1]}"',
]


SET_BY_BUILTINS = [
    # a nameref assigned through
    "declare -n r=x; declare -a r='(.env)'; cat \"${x[0]}\"",
    'declare -n r=x; r=.env; cat "$x"',
    # arithmetic assignments, then a name built with the number
    '(( i = 1 )); a1=.env; eval "cat \\$a$i"',
    'i=0; ((i++)); a1=.env; eval "cat \\$a$i"',
    'let i=1; a1=.env; eval "cat \\$a$i"',
    'i=0; let i+=1; a1=.env; eval "cat \\$a$i"',
    # `read -n`/`-N`: the first characters
    'read -N 4 x <<< .envXX; cat "$x"',
    'read -rn4 x <<< .envXX; cat "$x"',
    # a default assigned
    ': ${x:=.env}; cat "$x"',
    ': "${x=.env}"; cat $x',
    # slices of an array or of the parameters
    'a=(x .env); b=("${a[@]:1}"); cat "${b[0]}"',
    'a=(x y .env z); b=("${a[@]:2:1}"); cat "${b[0]}"',
    'set -- x .env; cat "${@:2}"',
    # what a function prints, a heredoc, part of a known text
    'f(){ echo .env; }; cat "$(f)"',
    'f(){ printf .env; }; x=$(f); cat "$x"',
    'x=$(cat <<EOF\n.env\nEOF\n); cat "$x"',
    'cat "$(head -c4 <<< .envxx)"',
    'cat "$(cut -c1-4 <<< .envxx)"',
    'cat "$(cut -d, -f2 <<< x,.env)"',
    'cat "$(echo xx.env | tail -c5)"',
    # an array's element set by a builtin; a decoder
    'printf -v "x[0]" .env; cat "${x[0]}"',
    'read "x[1]" <<< .env; cat "${x[1]}"',
    'cat "$(echo LmVudg== | openssl base64 -d)"',
    # `"$*"` joins the parameters by the first character of IFS
    'set -- .e nv; IFS=; cat "$*"',
    'f(){ IFS=; cat "$*"; }; f .e nv',
]


@pytest.mark.parametrize("command", SET_BY_BUILTINS)
def test_names_set_by_builtins_and_expansions_are_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


@pytest.mark.parametrize("command", COMPOUND)
def test_arrays_built_as_bash_builds_them_are_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


CALLS_AND_ARITHMETIC = [
    'echo(){ command cat "$@"; }; echo .env',
    'printf(){ builtin command cat "$1"; }; printf .env',
    'ls(){ cat "$@"; }; ls .env',
    'f(){ cat "$1$2"; }; f .e nv',
    'f(){ g "$@"; }; g(){ cat "$1$2"; }; f .e nv',  # a function defined after its caller
    ": $(( $(cat .env >&2; echo 1) ))",
    "echo $((`cat .env >&2` 1))",
    "x=(a); echo ${x[$(cat .env >&2; echo 0)]}",
    "x=abc; echo ${x:$(cat .env >&2; echo 0)}",
    'i=1; a1=.env; eval "cat \\$a$((i))"',
    'i=1; a2=.env; eval "cat \\$a$((i * 2))"',
    'x=(.env); cat "${x[$((0))]}"',
    # extended globs: once read as a word and a subshell (`cat .@` then `(env)`)
    "shopt -s extglob\ncat .@(env)",
    "shopt -s extglob\ncat .+(e)nv",
    "shopt -s extglob\ncat .?(x)env",
    "shopt -s extglob\ncat @(.env|x)",
]


@pytest.mark.parametrize("command", CALLS_AND_ARITHMETIC)
def test_function_calls_and_arithmetic_are_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


def test_a_function_call_destroying_by_its_argument_is_denied(root: Path) -> None:
    assert safety_in('f(){ rm -r "$1$2"; }; f ap p', root) == DESTROYS
    assert safety_in("shopt -s extglob\nrm -rf @(app)", root) == DESTROYS
    assert safety_in("declare -a x='(app)'; rm -rf \"${x[0]}\"", root) == DESTROYS


XARGS_ABUSES = [
    "printf 'cat\\n.env' > l; xargs -a l sh -c '$0 $1'",
    "printf '.env' > l; xargs -a l cat",
    "whoami > l; xargs -a l sh -c",
    "whoami > l; xargs -a l -I{} sh -c '{}'",
    "whoami > l; xargs -a l env",
    "whoami > l; xargs -a l python3",
]


@pytest.mark.parametrize("command", XARGS_ABUSES)
def test_xargs_words_from_a_written_file_stay_caught(root: Path, command: str) -> None:
    assert safety_in(command, root) in (SECRET, UNREADABLE)


def test_xargs_of_names_listed_earlier_is_read_as_its_pipe(root: Path) -> None:
    assert safety_in("ls -a > l; xargs -a l cat", root) == SECRET
    assert safety_in("whoami > l; xargs -a l -I{} rm -rf {}", root) == DESTROYS


BENIGN = [
    "ls app/*.py > l; xargs -a l wc -l",
    "find app -name '*.py' > l; xargs -a l wc -l",
    "git ls-files > l; xargs -a l grep -n TODO",
    "declare -a files=('app/main.py' 'README.md'); wc -l \"${files[@]}\"",
    "declare -a x='(README.md)'; cat \"${x[0]}\"",
    'declare -A ports=([web]=80 [db]=5432); for k in "${!ports[@]}"; do echo "$k"; done',
    'declare -A m=([a]=x [b]=README.md); cat "${m[b]}"',
    "declare x='(.env)'; echo \"$x\"",
    'f(){ local -a args=("$@"); echo "${args[@]}"; }; f a b',
    'log(){ echo "[$(date +%T)] $*"; }; log starting; cat README.md',
    'count(){ wc -l "$1"; }; count app/main.py',
    'mapfile -t files < <(ls app); wc -l "${files[@]/#/app/}"',
    'read -ra parts <<< "a b c"; echo "${parts[1]}"',
    "echo $(( (1 + 2) * 3 )) $(( $(wc -l < README.md) + 1 ))",
    'for i in 1 2; do echo "$((i * 2))"; done',
    "shopt -s extglob\nwc -l app/@(*.py|*.txt)",
    "shopt -s extglob\nls app/+([a-z]).py",
    'echo "a(b)" f\\(x\\)',
    'read -n 1 -p "ok?" a; echo "$a"',
    ': ${OUT:=build}; ls "$OUT"',
    "let n=1+2; echo $n; (( n = 3 )); ls app",
    "git log --oneline | head -5",
    "ls -a | head -3",
    'v(){ git describe --tags; }; echo "$(v)"',
    'cat "$(echo README.mdxx | head -c9)"',
    'IFS=,; set -- a b; echo "$*"',
    # a substitution whose command expands to no word runs nothing (the reading failed on it)
    "echo `$IFS`; cat README.md",
    'echo "$($IFS)" $( $EMPTY ); ls app',
]


@pytest.mark.parametrize("command", BENIGN)
def test_look_alikes_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED
