"""What a command reads on its standard input and prints, when its text says, and the files a
command writes with a known text.

So that a script cannot hide what it runs behind a file made a moment earlier, the reading
keeps the text of every file the same command writes when the text is known (``echo 'cat .env'
> s.sh``, ``cp tidy.sh s``, ``cat tidy.sh > s``), and marks the files written with a text it
cannot know (``python gen.py > s.sh``): running one of those later in the same command is
unreadable, not an empty script. A command's standard input is known from a here-document, a
here-string, a workspace file (``sh < tidy.sh``) or a pipe from ``echo``/``printf``/``cat
FILE``/``base64 -d``.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from typing import Final

from pytest_harness_audit.policy.path_forms import join_path
from pytest_harness_audit.policy.shell.cut_filters import PROGRAM_FILTERS, text_filter
from pytest_harness_audit.policy.shell.effects import command_name
from pytest_harness_audit.policy.shell.expand import Expander, echo_output
from pytest_harness_audit.policy.shell.filters import FILTER_NAMES, LINE_PICKERS, run_filter
from pytest_harness_audit.policy.shell.listings import LISTERS, listing_output
from pytest_harness_audit.policy.shell.nodes import Command, Redirect
from pytest_harness_audit.policy.shell.sql_output import SQL_CLIENTS, client_output, printable_texts
from pytest_harness_audit.policy.shell.tools import copy_operands

#: Most text kept of one file written in the command.
FILE_TEXT_LIMIT: Final = 64 * 1024
#: Copies that give their destination the source's text.
_COPIES: Final = frozenset({"cp", "mv", "ln", "link", "install"})


def remember_write(
    expander: Expander, path: str, text: str | None, append: bool, loose: str | None = None
) -> None:
    """Keep what a command writes to ``path`` when it is known, for a later ``source path`` or
    ``./path`` in the same command; mark the file unknown when it is not (``loose``: the names
    it may then hold, :attr:`~.expand.Expander.loose_files`)."""
    key = expander.key(path)
    names = expander.loose_files
    if append and text is not None and key not in expander.files and expander.is_unknown(key):
        # added to a text not known: still not known (two statements: a tuple assignment
        # here is compiled with the narrowed types of its right side)
        loose = text
        text = None
    if text is None:
        held = names.get(key, "") if append and key in expander.unknown_files else ""
        expander.files.pop(key, None)
        expander.unknown_files.add(key)
        if loose or held:
            names[key] = (held + (loose or ""))[:FILE_TEXT_LIMIT]
        elif names:
            names.pop(key, None)
        return
    before = expander.files.get(key, "") if append else ""
    expander.files[key] = (before + text)[:FILE_TEXT_LIMIT]
    expander.unknown_files.discard(key)
    if names:
        names.pop(key, None)


def remember_copy(expander: Expander, name: str, args: list[str]) -> None:
    """``cp SRC DST``, ``mv``, ``ln [-s]``, ``install``: the destination (or the file of the
    source's name inside it) holds the source's text from now on."""
    if name not in _COPIES:
        return
    _options, operands, folder = copy_operands(name, args)
    if folder is not None:
        pairs = [(src, [join_path(folder, posixpath.basename(src))]) for src in operands]
    elif len(operands) >= 2:
        destination = operands[-1]
        pairs = [
            (source, [destination, join_path(destination, posixpath.basename(source))])
            for source in operands[:-1]
        ]
        if len(operands) > 2:  # several sources: the destination is a folder
            pairs = [(source, paths[1:]) for source, paths in pairs]
    else:
        return
    for source, destinations in pairs[:16]:
        text = expander.file_text(source)
        unknown = text is None and expander.is_unknown(expander.key(source))
        loose = expander.loose_files.get(expander.key(source)) if unknown else None
        for destination in destinations:
            if text is not None or unknown:
                remember_write(expander, destination, text, append=False, loose=loose)
            else:  # a file the reading cannot see (a program): as if it ran from there
                key = expander.key(destination)
                expander.files[key] = ""
                expander.unknown_files.discard(key)


def stdin_of(command: Command, expander: Expander) -> tuple[str | None, bool]:
    """The text a command reads on its standard input, when known; and whether it has an
    unknown one (a pipe from a command whose output cannot be known, a file written earlier
    with a text not known). With no input of its own, a command reads the shell's (``exec <
    FILE`` earlier in the command)."""
    for redirect in reversed(command.redirects):
        if redirect.fd not in ("", "0") or redirect.op not in _INPUTS:
            continue
        return _input_of(redirect, expander)
    source = command.stdin
    if source is None:
        if _STDIN in expander.files or _STDIN in expander.unknown_files:
            return expander.files.get(_STDIN), _STDIN in expander.unknown_files
        return None, False
    output = output_of(source, expander)
    return (output, False) if output is not None else (None, True)


def _exact_input(command: Command, expander: Expander, depth: int) -> bool:
    """Whether ``command``'s standard input is a text known exactly: a here-string or a
    here-document, or a pipe from ``echo``/``printf`` (through filters of such a text), not a
    listing's names."""
    if any(r.fd in ("", "0") and r.op in ("<<<", "<<", "<<-") for r in command.redirects):
        return True
    source = command.stdin
    if source is None or not source.words or depth > 6:
        return False
    fields = expander.expand(source.words[0])
    name = command_name(fields[0].text) if len(fields) == 1 else ""
    if name in ("echo", "printf"):
        return True
    return (name in FILTER_NAMES or name in PROGRAM_FILTERS) and _exact_input(
        source, expander, depth + 1
    )


_STDIN: Final = "/dev/fd/0"
_INPUTS: Final = frozenset({"<<", "<<-", "<<<", "<", "<>", "<&"})


