"""Shell builtins that set what later words expand to: ``set --``, ``read``, ``printf -v``,
``alias``, ``unset``, and an alias used as a command.

``set -- .env; cat $1`` (``"$@"``, ``shift`` too), ``read f <<< .env; cat $f``, ``mapfile -t a
<<< .env; cat ${a[0]}``, ``printf -v f '.%s' env; cat $f``: the
value is known from the text, so the reading follows it as it follows ``f=.env``. An alias
(``alias c='cat .env'``) is read as the text it stands for where it is used (``c``), whether or
not the shell would expand it there (``expand_aliases``): one reading too many, never too few.
``x=README.md; unset x; cat ${x:-.env}``: an unset variable (or element) gives the default word.
"""

from __future__ import annotations

import re
import shlex
import warnings
from typing import Final

from pytest_harness_audit.policy.shell.arith import arithmetic
from pytest_harness_audit.policy.shell.arrays import assignment
from pytest_harness_audit.policy.shell.expand import Expander, echo_output
from pytest_harness_audit.policy.shell.fieldtext import posix_brackets
from pytest_harness_audit.policy.shell.nodes import Lit

#: Most positional parameters or ``read`` names set from one command.
_MAX_NAMES: Final = 64


#: The builtins :func:`builtin` follows.
STATEFUL: Final = frozenset(
    {"set", "read", "printf", "alias", "shopt", "setopt", "unsetopt", "hash", "shift", "mapfile",
     "readarray", "declare", "typeset", "local", "[[", "let", "unset", "(("}
)  # fmt: skip
_NAMEREF: Final = frozenset({"declare", "typeset", "local"})
#: Shell options under which ``*`` matches dotfiles (bash ``dotglob``, zsh ``globdots``).
_DOT_OPTIONS: Final = frozenset({"dotglob", "globdots", "glob_dots"})


def builtin(
    argv: list[str],
    dynamic: list[bool],
    expander: Expander,
    stdin: str | None,
    ifs: str | None = None,
) -> None:
    """Record what ``set --``, ``read``, ``printf -v`` and ``alias`` set (nothing else); a
    value with a part the reading cannot know unsets the name instead (``ifs``: the ``IFS``
    given to the command alone, ``IFS=, read a b``)."""
    name = argv[0] if argv else ""
    if name == "hash":
        _hash(argv[1:], expander)
        return
    if name in _NAMEREF:
        _namerefs(argv[1:], dynamic[1:], expander)
        return
    if name == "[[":
        _rematch(argv, dynamic, expander)
        return
    if name == "unset":
        _unset(argv[1:], dynamic[1:], expander)
        return
    if name == "((":  # `(( i = 1 ))`, `((i++))`, `(( i++, j = 2 ))`: each, in turn
        _arithmetic_command(" ".join(argv[1:]), expander, any(dynamic[1:]))
        return
    if name == "let" or name not in STATEFUL:  # `let i=1`; `i++` (a word of its own)
        given = (argv[1:], dynamic[1:]) if name == "let" else ([" ".join(argv)], [any(dynamic)])
        for expression, unknown in zip(*given, strict=False):
            _let(expression, expander, unknown)
        return
    if any(dynamic):
        if name == "printf" and len(argv) >= 3 and argv[1] == "-v":
            expander.variables.pop(argv[2], None)
        elif name == "set":
            _set_loose(argv[1:], dynamic[1:], expander)
        return
    if name == "set":
        _set(argv[1:], expander)
    elif name == "read" and stdin is not None:
        _read(argv[1:], expander, stdin, ifs if ifs is not None else expander.variables.get("IFS"))
    elif name in ("mapfile", "readarray") and stdin is not None:
        _mapfile(argv[1:], expander, stdin)
    elif name == "shift":
        count = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
        values = _positionals(expander)
        names = expander.lists.get("1")  # `set -- $(ls -a | awk …)`: each holds every name
        _set(["--", *values[count:]], expander)
        if names is not None and len(values) > count:
            _loosen(expander, names, len(values) - count)
    elif name == "printf" and len(argv) >= 4 and argv[1] == "-v":
        text = echo_output(["printf", *argv[3:]])
        if text is None:
            expander.variables.pop(argv[2], None)
        elif not _element(expander, argv[2], text):  # (`printf -v 'a[0]' …`: an element)
            expander.variables[argv[2]] = text
    elif name in ("shopt", "setopt", "unsetopt"):
        options = {word.lower() for word in argv[1:]}
        if options & _DOT_OPTIONS and (name != "shopt" or {"-s", "-u"} & options):
            expander.dotglob = name == "setopt" or (name == "shopt" and "-s" in options)
    elif name == "alias":
        for word in argv[1:]:
            alias, sep, text = word.partition("=")
            if sep and alias and not alias.startswith("-"):
                expander.aliases[alias] = text


_ARITHMETIC_SET: Final = re.compile(r"\s*([A-Za-z_]\w*)\s*([-+*/%]?=(?!=)|\+\+|--)\s*(.*)", re.S)
_PRE: Final = re.compile(r"\s*(\+\+|--)\s*([A-Za-z_]\w*)\s*")
#: An arithmetic command the parser gives as words (``(( i = 1 ))``: ``i``, ``=``, ``1``).
ARITHMETIC: Final = re.compile(r"[A-Za-z_]\w*(?:\+\+|--)?")
ASSIGN_OPERATORS: Final = frozenset({"=", "+=", "-=", "*=", "/=", "%="})


def _let(expression: str, expander: Expander, unknown: bool) -> None:
    """An arithmetic assignment (``i = 1``, ``i += 2``, ``i++``, ``++i``): the variable's new
    value when known, else the variable is not known."""
    pre = _PRE.fullmatch(expression)
    match = _ARITHMETIC_SET.match(expression) if pre is None else None
    if pre is None and match is None:
        return
    name = pre[2] if pre is not None else match[1] if match is not None else ""
    operator = pre[1] if pre is not None else match[2] if match is not None else ""
    right = match[3] if match is not None else ""
    if operator in ("++", "--"):
        right, operator = "1", operator[0] + "="
    value = None if unknown else arithmetic(right, expander.variables)
    if value is not None and operator != "=":
        value = arithmetic(f"{name} {operator[0]} ({value})", expander.variables)
    if value is None:
        expander.variables.pop(name, None)
    else:
        expander.variables[name] = value
        expander.lists.pop(name, None)


#: A name an arithmetic expression sets: before an assignment operator, beside ``++``/``--``.
_SET_NAMES: Final = re.compile(
    r"([A-Za-z_]\w*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|([A-Za-z_]\w*)\s*(?:\+\+|--)"
    r"|(?:\+\+|--)\s*([A-Za-z_]\w*)"
)


def _arithmetic_command(text: str, expander: Expander, unknown: bool) -> None:
    """What ``(( text ))`` sets: each expression between commas as ``let`` takes it (a value
    not known, ``unknown``, unsets the name); any other name it sets on the way (``j = i++``
    sets ``i`` too) is not known after it."""
    for part in text.split(",") if "(" not in text else [text]:
        _let(part, expander, unknown or "$" in part or "`" in part)
        start = len(part) - len(part.lstrip())
        followed = _PRE.fullmatch(part) or _ARITHMETIC_SET.match(part)
        for match in _SET_NAMES.finditer(part):
            if followed is not None and match.start() == start:
                continue  # the assignment `_let` followed
            name = match[1] or match[2] or match[3]
            expander.variables.pop(name, None)
            expander.lists.pop(name, None)


def _unset(args: list[str], dynamic: list[bool], expander: Expander) -> None:
    """``unset NAME`` (``-v``; a nameref's target; not ``-f``): ``NAME`` holds nothing from now
    on, so ``${NAME-word}`` gives the word; ``unset 'a[k]'``: that element of a known array
    goes (a key not known: the array is not known)."""
    if any(a[:1] == "-" and "f" in a for a in args):
        return
    itself = any(a[:1] == "-" and "n" in a for a in args)
    for arg, unknown in zip(args, dynamic, strict=False):
        name, _, key = arg.partition("[")
        if arg[:1] == "-" or unknown or not name.isidentifier():
            continue
        if expander.refs.get(name) and not itself:
            name = expander.refs[name]
        elif itself:
            expander.refs.pop(name, None)
        key = key[:-1].strip() if key.endswith("]") else ""
        items, keys = expander.lists.get(name), expander.keys.get(name)
        if key and key not in ("@", "*") and items is not None:
            keys = keys if keys is not None else [str(i) for i in range(len(items))]
            key = str(int(key)) if key.isdigit() else key
            if len(keys) != len(items) or key not in keys:
                expander.variables.pop(name, None)  # (a key computed at run time)
                expander.lists.pop(name, None)
                continue
            at = keys.index(key)
            items, keys = items[:at] + items[at + 1 :], keys[:at] + keys[at + 1 :]
            expander.lists[name], expander.keys[name] = items, keys
            expander.variables[name] = " ".join(items)
        elif name == "IFS":
            expander.variables.pop(name, None)  # splitting as by default
        elif not key or key in ("0", "@", "*"):
            expander.variables[name] = ""
            expander.lists.pop(name, None)
            expander.keys.pop(name, None)


def _namerefs(args: list[str], dynamic: list[bool], expander: Expander) -> None:
    """``declare -n r=f`` (``typeset``, ``local``): ``$r`` is ``$f`` from now on; a target
    not known (``local -n r=$1``) is kept as one (``$r`` then stays unknown)."""
    if not any(a[:1] == "-" and "n" in a for a in args):
        return
    for arg, unknown in zip(args, dynamic, strict=False):
        ref, sep, target = arg.partition("=")
        if sep and ref.isidentifier():
            expander.variables.pop(ref, None)
            expander.refs[ref] = "" if unknown else target


def _rematch(argv: list[str], dynamic: list[bool], expander: Expander) -> None:
    """``[[ TEXT =~ RE ]]`` sets ``BASH_REMATCH`` to the match and its groups (read with
    Python's regular expressions; a text or expression not known leaves it unknown)."""
    expander.variables.pop("BASH_REMATCH", None)
    expander.lists.pop("BASH_REMATCH", None)
    if "=~" not in argv[2:-1]:
        return
    at = argv.index("=~")
    if dynamic[at - 1] or dynamic[at + 1]:
        return
    if len(argv[at - 1]) > 4096 or _NESTED_REPEAT.search(argv[at + 1]):
        return  # (a repeated group can take exponential time to fail)
    try:
        with warnings.catch_warnings():  # (`[[:alpha:]]` spelt out; others warn of nested sets)
            warnings.simplefilter("ignore")
            match = re.search(posix_brackets(argv[at + 1]), argv[at - 1])
    except (re.error, RecursionError, OverflowError):
        return
    if match is not None:
        found = [match.group(), *(group or "" for group in match.groups())][:_MAX_NAMES]
        expander.variables["BASH_REMATCH"] = " ".join(found)
        expander.lists["BASH_REMATCH"] = found


_NESTED_REPEAT: Final = re.compile(r"\)[*+?{]")


def last_word(argv: list[str], dynamic: list[bool], expander: Expander) -> None:
    """``$_``: the last word of the command before (not known when that word is not)."""
    if argv and not dynamic[-1]:
        expander.variables["_"] = argv[-1]
    else:
        expander.variables.pop("_", None)


def positional(expander: Expander, values: list[str]) -> dict[str, str | None]:
    """Set ``$1``, ``$2`` … (``$0`` first when given) to ``values``; return what they were, for
    :func:`restore`."""
    before: dict[str, str | None] = {}
    for index, value in enumerate(values[:_MAX_NAMES]):
        key = str(index)
        before[key] = expander.variables.get(key)
        expander.variables[key] = value
    for key in ("@", "*"):  # every parameter (split as an array's elements are, :mod:`.expand`)
        before[key] = expander.variables.get(key)
        expander.variables[key] = " ".join(values[1:_MAX_NAMES])
    return before


def _positionals(expander: Expander) -> list[str]:
    """``$1``, ``$2`` … as set, in order."""
    found: list[str] = []
    while str(len(found) + 1) in expander.variables and len(found) < _MAX_NAMES:
        found.append(expander.variables[str(len(found) + 1)])
    return found


def restore(expander: Expander, before: dict[str, str | None]) -> None:
    """Put positional parameters back as :func:`positional` found them."""
    for key, value in before.items():
        if value is None:
            expander.variables.pop(key, None)
        else:
            expander.variables[key] = value


def alias_script(argv: list[str], expander: Expander) -> str | None:
    """The script an alias used as the command stands for, with the rest of the words."""
    text = expander.aliases.get(argv[0]) if argv else None
    if text is None:
        return None
    return " ".join([text, *(shlex.quote(word) for word in argv[1:])])


def _set(args: list[str], expander: Expander) -> None:
    if "--" in args:
        values = args[args.index("--") + 1 :]
    elif args and not args[0].startswith(("-", "+")):
        values = args
    else:
        return
    for index in range(1, _MAX_NAMES + 1):
        expander.variables.pop(str(index), None)
        expander.lists.pop(str(index), None)
    expander.lists.pop("@", None)
    expander.lists.pop("*", None)
    positional(expander, ["", *values])
    expander.variables.pop("0", None)


def _set_loose(args: list[str], dynamic: list[bool], expander: Expander) -> None:
    """``set -- $(ls -a | awk …)``: which name each parameter holds is not known, so each of
    ``$1``, ``$2`` … holds every one (a list, split wherever it is used: :mod:`.loops`), as
    ``$@`` does. Fields not known at all (``$(whoami)``) are left out; none known: no change."""
    if "--" in args:
        start = args.index("--") + 1
    elif args and not args[0].startswith(("-", "+")):
        start = 0
    else:
        return
    values = args[start:]
    names = [
        v
        for v, unknown in zip(values, dynamic[start:], strict=False)
        if not unknown or "$" not in v
    ]
    if not names:
        return
    _set(["--"], expander)
    _loosen(expander, names, len(values))


def _loosen(expander: Expander, names: list[str], count: int) -> None:
    """Make ``$1`` … ``$count``, ``$@`` and ``$*`` each the list ``names``."""
    for key in [*map(str, range(1, min(count, _MAX_NAMES) + 1)), "@", "*"]:
        expander.variables[key] = " ".join(names)
        expander.lists[key] = names


