"""What a shell command does, read from its text: the simple commands it runs and their files.

:func:`read_command` parses the text (:mod:`.syntax`), expands each word as the shell would
(:mod:`.expand`), peels off wrappers (``env``, ``sudo``, ``doas``, ``nice``, ``nohup``,
``timeout``, ``xargs``, ``command``, ``exec``, ``time``, ``busybox``, ``stdbuf``, ``setsid``,
``ionice``, ``flock``, ``parallel`` … by any path), follows scripts handed to a shell
(``bash -c``, ``su -c``, ``eval``, a here-string, a heredoc, ``echo … | sh``) and records each
command's effects (:mod:`.effects`): files read, written, deleted or destroyed.

Everything is bounded (nesting, tokens, nested scripts): beyond a bound, or on text that is not
well-formed shell, the reading says *unreadable*, and the policy warns instead of allowing it.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from pytest_harness_audit.policy.shell.arrays import assignment
from pytest_harness_audit.policy.shell.builtins import (
    ARITHMETIC,
    ASSIGN_OPERATORS,
    STATEFUL,
    alias_script,
    builtin,
    last_word,
)
from pytest_harness_audit.policy.shell.calls import call
from pytest_harness_audit.policy.shell.declarations import declaration
from pytest_harness_audit.policy.shell.effects import classify, inline_code
from pytest_harness_audit.policy.shell.embedded import NETWORK_NOTE
from pytest_harness_audit.policy.shell.expand import Expander, descriptor_path, needs_work
from pytest_harness_audit.policy.shell.gitenv import environment, relevant
from pytest_harness_audit.policy.shell.imports import follow_loads
from pytest_harness_audit.policy.shell.lookups import Lookups
from pytest_harness_audit.policy.shell.loops import carry_output
from pytest_harness_audit.policy.shell.name_streams import (
    loose_stdin,
    remember_copies,
    remember_output,
    stdin_names,
)
from pytest_harness_audit.policy.shell.nodes import (
    MAX_CHARS,
    MAX_DEPTH,
    MAX_TOKENS,
    RESERVED_WORDS,
    Budget,
    Command,
    Lit,
    Unreadable,
)
from pytest_harness_audit.policy.shell.place import place_at_start
from pytest_harness_audit.policy.shell.powershell import as_posix
from pytest_harness_audit.policy.shell.program_files import program_commands
from pytest_harness_audit.policy.shell.projects import program_file
from pytest_harness_audit.policy.shell.script_input import enter, leave
from pytest_harness_audit.policy.shell.searchpath import KEPT_AS_TEXT, kept_text
from pytest_harness_audit.policy.shell.simple import parse_simple
from pytest_harness_audit.policy.shell.streams import may_print, open_descriptors, stdin_of
from pytest_harness_audit.policy.shell.subscript_code import read_subscript_code
from pytest_harness_audit.policy.shell.syntax import parse
from pytest_harness_audit.policy.shell.unsure import unsure

_WRITE_OPS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_DECLARATIONS: Final = frozenset({"export", "declare", "local", "readonly", "typeset"})
#: Most simple commands recorded from one reading (the rest still count for effects).
MAX_COMMANDS: Final = 512


@dataclass(slots=True)
class Reading:
    """The reading of one command text.

    ``commands``: the argv of every simple command (after expansion; wrappers peeled, with the
    wrapped form too when it differs). ``reads``, ``writes``, ``deletes`` (single deletions) and
    ``destroys`` (recursive or irrecoverable ones): paths, as written. ``notes``: further
    findings (``history``: a whole-history diff such as ``git log -p``; ``opaque-delete``: a
    command that cannot be known, given deletion flags; ``network``: a network exchange, see
    :mod:`.embedded`). ``code``: inline program text (``python -c``). ``unreadable``: why the
    text could not be read, else ``None``. ``ran``: the argv of the simple commands of the files
    it runs as shell (``bash stop.sh``, a recipe): no targets, read by the built-in rules."""

    commands: list[list[str]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    destroys: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    unreadable: str | None = None
    ran: list[list[str]] = field(default_factory=list)
    #: How far each path list has been given its moved forms (:mod:`.place`).
    marks: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    # (an own __init__: the compiled build compiles it, not the one dataclass would generate)
    def __init__(self) -> None:
        self.commands, self.reads, self.writes, self.deletes, self.ran = [], [], [], [], []
        self.destroys, self.notes, self.code, self.unreadable, self.marks = [], [], [], None, {}

    def script(self, text: str, depth: int, budget: Budget, expander: Expander) -> None:
        """Read a script handed to a shell (``bash -c TEXT``), one level deeper."""
        if depth > MAX_DEPTH:
            raise Unreadable("scripts nested too deep")
        _read_script(text, self, expander, budget, depth)

    def unknown_script(self, why: str) -> None:
        """A shell runs a script whose text is not in the command."""
        if self.unreadable is None:
            self.unreadable = why


_PLAIN_LIMIT: Final = 4096
_PLAIN: Final = re.compile(r"[\w./:,@%+=-]+(?: [\w./:,@%+=-]+)*")


def read_command(text: str, root: str | None = None) -> Reading:
    """Read a shell command; never raises (an unreadable command says so in the reading).
    Plain words (``pytest -q tests``) are split on spaces, as the shell would; a command of the
    common shape (:mod:`.simple`) skips the parser; either gives :func:`read_full`'s reading."""
    return _read(text, root, True)


