"""Paths program text builds from literals with its language's path calls.

``os.path.join('..', 'audit')``, ``Path('..') / 'audit'``, ``Path('..').joinpath('audit')``,
``'/'.join(['..', 'audit'])``, ``path.join('..', 'audit')`` (Node, ``require('path')`` too),
``File.join('..', 'audit')`` (Ruby), ``filepath.Join("..", "audit")`` (Go),
``Paths.get("..", "audit")`` (Java): each names ``../audit`` though no literal of the text does.
The parent folder written as code (``Path.cwd().parent``, ``os.path.dirname(os.getcwd())``,
``os.path.abspath('..')``) counts as ``'..'``. A heuristic like the rest of :mod:`.code`: calls
whose arguments are all literals (after those rewrites) are joined; anything computed otherwise
(``os.chdir('..')`` and then ``'audit'``) is not known.
"""

from __future__ import annotations

import re
from typing import Final

_LIT: Final = r"""(?:'[^'\\\n]{0,256}'|"[^"\\\n]{0,256}")"""
_LITS: Final = rf"""{_LIT}(?:\s*,\s*{_LIT}){{0,15}}"""
#: The parent of the working folder, written as code.
_PARENT: Final = re.compile(
    r"""\b(?:pathlib\.)?Path\.cwd\(\)\.(?:resolve\(\)\.)?parent\b(?!\.)"""
    r"""|\b(?:pathlib\.)?Path\(\s*['"]\.?['"]\s*\)\.(?:resolve|absolute)\(\)\.parent\b(?!\.)"""
    r"""|\bos\.path\.dirname\(\s*os\.(?:getcwd|getcwdb)\(\)\s*\)"""
    r"""|\bos\.path\.(?:abspath|realpath|normpath)\(\s*(['"])\.\.\1\s*\)"""
)
#: A call joining its literal arguments into one path.
_JOIN_CALL: Final = re.compile(
    r"""(?:\b(?:os\.path\.join|posixpath\.join|path\.posix\.join|path\.join|path\.resolve"""
    r"""|File\.join|File\.expand_path|filepath\.Join|path\.Join|Paths\.get|Path\.of"""
    r"""|require\(\s*['"](?:node:)?path['"]\s*\)\.(?:posix\.)?(?:join|resolve)"""
    rf"""|(?:pathlib\.)?(?:Pure(?:Posix)?Path|PosixPath|Path)))\(\s*({_LITS})\s*,?\s*\)"""
)
#: ``Path('..').joinpath('audit')`` after the ``Path`` is a literal.
_JOINPATH: Final = re.compile(rf"""({_LIT})\.joinpath\(\s*({_LITS})\s*,?\s*\)""")
#: ``'/'.join([...])`` of literals.
_SLASH_JOIN: Final = re.compile(rf"""(['"])/\1\.join\(\s*[\[(]\s*({_LITS})\s*,?\s*[\])]\s*\)""")
#: A literal divided by a literal (a ``Path`` after the rewrites: ``'..' / 'audit'``).
_DIVIDED: Final = re.compile(rf"""({_LIT})\s*/\s*({_LIT})""")
_EACH: Final = re.compile(_LIT)
_ROUNDS: Final = 16
#: Most paths built from one text.
_MAX_BUILT: Final = 64


def joined_paths(text: str) -> list[str]:
    """The paths ``text`` builds with path calls of literals, each as a quoted literal
    (``'../audit'``), for :func:`.code.code_paths` to read as it reads any literal."""
    if not any(word in text for word in ("join", "Join", "Path", "path", "resolve", "get(")):
        return []
    before = set(_EACH.findall(text))
    rewritten = _PARENT.sub("'..'", text)
    for _ in range(_ROUNDS):
        step = _JOIN_CALL.sub(lambda m: _quoted(_parts(m.group(1))), rewritten)
        step = _JOINPATH.sub(lambda m: _quoted(_parts(f"{m.group(1)},{m.group(2)}")), step)
        step = _SLASH_JOIN.sub(lambda m: _quoted(_parts(m.group(2))), step)
        step = _DIVIDED.sub(lambda m: _quoted(_parts(f"{m.group(1)},{m.group(2)}")), step)
        if step == rewritten:
            break
        rewritten = step
    built = [word for word in _EACH.findall(rewritten) if word not in before]
    return [word for word in built if "/" in word][:_MAX_BUILT]


def _parts(arguments: str) -> list[str]:
    return [literal[1:-1] for literal in _EACH.findall(arguments)]


def _quoted(parts: list[str]) -> str:
    """``parts`` joined as a path (an absolute part starts it anew, as the calls do)."""
    path = ""
    for part in parts:
        if part.startswith("/") or not path:
            path = part
        elif part:
            path = f"{path.rstrip('/')}/{part}"
    quote = "'" if "'" not in path else '"'
    return f"{quote}{path}{quote}"
