"""What a script a command hands to a shell is given: its positional parameters, its standard
input and its standard output (the command's: piped on or redirected, :func:`.loops.carry_output`).

``echo .env | sh -c 'xargs cat'``, ``ls -a | bash -c 'while read f; do cat "$f"; done'``: the
script's standard input is the command's (a pipe, a redirection), so a command inside it that
reads its input (``xargs``, ``read``, ``mapfile``, ``$(cat)``) reads that text. While the
script is read, the shell's own input (``/dev/fd/0``, :func:`~.streams.stdin_of`) holds it:
the text when known, else the names a filter may have kept (:mod:`.name_streams`), else a text
not known (a shell inside that runs it is then unreadable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from pytest_harness_audit.policy.shell.builtins import positional, restore
from pytest_harness_audit.policy.shell.expand import Expander
from pytest_harness_audit.policy.shell.loops import INPUT_OPS
from pytest_harness_audit.policy.shell.name_streams import loose_stdin
from pytest_harness_audit.policy.shell.nodes import Command

_STDIN: Final = "/dev/fd/0"


@dataclass(slots=True)
class Entered:
    """What :func:`enter` changed, for :func:`leave` to put back."""

    parameters: dict[str, str | None] | None
    stdin: tuple[str | None, bool, str | None] | None
    carrier: Command | None = None

    # (an own __init__: the compiled build compiles it, not the one dataclass would generate)
    def __init__(
        self,
        parameters: dict[str, str | None] | None,
        stdin: tuple[str | None, bool, str | None] | None,
        carrier: Command | None = None,
    ) -> None:
        self.parameters = parameters
        self.stdin = stdin
        self.carrier = carrier


def enter(
    expander: Expander,
    command: Command | None,
    args: list[str] | None,
    stdin: Callable[[], tuple[str | None, bool]],
) -> Entered:
    """Give a script its ``$0``, ``$1`` … (``args``) and the standard input of ``command``,
    the one that runs it (``stdin``: works out that input's text and whether it is unknown, as
    :func:`~.streams.stdin_of` gives them)."""
    parameters = positional(expander, args) if args else None
    carrier, expander.carrier = expander.carrier, command  # its output is the script's
    if command is None or (command.stdin is None and not _own_input(command)):
        return Entered(parameters, None, carrier)  # the shell's input, as it was
    files, unknown, names = expander.files, expander.unknown_files, expander.loose_files
    before = (files.get(_STDIN), _STDIN in unknown, names.get(_STDIN))
    text, dark = stdin()
    loose = loose_stdin(command, expander) if text is None and dark else None
    files.pop(_STDIN, None)
    names.pop(_STDIN, None)
    unknown.discard(_STDIN)
    if text is not None:
        files[_STDIN] = text
    elif dark:
        unknown.add(_STDIN)
        if loose:
            names[_STDIN] = loose
    return Entered(parameters, before, carrier)


def leave(expander: Expander, entered: Entered) -> None:
    """Put back what :func:`enter` changed."""
    expander.carrier = entered.carrier
    if entered.parameters is not None:
        restore(expander, entered.parameters)
    if entered.stdin is None:
        return
    text, dark, loose = entered.stdin
    files, unknown, names = expander.files, expander.unknown_files, expander.loose_files
    files.pop(_STDIN, None)
    names.pop(_STDIN, None)
    unknown.discard(_STDIN)
    if text is not None:
        files[_STDIN] = text
    if dark:
        unknown.add(_STDIN)
    if loose is not None:
        names[_STDIN] = loose


def _own_input(command: Command) -> bool:
    return any(r.fd in ("", "0") and r.op in INPUT_OPS for r in command.redirects)


__all__ = ["Entered", "enter", "leave"]
