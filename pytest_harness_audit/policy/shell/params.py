"""The operators of ``${NAME<op>}`` on a known value, as bash applies them.

``${v:1:4}`` (a slice), ``${v#pat}``/``${v##pat}``/``${v%pat}``/``${v%%pat}`` (a prefix or
suffix removed), ``${v,,}``/``${v^^}``/``${v,}``/``${v^}`` (case), ``${v/pat/rep}``,
``${v//pat/rep}``, ``${v/#pat/rep}``, ``${v/%pat/rep}`` (replacement) and ``${v[N]}`` (an
array's element: every element, one reading too many); on ``${a[@]<op>}`` and ``${@<op>}``,
each word in turn (``${a[@]/#/.}`` of ``a=(env)`` names ``.env``); ``${v,,[NV]}`` (the case
of some letters), ``${v@L}``/``${v@U}``/``${v@u}``/``${v@Q}``/``${v@E}``/``${v@P}``
(transformations), ``${a[@]@k}``/``${a[@]@K}`` (an array's keys and values); ``${!NAME}``
(indirection) and ``${!PREFIX@}`` (the names of variables). A value built so
(``v=x.envx; cat ${v:1:4}``) is then judged as what it names.
An operator this module does not know, or whose pattern is not a plain glob, gives ``None``:
the value stays unknown, as before.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.shell.arith import arithmetic
from pytest_harness_audit.policy.shell.fieldtext import posix_brackets
from pytest_harness_audit.policy.shell.loops import element
from pytest_harness_audit.policy.shell.nodes import Param, ansi_c, prompt_text
from pytest_harness_audit.policy.shell.splitting import IFS

_SLICE: Final = re.compile(r":\s*(-?\s*\d{1,6})?\s*(?::\s*(-?\s*\d{1,6})\s*)?")
_PLAIN_PATTERN: Final = re.compile(r"[^$`\"'\\{}()]*")
_MAX_VALUE: Final = 4096
_MAX_WORDS: Final = 256
#: Longest value a glob pattern is replaced in (each place and length is tried).
_GLOB_VALUE: Final = 128
#: ``$n``, ``${n}``, ``$((…))`` in an offset's arithmetic: the name, the expression.
_ARITH_DOLLARS: Final = re.compile(r"\$\(\((.*)\)\)|\$\{?([A-Za-z_]\w*)\}?")


def operate(
    value: str,
    op: str,
    items: list[str] | None = None,
    every: bool = False,
    variables: dict[str, str] | None = None,
) -> str | None:
    """``${NAME<op>}`` for ``NAME``'s known ``value``; ``None`` when it cannot be worked out.
    ``items``: the words of an array ``NAME`` (else its value's); ``every``: ``NAME`` is ``@``
    or ``*``, whose operator applies to each word as an array's ``${a[@]<op>}`` does;
    ``variables``: the script's, which a prompt expansion ``${v@P}`` uses."""
    if len(value) > _MAX_VALUE or len(op) > _MAX_VALUE:
        return None
    if op[:1] == "[" and "]" in op and not op.endswith("]"):  # `${a[@]/#/.}`, `${a[0]%x}`
        words = value.split() if items is None else items  # (`[N]`: every word, one too many)
        return _each(words, op[op.index("]") + 1 :])
    if every:  # `${@/#/.}`; `${@:2}` counts from `$0`
        words = value.split() if items is None else items
        return _each(["$0", *words] if op[:1] == ":" else words, op)
    if op.startswith(":"):
        return _slice(value, op, variables or {})
    if op[:1] in (",", "^", "~"):
        return _case(value, op)
    if op[:1] == "@":
        return _transform(value, op[1:], variables or {})
    if op.startswith("[") and op.endswith("]") and len(op) <= 66:
        return value  # an element of an array (:mod:`.syntax` keeps them all as one value)
    if op.startswith(("#", "%")):
        return _remove(value, op)
    if op.startswith("/"):
        return _replace(value, op[1:])
    return None


def _case(value: str, op: str) -> str | None:
    """``${v,,}``, ``${v^^}``, ``${v,}``, ``${v^}``, and with a pattern of the letters to
    change (``${v,,[NV]}``)."""
    every = op[:2] in (",,", "^^", "~~")
    pattern = op[2:] if every else op[1:]
    if not _PLAIN_PATTERN.fullmatch(pattern):
        return None
    change = {",": str.lower, "^": str.upper}.get(op[0], str.swapcase)  # `~`: toggled
    count = len(value) if every else 1
    return "".join(
        change(char)
        if i < count and (not pattern or wildcards.fnmatchcase(char, pattern))
        else char
        for i, char in enumerate(value)
    )


_PROMPT_NAME: Final = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")


def _transform(value: str, letter: str, variables: dict[str, str]) -> str | None:
    """``${v@L}``, ``${v@U}``, ``${v@u}``, ``${v@Q}``, ``${v@E}`` (escapes, as ``$'…'``),
    ``${v@P}`` (a prompt: its ``$NAME`` of known variables; other prompt escapes unknown)."""
    if letter in ("L", "U", "u"):
        return (
            value.lower()
            if letter == "L"
            else value.upper()
            if letter == "U"
            else _case(value, "^")
        )
    if letter in ("Q", "K", "k"):  # (`K`, `k` of a scalar: quoted as `Q` quotes)
        return "'" + value.replace("'", "'\\''") + "'"
    if letter == "E":
        return ansi_c(value)
    if letter != "P":
        return None
    value, exact = prompt_text(value)  # `.e\\156v`: `.env`
    if not exact or any(mark in value for mark in ("\\", "`", "$(")):
        return None
    unknown = [m for m in _PROMPT_NAME.finditer(value) if (m[1] or m[2]) not in variables]
    return None if unknown else _PROMPT_NAME.sub(lambda m: variables[m[1] or m[2]], value)


def _each(words: list[str], op: str) -> str | None:
    """``${a[@]/#/.}``, ``${a[@]%x}``, ``${@,,}``: the operator on each word (an array's slice
    ``${a[@]:1}``: every word, one reading too many)."""
    if op.startswith(":"):  # `${a[@]:1:2}`: those words
        match = _SLICE.fullmatch(op)
        if match is None:
            return " ".join(words)
        start = int((match.group(1) or "0").replace(" ", ""))
        start = max(len(words) + start, 0) if start < 0 else start
        length = match.group(2)
        stop = len(words) if length is None else start + int(length.replace(" ", ""))
        return " ".join(words[start:stop] if stop >= start else words)
    done = [operate(word, op) for word in words[:_MAX_WORDS]]
    return None if any(word is None for word in done) else " ".join(map(str, done))


def _slice(value: str, op: str, variables: dict[str, str]) -> str | None:
    match = _SLICE.fullmatch(op)
    if match is None and op.count(":") <= 2:  # `${v:0:n}`, `${v:0:$((2+2))}`: arithmetic
        parts = [
            arithmetic(_ARITH_DOLLARS.sub(r"\1\2", part) or "0", variables)
            for part in op.split(":")[1:]
        ]
        match = None if None in parts else _SLICE.fullmatch(":" + ":".join(map(str, parts)))
    if match is None:
        return None
    offset = int((match.group(1) or "0").replace(" ", ""))  # `${v::4}`: from the start
    start = max(len(value) + offset, 0) if offset < 0 else min(offset, len(value))
    if match.group(2) is None:
        return value[start:]
    length = int(match.group(2).replace(" ", ""))
    stop = len(value) + length if length < 0 else start + length
    return value[start:stop] if stop >= start else None


def _remove(value: str, op: str) -> str | None:
    longest = op[:2] in ("##", "%%")
    pattern = op[2:] if longest else op[1:]
    if not _PLAIN_PATTERN.fullmatch(pattern):
        return None
    cuts = range(len(value) + 1)
    if op.startswith("#"):
        ordered = reversed(cuts) if longest else cuts
        for cut in ordered:
            if wildcards.fnmatchcase(value[:cut], pattern):
                return value[cut:]
        return value
    ordered = cuts if longest else reversed(cuts)
    for cut in ordered:
        if wildcards.fnmatchcase(value[cut:], pattern):
            return value[:cut]
    return value


def _replace(value: str, body: str) -> str | None:
    every = body.startswith("/")
    anchor = body[:1] if body[:1] in ("#", "%") else ""
    if every or anchor:
        body = body[1:]
    pattern, _, replacement = body.partition("/")
    if not _PLAIN_PATTERN.fullmatch(pattern + replacement) or not (pattern or anchor):
        return None  # (an empty pattern anchored: `${v/#/pre}` adds to the start)
    if any(char in pattern for char in "*?["):  # (`${v//[A-Z]/}`: a glob, in a short value)
        return _glob_replace(value, posix_brackets(pattern), replacement, every, anchor)
    if anchor == "#":
        return replacement + value[len(pattern) :] if value.startswith(pattern) else value
    if anchor == "%":
        return (
            value[: len(value) - len(pattern)] + replacement if value.endswith(pattern) else value
        )
    return value.replace(pattern, replacement, -1 if every else 1)


def _glob_replace(
    value: str, pattern: str, replacement: str, every: bool, anchor: str
) -> str | None:
    """``${v/pattern/rep}`` of a glob ``pattern``: the longest match at the first place it
    matches (each such place, ``every``; anchored: at the start or the end)."""
    if len(value) > _GLOB_VALUE:
        return None
    out, at, size = "", 0, len(value)
    while at <= size:
        starts = [0] if anchor == "#" else range(at, size + 1)
        for start in starts:
            ends = [size] if anchor == "%" else range(size, start, -1)
            end = next((e for e in ends if wildcards.fnmatchcase(value[start:e], pattern)), None)
            if end is not None:
                break
        else:
            return out + value[at:]
        out += value[at:start] + replacement
        at = end
        if not every or anchor:
            return out + value[at:]
    return out


_PREFIX: Final = re.compile(r"[A-Za-z_]\w*[@*]")


def operated(
    part: Param,
    variables: dict[str, str],
    lists: dict[str, list[str]],
    keys: dict[str, list[str]] | None = None,
) -> str | None:
    """``${NAME<op>}`` and ``${!NAME}`` of a script whose variables and lists (:mod:`.loops`)
    are known so far (``keys``: arrays' keys, :mod:`.arrays`); ``None`` when the value cannot be
    worked out."""
    op = part.op
    if op is None:
        return None
    if part.name == "!":  # indirection: the variable named by NAME's value
        if op[-3:] in ("[@]", "[*]"):  # `${!a[@]}`: the array's keys
            name = op[:-3]
            known = (keys or {}).get(name)
            items = lists.get(name)
            if known is None and items is not None:
                known = [str(index) for index in range(len(items))]
            return None if known is None else " ".join(known)
        return indirect(op, variables, lists)
    items = lists.get(part.name)
    known = keys.get(part.name) if keys and items is not None else None
    if items is not None and op in ("[@]@k", "[*]@k", "[@]@K", "[*]@K"):  # keys and values
        names = known if known and len(known) == len(items) else map(str, range(len(items)))
        quote = '"{}"'.format if op[-1] == "K" else str  # (`@k`: each a word of its own)
        return " ".join(f"{key} {quote(item)}" for key, item in zip(names, items, strict=False))
    if (  # `${m[k]}` of `m=([k]=.env)`: the element of that key
        known is not None
        and items is not None
        and len(known) == len(items)
        and op[:1] == "["
        and op[-1:] == "]"
        and op[1:-1] in known
    ):
        return items[known.index(op[1:-1])]
    if (item := element(items, op, variables.get("IFS", IFS))) is not None:
        return item  # `${a[1]}` of `a=(.e nv)`, `${a[*]}` joined by `IFS`
    value = variables.get(part.name)
    every = part.name in ("@", "*")
    return None if value is None else operate(value, op, items, every, variables)


def indirect(op: str, variables: dict[str, str], lists: dict[str, list[str]]) -> str | None:
    """``${!NAME}`` (the value of the variable NAME's value names; of each, when NAME holds
    a list) and ``${!PREFIX@}``/``${!PREFIX*}`` (the names of the variables set that start so)."""
    if _PREFIX.fullmatch(op):
        return " ".join(sorted(name for name in variables if name.startswith(op[:-1])))
    names = lists.get(op)
    if names is None:
        target = variables.get(op)
        return None if target is None else variables.get(target)
    values = [variables.get(name) for name in names[:_MAX_WORDS]]
    return None if any(v is None for v in values) else " ".join(map(str, values))


def referred(part: Param, refs: dict[str, str]) -> Param:
    """A parameter of a nameref (``declare -n r=f``; ``$r``, ``${r:1}``) as one of the variable
    it names (``$f``), followed through a chain of namerefs."""
    name = part.name
    for _ in range(8):
        if name not in refs:
            break
        name = refs[name]
    return dataclasses.replace(part, name=name or "?")


__all__ = ["indirect", "operate", "operated", "referred"]
