"""Commands the shell reading read as if they ran, set values for good, or ended a script.

* ``case x in x) :;; esac; cat .env``: after ``;;`` the parser took every word for a pattern
  until a ``)``, ``esac`` included, so nothing after the ``case`` was read.
* ``x=.env; (x=a); cat $x``: an assignment (``read``, ``printf -v``, ``declare``, ``unset`` …)
  in a subshell, a pipeline, the background, a substitution, after ``&&``/``||``, in a compound
  command or a function's body may not last; it replaced the value before, which ``cat`` reads.
  Such a command now adds its values to those before (one reading too many).
* ``readonly x=.env; read x <<< a; cat $x``: ``read``, ``printf -v``, ``declare``, ``mapfile``,
  ``let``, ``export`` and ``unset`` fail on a read-only variable and the script goes on: the
  value stays.

Each behaviour was checked against bash 5.2.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET, safety_in, secret_workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(tmp_path, {"README.md": "# x\n", "app/main.py": "print(1)\n"}, ("app",))


AFTER_A_CASE = [
    "case x in x) :;; esac; cat .env",
    "case x in esac; cat .env",
    "case x in x|y) echo;; z) echo;; esac; cat .env",
    "case x in (x) echo;; esac\ncat .env",
    "case x in x) echo;;& *) echo;; esac; cat .env",
]


@pytest.mark.parametrize("command", AFTER_A_CASE)
def test_what_follows_a_case_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


def test_a_destruction_after_a_case_is_denied(root: Path) -> None:
    assert safety_in("case x in x) : ;; esac && rm -rf app", root) == DESTROYS


NOT_LASTING = [
    "x=.env; (x=a); cat $x",
    "x=.env; { x=a; } | cat; cat $x",
    "x=.env; echo a | read x; cat $x",
    "x=.env; false && x=a; cat $x",
    "x=.env; true || x=a; cat $x",
    "x=.env; if false; then x=a; fi; cat $x",
    "x=.env; while false; do x=a; done; cat $x",
    "x=.env; case z in y) x=a;; esac; cat $x",
    "x=.env; f(){ x=a; }; cat $x",
    "x=.env; : $(x=a); cat $x",
    "x=.env; x=a & cat $x",
    "x=.env; (read x <<< a); cat $x",
    "x=.env; false && printf -v x a; cat $x",
    "x=.env; false && declare x=a; cat $x",
    "x=.env; false && unset x; cat ${x:-README.md}",
    'x=.env; false && x=$(whoami); cat "$x"',
    "set -- .env; (set -- a); cat $1",
]


@pytest.mark.parametrize("command", NOT_LASTING)
def test_a_value_set_by_a_command_that_may_not_run_adds_to_the_one_before(
    root: Path, command: str
) -> None:
    assert safety_in(command, root) == SECRET


READ_ONLY = [
    "readonly x=.env; read x <<< a; cat $x",
    "readonly x=.env; printf -v x a; cat $x",
    "readonly x=.env; declare x=a; cat $x",
    "readonly x=.env; unset x; cat ${x:-README.md}",
    "x=.env; readonly x; read x <<< a; cat $x",
    "declare -r x=.env; mapfile -t x <<< a; cat $x",
    "typeset -r x=.env; let x=1; cat $x",
    "readonly x=.env; export x=a; cat $x",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_read_only_variable_keeps_its_value(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


def test_a_variable_read_only_in_a_subshell_only_still_changes(root: Path) -> None:
    assert safety_in("x=a; (readonly x); x=.env; cat $x", root) == SECRET


BENIGN = [
    'declare -r VERSION=1.2; echo "$VERSION"; ls app',
    'readonly OUT=build; ls "$OUT" 2>/dev/null; cat README.md',
    'case "$1" in start) echo go;; stop) echo halt;; *) echo usage;; esac; ls',
    "case x in x) echo esac;; esac; ls app",
    "x=README.md; x=app/main.py; cat $x",
    "f=README.md; [ -f app/main.py ] && f=app/main.py; wc -l $f",
    'out=build; (cd app && ls); ls "$out" 2>/dev/null; echo done',
    "n=0; for f in app/*.py; do n=$((n + 1)); done; echo $n",
    'msg="fix"; git diff --quiet || msg="wip"; git commit -q --allow-empty -m "$msg"',
    "IFS=,; read -r a b <<< 'x,y'; echo $a",
]


@pytest.mark.parametrize("command", BENIGN)
def test_look_alikes_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED
