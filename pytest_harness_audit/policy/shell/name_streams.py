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
"""

from __future__ import annotations

import shlex

from pytest_harness_audit.policy.shell.expand import Expander
from pytest_harness_audit.policy.shell.filters import MAX_FILTERS, loose_filter
from pytest_harness_audit.policy.shell.listings import search_names
from pytest_harness_audit.policy.shell.nodes import Command, Sub
from pytest_harness_audit.policy.shell.streams import output_of, stdin_of

#: Most names one search gives.
_MAX_NAMES = 512


def stdin_names(
    text: str | None, command: Command | None, expander: Expander | None
) -> list[str] | None:
    """The words of ``text`` (a command's standard input), or when it is not known those of
    :func:`loose_stdin`; ``None`` when neither is known."""
    if text is None and command is not None and expander is not None:
        text = loose_stdin(command, expander)
    if text is None:
        return None
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
        return None
    source = command.stdin
    return None if source is None else _loose_output(source, expander, depth + 1)


def _loose_output(command: Command, expander: Expander, depth: int) -> str | None:
    """What ``command`` prints, or the names it may print when it filters names."""
    text = output_of(command, expander)
    if text is not None or not command.words:
        return text
    fields = [f for word in command.words for f in expander.expand(word)]
    if not fields or any(f.dynamic for f in fields):
        return None
    argv = [f.text for f in fields]
    found = search_names(argv, expander)  # `grep -rl KEY ~/.ssh | xargs cat`
    if found is not None:
        return "".join(f"{name}\n" for name in found[:_MAX_NAMES])
    return loose_filter(argv[1:], loose_stdin(command, expander, depth) or "") or None


def _last(commands: list[Command]) -> Command | None:
    """The last command of a substitution's pipeline (the one whose output it gives)."""
    fed = {id(command.stdin) for command in commands if command.stdin is not None}
    ends = [command for command in commands if id(command) not in fed]
    return ends[-1] if ends else None


__all__ = ["loose_stdin", "stdin_names"]
