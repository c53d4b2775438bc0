"""Programs that run a command named in a syntax of their own, read as that command.

* ``socat``: an ``EXEC:CMD`` address runs ``CMD``'s words, a ``SYSTEM:CMD`` address gives it to
  ``sh -c`` (its options after the first ``,`` are the address's, not the command's);
* ``ncat``/``nc``/``netcat`` ``-e PROG``/``--exec PROG`` and ``-c CMD``/``--sh-exec CMD``;
* ``start-stop-daemon --start --exec PROG``/``--startas PROG`` … ``-- ARG…``;
* ``run-parts DIR``: every program in the workspace folder ``DIR`` (each read by its ``#!``;
  ``--test``/``--list`` only print their names);
* Tcl's ``exec CMD …``, expect's ``spawn CMD …`` and ``open "|CMD"`` in the text ``expect -c``,
  ``tclsh``/``wish``/``expect`` read from their standard input or a script file run; Tcl's own
  file commands there as the shell's: ``file delete [-force] P…`` as ``rm [-rf] P…``, ``file
  rename``/``copy [-force] S… D`` as ``mv``/``cp -r``, ``file link [-sym] L T`` as ``ln``, and
  ``open F w`` (``a``, ``w+``, ``r+``, ``{WRONLY …}``) as a write of ``F``. In a text that
  evaluates strings (``eval``, ``uplevel``, ``after``, ``subst`` …) its quoted strings are read
  as commands too, and a command made at run time there (``eval $c``, ``[join …]``) is
  unreadable.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.context import Context

_NETCATS: Final = frozenset({"ncat", "nc", "netcat", "nc.traditional", "nc.openbsd"})
_TCLS: Final = frozenset({"tclsh", "wish", "expect", "expectk"})
#: The commands read here (the cheap test before any parsing).
RUNNER_PROGRAMS: Final = (
    frozenset({"socat", "start-stop-daemon", "run-parts"}) | _NETCATS | _TCLS
)  # fmt: skip
_SOCAT_ADDRESS: Final = re.compile(r"(?i)^(exec|system):(.*)$", re.DOTALL)
#: A Tcl command that runs a program: ``exec``, ``spawn``, ``open "|…"`` (after a command start).
_TCL_RUN: Final = re.compile(r"(?m)(?:^|[;\[{])[ \t]*(?:exec|spawn)[ \t]+((?:[^;\]}\n])+)")
_TCL_PIPE: Final = re.compile(r"""\bopen[ \t]+["{]\|([^"}\n]+)["}]""")
_TCL_SWITCH: Final = re.compile(r"^(?:-(?:ignorestderr|keepnewline|noecho|nottycopy|nottyinit"
                                r"|console|open|leaveopen|pty|-)\s+)+")  # fmt: skip
#: Tcl's ``file`` subcommands that change files, and the shell command each is read as.
_TCL_FILE: Final = re.compile(
    r"(?m)(?:^|[;\[{])[ \t]*file[ \t]+(delete|rename|copy|link)[ \t]+((?:[^;\]\n])+)"
)
_TCL_FILE_COMMANDS: Final = {"delete": "rm", "rename": "mv", "copy": "cp -r", "link": "ln"}
_TCL_OPEN: Final = re.compile(
    r"\bopen[ \t]+(\S+)[ \t]+"
    r"(?:[\"{]?(?:[wa]\+?|r\+)[\"}]?(?=[\s\]])|\{[^}]*(?:WRONLY|RDWR)[^}]*\})"
)
#: Tcl commands that run a text as a script, and a script's command built at run time.
_TCL_EVALS: Final = re.compile(r"\b(?:eval|uplevel|subst|after|interp|apply|namespace)\b")
_TCL_DYNAMIC: Final = re.compile(
    r"(?m)(?:^|;)[ \t]*[$\[]|\b(?:eval|uplevel|subst|after[ \t]+\S+)[ \t]+[$\[]"
)
#: Most programs of a ``run-parts`` folder read.
_MAX_PARTS: Final = 64