def read_full(text: str, root: str | None = None) -> Reading:
    """The reading of :func:`read_command` with every text read by the parser: no fast path
    (the reference the fast paths are tested against)."""
    return _read(text, root, False)


def _read(text: str, root: str | None, shortcuts: bool) -> Reading:
    reading = Reading()
    if len(text) > MAX_CHARS:
        reading.unreadable = "command too long"
        _read_pieces(text, reading, root)
        return reading
    try:
        if shortcuts and len(text) <= _PLAIN_LIMIT and _PLAIN.fullmatch(text):
            argv = text.split(" ")
            # `export NAME=value` gives later commands an environment (:func:`_read_simple`)
            if "=" not in argv[0] and argv[0] not in RESERVED_WORDS and argv[0] != "export":
                reading.commands.append(argv)
                context = _Context(reading, None, Budget(), 0, None, root)
                classify(argv, [False] * len(argv), context)
                # no expander made: no nested script moved, and a fresh place is where it starts,
                # which gives no path another form unless the argv runs elsewhere (`-C DIR`)
                made = context.made
                if made is not None:
                    made.place.place(reading, argv)
                else:
                    place_at_start(reading, argv, root)
                return reading
        simple = parse_simple(text) if shortcuts else None
        if simple is not None:
            expander, budget = Expander(root), Budget()
            for command in simple:
                _read_simple(command, reading, expander, budget, 0)
        else:
            _read_script(text, reading, Expander(root), Budget(), 0)
    except Unreadable as exc:
        reading.unreadable = str(exc)
        _read_pieces(text, reading, root)
    except RecursionError:  # pragma: no cover - bounded by MAX_DEPTH well before this
        reading.unreadable = "nested too deep"
    return reading


_PIECE: Final = re.compile(r"[^;&|\n]+")
#: Most distinct pieces of an unreadable command read from its start, and from its end.
_MAX_PIECES: Final = 2048
_MAX_TAIL_PIECES: Final = 256
_MAX_PIECE: Final = 4096
#: Most characters of an unreadable command whose pieces are read (its start and its end).
_MAX_PIECES_TEXT: Final = 1 << 20


def _read_pieces(text: str, reading: Reading, root: str | None) -> None:
    """After a failed reading, read each piece between ``;``, ``&``, ``|`` and newlines on its
    own (``rm -rf build; echo "unterminated`` still destroys ``build``): the first
    :data:`_MAX_PIECES` distinct pieces and the last :data:`_MAX_TAIL_PIECES` (padding cannot
    push one at the end out of reach), each of :data:`_MAX_PIECE` characters at most, within
    :data:`_MAX_PIECES_TEXT` characters at either end."""
    seen: set[str] = set()
    head = text[:_MAX_PIECES_TEXT]
    pieces = itertools.islice(
        (m.group() for m in _PIECE.finditer(head) if m.group() not in seen), _MAX_PIECES * 4
    )
    _read_each(pieces, reading, root, seen, _MAX_PIECES)
    if len(seen) >= _MAX_PIECES or len(text) > len(head):
        tail = text[-min(len(text), _MAX_PIECE * _MAX_TAIL_PIECES) :]
        last = [m.group() for m in _PIECE.finditer(tail)][-_MAX_TAIL_PIECES:]
        _read_each(iter(last[1:] if len(last) > 1 else last), reading, root, seen, _MAX_TAIL_PIECES)


