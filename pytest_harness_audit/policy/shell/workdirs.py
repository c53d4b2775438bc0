"""The folder a wrapper runs its command in: ``env -C DIR``, ``sudo -D DIR``, ``systemd-run
--working-directory=DIR``, ``run0 --chdir=DIR``, ``unshare``/``nsenter`` ``--wd=DIR``.

Everything the command runs starts there, a script it hands to a shell included (``env -C ..
sh -c 'echo x >> audit/x.jsonl'``), so the command is read as ``cd DIR && COMMAND``: the
reading's place moves for every path the command and its scripts name, as after a ``cd``.
(``git``/``tar``/``make -C DIR`` move only the paths of their own words: :mod:`.place`.)

A program the reading does not know as a wrapper may still run its operands as a command
(``bwrap``, ``unshare``, ``fakeroot``, ``chroot``, ``setpriv``, ``valgrind`` …, with options of
any arity before it): a shell given ``-c`` or an interpreter given code among its operands is
read as the script it is (:func:`inner_script`), as ``capsh -- ARGS`` is ``bash ARGS``. So is
a program that deletes, overwrites or moves files named after its first operand (``cgexec -g
cpu:x rm -rf app``, ``retry -- rm -rf app``, ``pueue add rm -rf app``): its words to the end
are read as the command they may be. At the first operand it is more often a subcommand of the
program's own (``brew rm PKG``, ``mc rm``), left to the wrappers the reading knows by name.
"""

from __future__ import annotations

import re
import shlex

from pytest_harness_audit.policy.shell.projects import INTERPRETERS, SHELLS

#: Each wrapper's options naming the folder its command runs in.
_FOLDER_OPTIONS = {
    "env": ("-C", "--chdir"),
    "sudo": ("-D", "--chdir"),
    "systemd-run": ("--working-directory", "-D"),
    "run0": ("--chdir", "-D"),
    "unshare": ("--wd", "-w"),
    "nsenter": ("--wd", "-w"),
}


_FOLDER_NAMES = frozenset({"--chdir", "--wd", "--working-directory", "--workdir"})
#: What a program's name looks like (a word of a sentence ends with `:`, `,`, `!` …).
_PROGRAM_NAME = re.compile(r"[\w.+-]+")
#: Clients that run their command on another host.
_REMOTE_SHELLS = frozenset({"ssh", "autossh", "mosh", "rsh", "slogin", "dbclient"})
#: Options after which a program's own words end and a command's begin (``retry -- CMD``,
#: ``gdb --args CMD``, ``xterm -e CMD``).
_SEPARATORS = frozenset({"--", "--args", "-e", "--exec", "--command"})
#: Programs whose command, found among another program's operands, is read as one: they
#: delete, overwrite, move or copy the files they name.
_FILE_PROGRAMS = frozenset(
    {"rm", "rmdir", "unlink", "shred", "wipe", "srm", "truncate", "dd", "find", "mv", "cp",
     "install", "ln", "tee", "sponge", "chmod", "chown", "chgrp", "rsync"}
)  # fmt: skip


def moved_command(name: str, options: list[str], command: list[str]) -> str | None:
    """``cd DIR && COMMAND`` for wrapper ``name`` given ``options`` (its words before the
    command) that run ``command`` in ``DIR``; ``None`` when it names no folder."""
    names = _FOLDER_OPTIONS.get(name)
    if names is None:
        return None
    folder = None
    for index, word in enumerate(options):
        option, equals, value = word.partition("=")
        if option in names and option[:2] == "--" and equals:
            folder = value  # `--chdir=..`
        elif word in names and index + 1 < len(options):
            folder = options[index + 1]  # `-C ..`, `--chdir ..`
        elif word[:2] in names and len(word) > 2 and word[1:2] != "-":
            folder = word[2:]  # `-C..`
    if not folder:
        return None
    return f"cd {shlex.quote(folder)} && {shlex.join(command)}"


def inner_script(name: str, args: list[str]) -> str | None:
    """The command a program that is no known wrapper runs from its operands: from the first
    word that names a shell given ``-c`` (``-lc``, ``-ec`` …) or an interpreter given code
    (``-c``, ``-e``), as a script (``bwrap --bind / / sh -c TEXT``, ``fakeroot bash -c TEXT``,
    ``unshare -r python3 -c CODE``), or a program of :data:`_FILE_PROGRAMS` after the first
    operand (module doc); ``capsh``'s words after ``--``, which it hands to bash (or its
    ``--shell=``); ``None``: no such word."""
    if name == "capsh" and "--" in args:
        shells = [word[8:] for word in args[: args.index("--")] if word.startswith("--shell=")]
        return shlex.join([shells[-1] if shells else "bash", *args[args.index("--") + 1 :]])
    # not prose typed (`Remember: …`), nor a remote shell's command (read where it runs:
    # :mod:`.loopback_ssh`)
    named = _PROGRAM_NAME.fullmatch(name) is not None and name not in _REMOTE_SHELLS
    for index in range(len(args) - 1):
        flag = args[index + 1]
        program = args[index].rsplit("/", 1)[-1].lower()
        before = args[index - 1] if index else "-"
        if named and program in _FILE_PROGRAMS and (before in _SEPARATORS or before[:1] != "-"):
            return _script_from(args, index)  # `cgexec -g cpu:x rm -rf app`
        if index == len(args) - 2:
            continue  # a shell or interpreter needs its text after the flag
        if flag[:1] != "-" or flag[1:2] == "-" or flag[-1] not in "ce":
            continue  # the cheap test: a short option ending in `c` or `e` follows
        shell = program in SHELLS and flag[-1] == "c"
        if shell or (INTERPRETERS.fullmatch(program) and flag in ("-c", "-e")):
            return _script_from(args, index)
    return None


def _script_from(args: list[str], index: int) -> str:
    """``args[index:]`` as a script, run in the folder an option before it names."""
    script = shlex.join(args[index:])
    folder = _folder_option(args[:index])  # `bwrap --chdir .. sh -c …`
    return f"cd {shlex.quote(folder)} && {script}" if folder else script


def _folder_option(options: list[str]) -> str | None:
    """The folder a ``--chdir``/``--wd``/``--working-directory`` option among ``options``
    names (``bwrap --chdir DIR``, ``unshare --wd=DIR``, ``nsenter --wd=DIR``)."""
    folder = None
    for index, word in enumerate(options):
        option, equals, value = word.partition("=")
        if option in _FOLDER_NAMES:
            folder = value if equals else "".join(options[index + 1 : index + 2]) or None
    return folder


def watch_runs_words(word: str) -> bool:
    """Whether ``word`` is ``watch``'s ``-x``/``--exec`` (also bundled: ``-tx``, ``-xn1``):
    ``watch`` then runs its words themselves, not ``sh -c`` of them joined."""
    return word == "--exec" or (word[:2] != "--" and "x" in word.split("n", 1)[0])


__all__ = ["inner_script", "moved_command", "watch_runs_words"]