def runner_programs(name: str, args: list[str], ctx: Context) -> None:
    """Read the command ``name args`` runs in its own syntax (module doc)."""
    if name == "socat":
        for word in args:
            found = _SOCAT_ADDRESS.match(word)
            if found is not None:
                command = found.group(2).split(",", 1)[0]  # `exec:'cmd',pty,stderr`
                ctx.script(command)  # EXEC's words read as a line of them
    elif name in _NETCATS:
        _netcat(args, ctx)
    elif name == "start-stop-daemon":
        _daemon(args, ctx)
    elif name == "run-parts":
        if any(word in ("--test", "--list") for word in args):
            return  # the names it would run, printed
        operands = [word for word in args if not word.startswith("-")]
        files = ctx.workspace_files(operands[-1]) if operands else None
        for path in sorted(files or [])[:_MAX_PARTS]:
            if posixpath.dirname(path.rstrip("/")) == operands[-1].rstrip("/"):
                ctx.program_file(path)
    else:
        _tcl(args, ctx)


def _netcat(args: list[str], ctx: Context) -> None:
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        if option in ("-e", "--exec", "-c", "--sh-exec"):
            given = value if equals else (args[index + 1] if index + 1 < len(args) else "")
            if given:
                ctx.script(given)


def _daemon(args: list[str], ctx: Context) -> None:
    program: str | None = None
    for index, word in enumerate(args):
        if word == "--":
            break
        option, equals, value = word.partition("=")
        if option in ("-x", "--exec", "-a", "--startas"):
            program = value if equals else (args[index + 1] if index + 1 < len(args) else None)
    if not program:
        return
    rest = args[args.index("--") + 1 :] if "--" in args else []
    ctx.script(shlex.join([program, *rest]))


def _tcl(args: list[str], ctx: Context) -> None:
    texts: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word == "-c" and index + 1 < len(args):
            texts.append(args[index + 1])
            index += 1
        elif not word.startswith("-"):
            operands.append(word)
        index += 1
    if operands:
        text = ctx.workspace_text(operands[0])
        if text is not None:
            texts.append(text)
    elif ctx.stdin_text is not None:
        texts.append(ctx.stdin_text)
    elif ctx.stdin_unknown:  # `python3 gen.py | tclsh`
        ctx.unknown("a Tcl shell runs a script piped in from another command")
    for text in texts:
        if _TCL_EVALS.search(text):  # `eval "file delete -force app"`: its strings are code
            text = text.replace('"', "\n")
        if _TCL_DYNAMIC.search(text):  # `$f delete -force app`, `eval $c`
            ctx.unknown("a Tcl script runs a command it builds at run time")
        for command in _TCL_RUN.findall(text) + _TCL_PIPE.findall(text):
            words = _TCL_SWITCH.sub("", command.strip()).rstrip("&").strip()
            if words:
                ctx.script(words)
        if "file" in text:
            for sub, rest in _TCL_FILE.findall(text):
                _tcl_file(sub, rest, ctx)
        if "open" in text:
            ctx.reading.writes.extend(_tcl_word(n) for n in _TCL_OPEN.findall(text))


def _tcl_file(sub: str, rest: str, ctx: Context) -> None:
    """``file delete -force app`` read as ``rm -rf app`` (module doc)."""
    words = [_tcl_word(word) for word in rest.split()]
    force = "-force" in words
    operands = [w for w in words if w not in ("-force", "--", "-symbolic", "-hard")]
    command = _TCL_FILE_COMMANDS[sub]
    if sub == "delete" and force:
        command = "rm -rf"
    elif force:
        command += " -f"
    if sub == "link":  # `file link ?-symbolic|-hard? LINK TARGET`: the link is written
        command = "ln" if "-hard" in words else "ln -s"
        operands.reverse()
    if operands:
        ctx.script(f"{command} -- {shlex.join(operands)}")


def _tcl_word(word: str) -> str:
    """A Tcl word without its braces or quotes."""
    if len(word) > 1 and word[0] + word[-1] in ("{}", '""'):
        return word[1:-1]
    return word


__all__ = ["RUNNER_PROGRAMS", "runner_programs"]
