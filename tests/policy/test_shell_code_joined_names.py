"""Paths program text builds by joining literals and variables that hold literals: Perl's and
PHP's ``.``, Lua's ``..``, ``+`` elsewhere (``a='.e'; b='nv'; open(a+b)``,
``$a=".e"; readfile($a.$b)``). Each is read as the path it builds; a variable given a value
twice, or built at run time, is not known; ordinary joins of words stay allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET, safety_in, secret_workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace holding ``.env``, an ``app`` folder and a few project files."""
    files = {"README.md": "hello\n", "app/main.py": "print('hi')\n", "composer.json": "{}\n"}
    return secret_workspace(tmp_path, files, folders=("app",))


SECRET_READS = [
    """php -r 'echo file_get_contents(".e"."nv");'""",
    """php -r '$f=".e" . "nv"; readfile($f);'""",
    """php -r 'echo file_get_contents("." . "e" . "n" . "v");'""",
    """perl -e 'open F, ".e"."nv"; print <F>'""",
    """lua -e 'print(io.open(".e".."nv"):read("a"))'""",
    """perl -e '$a=".e"; $b="nv"; open F, $a.$b; print <F>'""",
    """perl -e 'my $a = ".e"; open(my $f, "<", $a . "nv"); print <$f>'""",
    """php -r '$a=".e"; $b="nv"; readfile($a.$b);'""",
    """php -r '$a=".e"; readfile($a."nv");'""",
    """python3 -c "a='.e'; b='nv'; print(open(a+b).read())\"""",
    """python3 -c "a = '.e'; print(open(a + 'nv').read())\"""",
    """node -e 'const a=".e", b="nv"; console.log(require("fs").readFileSync(a+b,"utf8"))'""",
    """node -e 'let a = ".e"; let b = "nv"; console.log(require("fs").readFileSync(a + b))'""",
    """ruby -e 'a=".e"; b="nv"; puts File.read(a+b)'""",
]

DELETIONS = [
    """python3 -c "import shutil; d='ap'; shutil.rmtree(d+'p')\"""",
    """perl -e 'my $d="ap"; system("rm -rf ".$d."p")'""",
]

BENIGN = [
    """perl -e 'print "a" . "b"'""",
    """php -r 'echo "Hello " . "world";'""",
    """perl -e 'print "ok"."\\n"'""",
    """perl -e '$name="World"; print "Hello ".$name'""",
    """python3 -c "name='World'; print('Hello '+name)\"""",
    """python3 -c "import os; p=os.path; print(p.exists('README.md'))\"""",
    """php -r '$f="composer"; echo file_get_contents($f.".json");'""",
    """node -e 'let base="app"; console.log(require("fs").readFileSync(base+"/main.py","utf8"))'""",
    """python3 -c "ext='.md'; print(open('README'+ext).read())\"""",
]


@pytest.mark.parametrize("command", SECRET_READS)
def test_a_secret_path_built_by_joins_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


@pytest.mark.parametrize("command", DELETIONS)
def test_a_deletion_built_by_joins_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == DESTROYS


@pytest.mark.parametrize("command", BENIGN)
def test_ordinary_joins_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED
