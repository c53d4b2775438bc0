"""The names a command takes on its standard input, when only the names they may be are known.

``ls -a | awk '/env/' | xargs cat``, ``ls -A | sed -n 3p | while read f; do cat "$f"; done``,
``mapfile -t a < <(ls -a | grep -E 'e.v')``: a filter the reading cannot work out keeps some of
the names a listing printed, in an order it cannot know. A command that takes the names
(``xargs``, ``parallel``, ``read``, ``mapfile``) is read as taking every name the filter was
given, and every credential-like word of the filter's own text (``sed 's/x/.env/'``):
:func:`~.filters.loose_filter`. A command whose output is not known at all gives the
credential-like words of its own (``stat -c %n .* | xargs cat``, ``grep -l key *.yaml``: the
names it prints are among them). A shell fed the same text is not (a line kept or dropped changes
what a script does): for it the text stays unknown (:func:`~.streams.stdin_of`).

The names outlive the pipe: a file written with them (``ls -a | awk … > l``, ``| tee l``) holds
them for the commands after it that read it (``xargs cat < l``, ``xargs -a l cat``, ``sort l |
xargs cat``, ``$(cat l)``), and a script handed to a shell (``| sh -c 'xargs cat'``) has them
as its own input (:mod:`.script_input`).
"""

from __future__ import annotations

import shlex
from typing import Final

from pytest_harness_audit.policy.shell.expand import Expander, descriptor_path
from pytest_harness_audit.policy.shell.filters import MAX_FILTERS, loose_filter
from pytest_harness_audit.policy.shell.line_writers import LINE_WRITERS, line_write
from pytest_harness_audit.policy.shell.listings import listing_output, search_names
from pytest_harness_audit.policy.shell.nodes import Command, Redirect, Sub
from pytest_harness_audit.policy.shell.option_words import split_options
from pytest_harness_audit.policy.shell.streams import (
    output_of,
    remember_copy,
    remember_write,
    stdin_of,
)
from pytest_harness_audit.policy.shell.tools import copy_operands

#: Most names one search gives.
_MAX_NAMES: Final = 512
#: Most text of one written file taken as names.
_MAX_TEXT: Final = 64 * 1024
_STDIN: Final = "/dev/fd/0"
#: ``find``'s actions that write the names it finds to a file.
_FIND_PRINTS: Final = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})


def stdin_names(
    text: str | None, command: Command | None, expander: Expander | None
) -> list[str] | None:
    """The words of ``text`` (a command's standard input), or when it is not known those of
    :func:`loose_stdin`; ``None`` when neither is known."""
    if text is None and command is not None and expander is not None:
        text = loose_stdin(command, expander)
    if text is None:
        return None
    text = text.replace("\0", "\n")  # `printf '%s\0' … | xargs -0`: no word holds a NUL
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def loose_stdin(command: Command, expander: Expander, depth: int = 0) -> str | None:
    """The names on ``command``'s standard input: its text when known, else the names the
    filters before it may print (module doc); ``None`` when not known at all."""
    text = stdin_of(command, expander)[0]
    if text is not None or depth > MAX_FILTERS:
        return text
    for redirect in reversed(command.redirects):
        if redirect.fd not in ("", "0") or redirect.op not in ("<", "<<<"):
            continue
        target = redirect.target or []
        if redirect.op == "<<<":  # `<<< "$(ls -a | awk …)"`: the names, a line each
            return "".join(f"{field.text}\n" for field in expander.expand(target))
        if len(target) == 1 and type(target[0]) is Sub and target[0].process == "<":
            last = _last(target[0].commands)  # `done < <(ls -a | grep …)`
            return None if last is None else _loose_output(last, expander, depth + 1)
        fields = expander.expand(target) if redirect.op == "<" and expander.loose_files else []
        return _held(fields[0].text, expander) if len(fields) == 1 else None  # `ls -a | … > l`
    source = command.stdin
    if source is None:  # the shell's: a script a pipe feeds (`ls -a | awk … | sh -c 'xargs cat'`)
        return expander.loose_files.get(_STDIN) if expander.loose_files else None
    return _loose_output(source, expander, depth + 1)


def _held(path: str, expander: Expander) -> str | None:
    """The names a file written earlier in the command may hold (``None``: not known)."""
    return expander.loose_files.get(expander.key(descriptor_path(path)))


def _loose_output(command: Command, expander: Expander, depth: int) -> str | None:
    """What ``command`` prints, or the names it may print when it filters names."""
    text = output_of(command, expander)
    return text if text is not None else _loose_names(command, expander, depth)


def _loose_names(command: Command, expander: Expander, depth: int) -> str | None:
    """The names ``command``, whose output is not known, may print."""
    if not command.words:
        return None
    fields = [f for word in command.words for f in expander.expand(word)]
    if not fields or any(f.dynamic for f in fields):
        return None
    argv = [f.text for f in fields]
    found = search_names(argv, expander)  # `grep -rl KEY ~/.ssh | xargs cat`
    if found is not None:
        return "".join(f"{name}\n" for name in found[:_MAX_NAMES])
    given = loose_stdin(command, expander, depth) or ""
    if expander.files or expander.loose_files:  # `ls -a > l; sort l | xargs cat`: its names
        given += "".join(_written(word, expander) for word in argv[1:16] if word[:1] != "-")
    return loose_filter(argv[1:], given) or None


def _written(path: str, expander: Expander) -> str:
    """The text of a file written earlier in the command, or the names it may hold."""
    key = expander.key(descriptor_path(path))
    known = expander.files.get(key)
    return (known if known is not None else _held(path, expander) or "")[:_MAX_TEXT]


def remember_output(
    command: Command, expander: Expander, redirect: Redirect, targets: list[str]
) -> None:
    """Remember the files (``targets``) an output redirection of ``command`` writes with the
    text it prints when known (:func:`~.streams.remember_write`), else with the names it may
    print (``ls -a | awk '/env/' > l; xargs cat < l``)."""
    op = redirect.op
    printed = len(targets) == 1 and bool(command.words)
    plain = op in (">", ">>", ">|")  # (`&>`: its errors too, a text not known)
    text = output_of(command, expander) if printed and plain else None
    loose = None
    kept = printed and redirect.fd in ("", "1") and op != "<>"
    if text is None and kept and not targets[0].startswith("/dev/"):  # (not `>/dev/null`)
        loose = (_loose_names if plain else _loose_output)(command, expander, 1)
    for target in targets:
        remember_write(expander, target, text, append=op in (">>", "&>>"), loose=loose)


def remember_copies(
    name: str, args: list[str], command: Command | None, expander: Expander
) -> None:
    """A copy ran: its destination holds the source's text (:func:`~.streams.remember_copy`);
    ``tee FILE``/``sponge FILE`` write their standard input to the files they are given, ``sort
    -o FILE``, ``dd of=FILE`` … the lines of their input (:mod:`.line_writers`)."""
    if name in ("find", "gfind"):
        _find_prints(args, expander)
        return
    if name in LINE_WRITERS or name == "dd":
        written = line_write(name, args)
        for path in written.outputs if written.inputs else []:  # (`patch`: lines it keeps)
            _write_from(written.inputs, path, command, expander, append=False)
        return
    if name not in ("tee", "sponge"):
        copied = copy_operands(name, args)[1] if name in ("cp", "install") else []
        if len(copied) == 2 and copied[0] in ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
            _write_from(["-"], copied[1], command, expander, append=False)  # `cp /dev/stdin l`
            return
        remember_copy(expander, name, args)
        return
    options, operands = split_options(args, frozenset())
    append = any(o in ("-a", "--append") for o in options)
    for path in operands[:16]:
        _write_from(["-"], path, command, expander, append=append)


def _find_prints(args: list[str], expander: Expander) -> None:
    """``find … -fprint FILE`` (``-fprint0``, ``-fprintf FILE FORMAT``, ``-fls``) writes the
    names it finds to ``FILE``, in a form its format decides: ``FILE`` may hold each of them
    (``find . -name .env -fprint l; xargs cat < l``)."""
    names = listing_output(["find", *args], expander)
    for index, word in enumerate(args[:-1]):
        if word in _FIND_PRINTS:
            remember_write(expander, args[index + 1], None, append=False, loose=names)


def _write_from(
    inputs: list[str], path: str, command: Command | None, expander: Expander, append: bool
) -> None:
    """``path`` is written with the text of ``inputs`` (``-``: the standard input), or with the
    names they may hold when that is not known."""
    texts: list[str] = []
    loose = ""
    known = True
    for source in inputs[:16]:
        if source == "-":
            text = None if command is None else stdin_of(command, expander)[0]
            held = loose_stdin(command, expander) if text is None and command is not None else None
        else:
            text = expander.file_text(source)
            held = _written(source, expander) if text is None else None
        known = known and text is not None
        texts.append(text or "")
        loose += held or ""
    if known:
        remember_write(expander, path, "".join(texts), append=append)
    else:
        remember_write(expander, path, None, append=append, loose=loose or None)


def _last(commands: list[Command]) -> Command | None:
    """The last command of a substitution's pipeline (the one whose output it gives)."""
    fed = {id(command.stdin) for command in commands if command.stdin is not None}
    ends = [command for command in commands if id(command) not in fed]
    return ends[-1] if ends else None


__all__ = ["loose_stdin", "remember_copies", "remember_output", "stdin_names"]