def _hash(args: list[str], expander: Expander) -> None:
    """``hash -p FILE NAME…``: the shell runs FILE for each NAME (a path built at run time is
    kept as written: its known ending names the workspace file, :meth:`Expander.file_text`)."""
    if "-p" not in args[:-2]:
        return
    index = args.index("-p")
    path = args[index + 1]
    for word in args[index + 2 :][:_MAX_NAMES]:
        if not word.startswith("-"):
            expander.hashed[word] = path


#: Most lines of a ``read``'s input taken as values of its names.
_MAX_LINES: Final = 512


_COUNTED: Final = re.compile(r"-[a-zA-Z]*[nN](\d*)")


def _read(args: list[str], expander: Expander, stdin: str, ifs: str | None) -> None:
    names: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        bundled = word[:1] == "-" and word[-1:] == "a" and word[:2] != "--"  # `-ra arr`
        count = _COUNTED.fullmatch(word)  # `read -n 4 x`: the first 4 characters
        if count is not None and (count[1] or args[index + 1 : index + 2] != [""]):
            given = count[1] or (args[index + 1] if index + 1 < len(args) else "")
            stdin = stdin[: int(given)] if given.isdigit() and len(given) < 9 else stdin
            index += 1 if count[1] else 2
            continue
        if word in ("-d", "-n", "-N", "-p", "-t", "-u", "-i") or bundled:
            array = args[index + 1] if bundled and index + 1 < len(args) else None
            if array is not None:  # `read -a arr`: the words of its line (in a loop: of all)
                lines = stdin.rstrip("\n").split("\n")
                items = _fields(" ".join(lines), ifs if len(lines) == 1 else None)
                expander.variables[array] = " ".join(items[: _MAX_LINES * 4])
                expander.lists.pop(array, None)  # (`${arr[N]}` of a loop's: every word)
                if len(lines) == 1:
                    expander.lists[array] = items[:_MAX_NAMES]
            index += 2
            continue
        if not word.startswith("-"):
            names.append(word)
        index += 1
    if not names:
        names = ["REPLY"]
    lines = stdin.rstrip("\n").split("\n")[:_MAX_LINES]
    values: list[list[str]] = [[] for _ in names[:_MAX_NAMES]]
    for line in lines:
        fields = _fields(line, ifs, len(names))
        for position, found in enumerate(values):
            found.append(fields[position] if position < len(fields) else "")
    for position, name in enumerate(names[: len(values)]):
        found = values[position]
        if _element(expander, name, " ".join(found)):  # `read 'a[1]'`: an element
            continue
        # `while read f`: a read in a loop takes every line, so the name holds them all (as a
        # `for` loop's does: :mod:`.loops`); one read alone takes the first
        expander.variables[name] = " ".join(found) if len(found) > 1 else found[0]
        expander.lists.pop(name, None)
        expander.lists.update({name: found} if len(found) > 1 else {})


def _element(expander: Expander, target: str, value: str) -> bool:
    """Set ``target`` when it names an array's element (``a[1]``) to ``value``; whether it
    does."""
    if "[" not in target or not target.endswith("]"):
        return False
    found = assignment([Lit(target + "=", False), Lit(value, True)])
    if found is None:
        return False
    expander.assign(*found)
    return True


def _fields(line: str, ifs: str | None, names: int = 0) -> list[str]:
    """The fields ``read`` splits ``line`` into (``names``: into that many at most; ``0``: as
    many as there are, as ``read -a`` does)."""
    if ifs is not None and ifs.strip(" \t\n"):  # `IFS=,`: the line split at its characters
        split = "[" + re.escape(ifs) + "]"
        return re.split(split, line.strip(" \t\n"), maxsplit=max(names - 1, 0))
    if names == 1:
        return [line.strip()]
    return line.split(None, names - 1 if names else -1)


def _mapfile(args: list[str], expander: Expander, stdin: str) -> None:
    """``mapfile -t a`` (``readarray``; ``-d X``): the array of the lines of its input."""
    words = [w for i, w in enumerate(args) if w[:1] != "-" and args[i - 1 : i] != ["-d"]]
    at = args.index("-d") if "-d" in args[:-1] else -1
    delimiter = (args[at + 1] or "\x00")[:1] if at >= 0 else "\n"
    items = stdin.split(delimiter)[:_MAX_LINES]
    if items and not items[-1].strip("\n"):
        items.pop()  # (the end of the last line)
    name = words[-1] if words else "MAPFILE"
    expander.variables[name] = " ".join(items)
    expander.lists[name] = items


__all__ = ["STATEFUL", "alias_script", "builtin", "last_word", "positional", "restore"]