def _read_each(
    pieces: Iterator[str], reading: Reading, root: str | None, seen: set[str], limit: int
) -> None:
    read = 0
    for piece in pieces:
        if read >= limit:
            return
        if piece in seen or not piece.strip() or len(piece) > _MAX_PIECE or "\x00" in piece:
            continue
        seen.add(piece)
        read += 1
        part = Reading()
        try:
            _read_script(piece, part, Expander(root), Budget(MAX_TOKENS // 8), 0)
        except Unreadable:
            continue
        for name in ("commands", "reads", "writes", "deletes", "destroys", "notes", "code"):
            getattr(reading, name).extend(getattr(part, name))


def _read_script(
    text: str, reading: Reading, expander: Expander, budget: Budget, depth: int
) -> None:
    commands = parse(text, budget, depth)
    carry_output(commands, expander.carrier)
    for command in commands:
        _read_simple(command, reading, expander, budget, depth)


@unsure  # `x=.env; (x=a); cat $x`: what a command that may not run sets may not last
def _read_simple(
    command: Command, reading: Reading, expander: Expander, budget: Budget, depth: int
) -> None:
    words = command.words
    assignments, held = 0, list[str]()
    for word in words:
        first = word[0] if word else None
        if type(first) is not Lit or first.quoted or "=" not in first.text:
            break  # the common case: no assignment
        if assignment(word) is None:
            break
        assignments += 1
        if assignments == len(words):  # only assignments: they set shell variables
            given: dict[str, str | None] = {}
            for each in words:
                name, value = assignment(each) or ("", [])
                expander.assign(name, value)
                held.append(expander.variables.get(name) or "")
                if relevant(name):  # one the environment already has stays exported
                    given[name] = expander.variables.get(name)
            if given:
                _environment(given, reading, expander)
    argv: list[str] = []
    dynamic: list[bool] = []
    for word in words[assignments:] if assignments else words:
        if len(word) == 1:
            part = word[0]
            if type(part) is Lit and (part.quoted or not needs_work(part.text)):
                argv.append(part.text)  # a plain word: nothing to expand
                dynamic.append(False)
                continue
        for expanded in expander.expand(word):
            argv.append(expanded.text)
            dynamic.append(expanded.dynamic)
    if argv and argv[0] in _DECLARATIONS:  # `declare -a a='(.env)'`: read as `a=(.env)`
        exported, compounds = declaration(argv, words[assignments + 1 :], expander)
        _environment(exported, reading, expander)
        for compound in compounds:
            reading.script(compound, depth + 1, budget, expander)
    environ: dict[str, str | None] = {}
    if assignments and argv:  # `NAME=value command`: the command's environment
        for word in words[:assignments]:
            name, value = assignment(word) or ("", [])
            known = list(expander.expand(kept_text(name, value, expander.variables)))
            joined = " ".join(f.text for f in known)
            # a PATH keeps its unknown parts as text (`.:$PATH`): its known entries count
            unknown = any(f.dynamic for f in known)
            environ[name] = joined if name in KEPT_AS_TEXT or not unknown else None
            held.append(joined)
        _environment(environ, reading, expander)
    if argv and (
        argv[0] in STATEFUL or ((argv[0][-1:] in "+-" or len(argv) > 2) and _arithmetic(argv))
    ):
        reads_input = argv[0] in ("read", "mapfile", "readarray")
        stdin = loose_stdin(command, expander) if reads_input else None
        builtin(argv, dynamic, expander, stdin, environ.get("IFS"))  # `IFS=, read a b`
    place = expander.place
    for redirect in command.redirects:
        targets = [f.text for f in expander.expand(redirect.target)] if redirect.target else []
        network = any(t.startswith(("/dev/tcp/", "/dev/udp/")) for t in targets)
        if network and NETWORK_NOTE not in reading.notes:
            reading.notes.append(NETWORK_NOTE)  # bash opens a connection for these
        if redirect.op in _WRITE_OPS:
            reading.writes.extend(targets)
            remember_output(command, expander, redirect, targets)
        elif redirect.op == "<":
            reading.reads.extend(targets)
        elif redirect.op == "<<<":
            held.extend(targets)
        elif redirect.op in (">&", "<&"):
            reading.writes.extend(t for t in targets if not t.isdigit() and t != "-")
    read_subscript_code(argv + held, reading.script, depth + 1, budget, expander)
    place.place(reading)
    last_word(argv, dynamic, expander)
    if not argv or argv[0] in ("[[", "(("):  # a test: what it sets is all (`BASH_REMATCH`)
        return
    if command.redirects:
        if argv == ["exec"]:  # the shell's own descriptors, from now on
            open_descriptors(command, expander)
        elif any(r.fd and r.fd != "0" for r in command.redirects):  # `sh /dev/fd/3 3< s.sh`
            open_descriptors(command, expander, shell=False)
    if len(reading.commands) < MAX_COMMANDS:
        reading.commands.append(argv)
    aliased = alias_script(argv, expander) if expander.aliases else None
    if aliased is not None:
        reading.script(aliased, depth + 1, budget, expander)
    classify(argv, dynamic, _Context(reading, expander, budget, depth, command, env=environ))
    if command.body is not None:  # a function of the script: its body, with these arguments
        call(command.body, argv, reading, expander, depth, budget, _read_simple)
    if expander.rewrite_pending:  # the files it rewrote are unknown to the commands after it
        expander.tree_rewritten = True
    place.place(reading, argv)
    place.change(argv, dynamic, expander.variables, environ)  # `CDPATH=.. cd x`, `cd -`


def _arithmetic(argv: list[str]) -> bool:
    """Whether ``argv`` is an arithmetic command's words (``(( i = 1 ))``, ``((i++))``)."""
    if len(argv) > 2:
        return argv[1] in ASSIGN_OPERATORS and argv[0].isidentifier()
    return len(argv) == 1 and argv[0][-2:] in ("++", "--") and bool(ARITHMETIC.fullmatch(argv[0]))


def _environment(variables: dict[str, str | None], reading: Reading, expander: Expander) -> None:
    """Variables given to a command's environment: what they may make the command run."""
    if any(relevant(name) for name in variables):
        context = _Context(reading, expander, Budget(MAX_TOKENS // 8), 1, None)
        environment(variables, expander.variables, context, expander.file_text)


class _Context(Lookups):
    """What :func:`~.effects.classify` needs besides the argv: where to record, how to read a
    nested script, and the command's standard input."""

    __slots__ = ("_root", "_stdin", "budget", "command", "depth", "env", "made", "reading")

    def __init__(
        self,
        reading: Reading,
        expander: Expander | None,
        budget: Budget,
        depth: int,
        command: Command | None,
        root: str | None = None,
        env: dict[str, str | None] | None = None,
    ) -> None:
        self.reading = reading
        #: The variables the command is given (``NAME=value cmd``, ``env NAME=value cmd``).
        self.env = env if env is not None else {}
        #: The expander, once there is one (``None``: made from ``root`` when first needed).
        self.made = expander
        self._root = root
        self.budget = budget
        self.depth = depth
        self.command = command
        self._stdin: tuple[str | None, bool] | None = None

    @property
    def expander(self) -> Expander:
        """The script's expander (a command of plain words that runs no nested script, the
        most common, never needs one)."""
        made = self.made
        if made is None:
            made = self.made = Expander(self._root)
        return made

    @property
    def workspace_root(self) -> str | None:
        """The workspace the command runs in, when known (no expander made to say so)."""
        return self.made.root if self.made is not None else self._root

    @property
    def knows_files(self) -> bool:
        """Whether any file's text can be known (:class:`~.context.Context`)."""
        made = self.made
        return self._root is not None if made is None else bool(made.root or made.files)

    def _input(self) -> tuple[str | None, bool]:
        """The standard input (worked out when first asked for: most commands never ask)."""
        if self._stdin is None:
            command = self.command
            known = None if command is None else stdin_of(command, self.expander)
            self._stdin = known or (None, False)
        return self._stdin

    @property
    def stdin_text(self) -> str | None:
        """The text on the command's standard input, when known."""
        return self._input()[0]

    @property
    def output_consumed(self) -> bool:
        """Whether another command takes this one's output (a pipe, a substitution)."""
        command = self.command
        return command is not None and (command.piped or command.in_substitution)

    @property
    def stdin_unknown(self) -> bool:
        """Whether the command reads a pipe from a command whose output cannot be known."""
        return self._input()[1]

    def script(self, text: str, args: list[str] | None = None) -> None:
        """Read ``text`` as a script run by a shell (``args``: its ``$0``, ``$1`` …; its
        standard input is the command's, :mod:`.script_input`)."""
        expander = self.expander
        entered = enter(expander, self.command, args, self._input)
        try:
            self.with_lists(
                lambda: self.reading.script(text, self.depth + 1, self.budget, expander)
            )
        finally:
            leave(expander, entered)

    def stdin_script(self, runner: str) -> None:
        """A shell (or ``su``) with no script operand runs its standard input."""
        if self.stdin_text is not None:
            self.script(self.stdin_text)
        elif self.stdin_unknown:
            self.reading.unknown_script(f"{runner} runs a script piped in from another command")
            for text in may_print(self.command, self.expander):  # a SQL client's literals
                self.script(text)

    def unknown(self, why: str) -> None:
        """A shell runs a script whose text is not in the command."""
        self.reading.unknown_script(why)

    def script_file(self, path: str, code: bool) -> None:
        """A shell (``code``: an interpreter) runs the file ``path``: its text, when known
        (:meth:`Expander.file_text`), is read as a script (or as inline code)."""
        if (
            not code
            and path.startswith(("/dev/", "/proc/"))
            and descriptor_path(path) == "/dev/fd/0"
            and "/dev/fd/0" not in self.expander.files
        ):
            self.stdin_script(path)  # `source /dev/stdin <<< …`: the standard input
            return
        text = self.workspace_text(path)
        if text is None:
            return
        if not code:
            self.read_text(text, code)
            return
        if path.lower().endswith((".ps1", ".psm1")):  # PowerShell's: also read as it runs
            self.read_text(as_posix(text), False)
        inline_code(text, self, False, "node_modules/" in f"/{path}", inline=False)
        # the modules beside it (by path, those of the root were: inline_code), and the
        # packages it names, from its folder
        folder = posixpath.dirname(path)
        follow_loads(text, folder, self, paths=bool(folder))

    def program_file(self, path: str) -> None:
        """The file ``path`` is run as a program: read by its ``#!`` line (:mod:`.projects`)."""
        program_file(path, self)

    def workspace_files(self, folder: str) -> list[str] | None:
        """The files under a workspace folder (:meth:`Expander.workspace_files`)."""
        return self.expander.workspace_files(folder)

    def read_text(self, text: str, code: bool) -> None:
        """Read the text of a file a shell (``code``: an interpreter) runs."""
        if code:
            inline_code(text, self)
            return
        # what the file does joins the reading; of its command lines, only program text does
        part, expander = Reading(), self.expander
        entered = enter(expander, self.command, None, self._input)  # its input: the command's
        try:
            self.with_lists(lambda: part.script(text, self.depth + 1, self.budget, expander))
        finally:
            leave(expander, entered)
        for name in ("reads", "writes", "deletes", "destroys", "notes", "code", "ran"):
            getattr(self.reading, name).extend(getattr(part, name))
        self.reading.ran.extend(part.commands)
        self.reading.commands.extend(program_commands(part.commands))  # `python3 -c …` in it
        if part.unreadable is not None:
            self.reading.unknown_script(f"a script file: {part.unreadable}")

    def note(self, note: str) -> None:
        """Record a note (``network`` …)."""
        if note not in self.reading.notes:
            self.reading.notes.append(note)

    def copied(self, name: str, args: list[str]) -> None:
        """A copy ran: its destination holds the source's text (:mod:`.streams`)."""
        remember_copies(name, args, self.command, self.expander)

    def stdin_fields(self) -> list[str] | None:
        """The words on the standard input (``echo a b | xargs rm``), when known, or the names a
        filter not worked out may print (:func:`~.name_streams.stdin_names`)."""
        return stdin_names(self.stdin_text, self.command, self.made)


__all__ = ["Reading", "read_command", "read_full"]