def _input_of(redirect: Redirect, expander: Expander) -> tuple[str | None, bool]:
    """What an input redirection gives: a heredoc's body, a here-string, a file's text, or
    what another descriptor holds (``<&3``)."""
    if redirect.op in ("<<", "<<-"):
        return redirect.body, redirect.body is None
    fields = expander.expand(redirect.target) if redirect.target else []
    if redirect.op == "<<<":
        if any(f.dynamic for f in fields):
            return None, True  # a part not known (or names a filter may print: .name_streams)
        return " ".join(f.text for f in fields) + "\n", False
    if len(fields) != 1:
        return None, True
    path = fields[0].text
    if redirect.op == "<&":
        if path == "-" or not path.isdigit():
            return None, False
        path = f"/dev/fd/{path}"
    text = expander.file_text(path)
    if text is not None:
        return text, False
    # like `bash FILE`: unknown only when written earlier with a text not known
    return None, expander.is_unknown(expander.key(path))


def open_descriptors(command: Command, expander: Expander, shell: bool = True) -> None:
    """``exec 0<FILE``, ``exec 3<FILE``, ``exec <<<TEXT``: the shell's own descriptors hold
    what the redirection gives, for every later command that reads them (``exec < s.sh; sh``
    runs ``s.sh``; ``exec 3< s.sh; sh /dev/fd/3`` too). Not ``shell``: a command's own
    ``3< s.sh`` (``sh /dev/fd/3 3< s.sh``; its standard input is :func:`stdin_of`'s), kept for
    the rest of the command too (one reading too many, never too few)."""
    for redirect in command.redirects:
        if redirect.op not in _INPUTS or redirect.fd == "{":
            continue
        if not shell and redirect.fd in ("", "0"):
            continue
        text, unknown = _input_of(redirect, expander)
        path = f"/dev/fd/{redirect.fd or '0'}"
        if text is not None or unknown:
            remember_write(expander, path, text, append=False)
        else:  # a file the reading cannot see: what it runs is not judged (as `sh FILE`)
            expander.files.pop(path, None)
            expander.unknown_files.discard(path)


def output_of(command: Command, expander: Expander) -> str | None:
    """What a command prints, for the few whose output is in their text or in files the
    reading knows (``cat FILE``)."""
    fields = [f for word in command.words for f in expander.expand(word)]
    if not fields or any(f.dynamic for f in fields):
        return None
    argv = [f.text for f in fields]
    name = command_name(argv[0])
    if name in ("echo", "printf"):
        text = echo_output([name, *argv[1:]])
        if text is None:
            return None
        return text + "\n" if name == "echo" and not _echo_no_newline(argv[1:]) else text
    if name == "cat":
        return _cat(command, argv[1:], expander)
    if name in LISTERS:
        return listing_output(argv, expander)  # `ls -a | xargs cat`
    if name in FILTER_NAMES:  # `ls -a | grep env | xargs cat`, `echo vne. | rev | sh`
        stdin = stdin_of(command, expander)[0]  # `| head | sh`: every line, one too many
        return run_filter(name, argv[1:], stdin, name in LINE_PICKERS)
    if name in PROGRAM_FILTERS and _exact_input(command, expander, 0):
        stdin = stdin_of(command, expander)[0]  # `echo xenv | sed s/x/./ | xargs cat`
        return text_filter(name, argv[1:], stdin, False, True)
    if name in SQL_CLIENTS:  # `sqlite3 x.db "select 'rm -rf app'" | sh`: its constant rows
        return client_output(  # its `-f` file too
            name, argv[1:], lambda: stdin_of(command, expander)[0], expander.file_text
        )
    if name == "base64" and any(a in ("-d", "--decode", "-D") for a in argv[1:]):
        upstream = stdin_of(command, expander)[0]
        if upstream is None:
            return None
        try:
            return base64.b64decode("".join(upstream.split()), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
    return None


def may_print(command: Command | None, expander: Expander) -> list[str]:
    """What the command piping into ``command`` may print when :func:`output_of` cannot know
    it: a SQL client's values it can work out and its literals (:mod:`.sql_output`)."""
    source = None if command is None else command.stdin
    if source is None:
        return []
    fields = [f for word in source.words for f in expander.expand(word)]
    if (
        not fields
        or any(f.dynamic for f in fields)
        or command_name(fields[0].text) not in SQL_CLIENTS
    ):
        return []
    argv = [f.text for f in fields]
    name = command_name(argv[0])
    return printable_texts(
        name, argv[1:], lambda: stdin_of(source, expander)[0], expander.file_text
    )


def _echo_no_newline(args: list[str]) -> bool:
    """Whether ``echo``'s leading options hold ``-n`` (no newline after the text)."""
    for word in args:
        if len(word) < 2 or word[0] != "-" or set(word[1:]) - set("neE"):
            return False
        if "n" in word:
            return True
    return False


def _cat(command: Command, operands: list[str], expander: Expander) -> str | None:
    """``cat`` of known files (``-`` or none: its standard input), without options."""
    if not operands:
        return stdin_of(command, expander)[0]
    if len(operands) > 16:
        return None
    texts: list[str] = []
    for operand in operands:
        if operand.startswith("-") and operand != "-":
            return None  # `cat -A`, `cat -n`: the output is not the file's text
        text = stdin_of(command, expander)[0] if operand == "-" else expander.file_text(operand)
        if text is None:
            return None
        texts.append(text)
    return "".join(texts)[:FILE_TEXT_LIMIT]


__all__ = [
    "FILE_TEXT_LIMIT",
    "may_print",
    "open_descriptors",
    "output_of",
    "remember_copy",
    "remember_write",
    "stdin_of",
]
