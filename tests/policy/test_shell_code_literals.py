"""A name program text builds from literals without ``+`` (adjacent literals, a reversed
literal, a join or a format of literals) is read as the name it builds."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.policy.shell.code_literals import built_literals


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(tmp_path, {"README.md": "# x\n"}, ("app",))


@pytest.mark.parametrize(
    "command",
    [
        'python3 -c \'print(open(".e" "nv").read())\'',
        "python3 -c \"print(open('.%s' % 'env').read())\"",
        "python3 -c \"print(open('.%s%s' % ('e', 'nv')).read())\"",
        "python3 -c \"print(open('.{}'.format('env')).read())\"",
        "python3 -c \"print(open(''.join(['.e', 'nv'])).read())\"",
        "python3 -c \"print(open('vne.'[::-1]).read())\"",
        "node -e \"console.log(require('fs').readFileSync(['.e','nv'].join('')))\"",
        'awk \'BEGIN { while ((getline l < (".e" "nv")) > 0) print l }\'',
    ],
)
def test_a_name_built_from_literals_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("deny", "deny-secret-files")


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"print('%s items' % 'five')\"",
        "python3 -c \"print(', '.join(['a', 'b']))\"",
        "python3 -c \"print('a' 'b')\"",
        "node -e \"console.log(['a','b'].join(' '))\"",
        "python3 -c \"print(open('README' '.md').read())\"",
        "python3 -c \"print('%d%%' % 5)\"",
    ],
)
def test_ordinary_literals_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)


def test_built_literals() -> None:
    assert built_literals("x = 'a' 'b'") == ["'ab'"]
    assert built_literals("'%s-%s' % ('a',)") == []  # a count that does not fit: not built
    assert built_literals("print('x')") == []
