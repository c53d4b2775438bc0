"""Which ids of program text can hold its parent's (or its own group's) process id.

Code that finds its parent (``print(os.getppid())``, ``puts Process.ppid``) and signals a
process it started (``os.kill(child.pid, 15)``) or read (``os.kill(int(open(F).read()), 15)``)
sends no signal to its parent. :mod:`.code_signals` asks, for the id a sender is given, whether
it can carry the parent's: it can when it names

* a variable given a value that holds the parent (``p = os.getppid()``, ``my $p = getppid``,
  ``const p = process.ppid``), directly or through other such variables (``q = p``), by any
  binding (``=``, ``+=``, ``:=``, ``with … as p``, ``for p in …``, a tuple, an attribute, an item);
* a parameter (``def stop(pid): os.kill(pid, 9)``, ``|pid|``, ``my $p = shift``), a function
  the code defines (``os.kill(parent(), 9)``), or a variable the code never binds: where such an
  id comes from is not known, so it is taken to be the parent's.

A heuristic like the rest of :mod:`.code_signals`: code is not parsed. A binding taints every
name on its left side, the whole statement counted as its right side where the shape is unsure,
so an id is let through only when every name it is made of was given a value free of the parent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

#: What finds the parent or the own group (:data:`.code_signals._PARENT`, its own group).
_PARENT: Final = re.compile(
    r"(?i)ppid|\bparents?\s*\(|getpgrp|posix_getpgrp|getpgid\s*\(\s*(?:0|(?:os\.)?getpid\(\s*\)"
    r"|\$\$|process\.pid|Process\.pid)?\s*\)"
)
#: Where one statement ends.
_STATEMENTS: Final = re.compile(r"[\n;]")
#: An assignment: ``=`` (not ``==``, ``=>``, ``=~``, ``<=``, ``>=``, ``!=``), ``+=``, ``:=``.
_ASSIGN: Final = re.compile(r"(?<![=!<>])(?:[-+*/%|&^.:]|\*\*|//|\|\||&&|\?\?)?=(?![=~>])")
#: ``… as NAME`` (``with``, ``except``, ``import``) and ``for NAMES in``/``of``/``foreach``.
_AS: Final = re.compile(r"\bas\s+([A-Za-z_]\w*)")
#: ``import a, b`` and ``from m import a, b``: module names, bound.
_IMPORT: Final = re.compile(r"^\s*(?:from\s+[\w.]+\s+)?import\s+([\w., \t]+)")
_FOR: Final = re.compile(r"\bfor(?:each)?\b\s*(?:my\s+)?\(?([^;\n]*?)\b(?:in|of)\b")
#: Parameters: ``def f(a)``, ``def f a``, ``function f(a)``, ``lambda a:``, ``(a) =>``, ``a =>``,
#: Ruby's ``|a|`` and ``->(a)``.
_PARAMETERS: Final = re.compile(
    r"\bdef\s+[\w.]+\s*\(([^)]*)\)|\bdef\s+[\w.]+[ \t]+([^\n;(]*)|\bfunction\b\s*\w*\s*\(([^)]*)\)"
    r"|\blambda\b([^:\n]*):|\(([^()]*)\)\s*=>|\b([A-Za-z_]\w*)\s*=>|\|([^|\n]*)\||->\s*\(([^)]*)\)"
)
#: Values a function's caller gives (Perl's ``shift``, ``@_``, ``$_[0]``; ``arguments``).
_CALLER_GIVEN: Final = re.compile(r"\bshift\b|@_|\$_\[|\barguments\b")
#: A function the code defines.
_DEFINED: Final = re.compile(r"\b(?:def|function|sub)\s+(?:self\.)?([A-Za-z_]\w*)")
_NAME: Final = re.compile(r"[$@%]?([A-Za-z_]\w*)")
#: A name that is a value's root: not an attribute (after ``.``), not called.
_ROOT: Final = re.compile(r"(?<![\w.$@%])[$@%]?([A-Za-z_]\w*)\b(?!\s*\()")
_LITERAL: Final = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\"""")
#: Words that are no variable a value can be read from.
_WORDS: Final = frozenset(
    {"my", "our", "local", "const", "let", "var", "None", "True", "False", "null", "nil",
     "undefined", "true", "false", "self", "this", "int", "str", "Number", "parseInt"}
)  # fmt: skip
_MAX_ROUNDS: Final = 32


def parent_carriers(code: str) -> Callable[[str], bool]:
    """For ``code`` (its literals blanked), whether an id written as the given text can hold the
    parent's or the own group's process id (module doc)."""
    bindings: list[tuple[set[str], str]] = []
    bound: set[str] = set()
    for statement in _STATEMENTS.split(code):
        bindings.extend(_bindings(statement))
    for targets, _ in bindings:
        bound |= targets
    tainted = set(_DEFINED.findall(code))
    for match in _PARAMETERS.finditer(code):
        tainted |= _names(next(group for group in match.groups() if group is not None))
    for _ in range(_MAX_ROUNDS):
        grown = False
        for targets, value in bindings:
            if targets <= tainted:
                continue
            if _PARENT.search(value) or _CALLER_GIVEN.search(value) or _names(value) & tainted:
                tainted |= targets
                grown = True
        if not grown:
            break

    def carries(pid: str) -> bool:
        text = _LITERAL.sub("''", pid)
        if _PARENT.search(text) or _names(text) & tainted:
            return True
        roots = set(_ROOT.findall(text)) - _WORDS
        return bool(roots - bound)

    return carries


def _bindings(statement: str) -> list[tuple[set[str], str]]:
    """The bindings of one statement: the names each gives a value, and the text of that value
    (the rest of the statement)."""
    found: list[tuple[set[str], str]] = []
    start = 0
    for match in _ASSIGN.finditer(statement):
        targets = _names(statement[start : match.start()])
        if targets:
            found.append((targets, statement[match.end() :]))
        start = match.end()
    for match in _AS.finditer(statement):
        found.append(({match.group(1)}, statement))
    imported = _IMPORT.match(statement)
    if imported is not None:
        found.append((_names(re.sub(r"\b[\w.]+\s+as\b", "", imported.group(1))), statement))
    for match in _FOR.finditer(statement):
        targets = _names(match.group(1))
        if targets:
            found.append((targets, statement[match.end() :]))
    return found


def _names(text: str) -> set[str]:
    """The names written in ``text``, without their sigils (``$p`` → ``p``)."""
    return {name for name in _NAME.findall(text) if name not in _WORDS}


__all__ = ["parent_carriers"]
