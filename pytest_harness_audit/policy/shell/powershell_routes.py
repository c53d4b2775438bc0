"""PowerShell commands whose act the rewriting of cmdlet names does not show.

:func:`routes` reads each command of a PowerShell text (in its blocks and parentheses too) and
gives what the plain rewriting (:func:`.powershell.as_posix`) misses: POSIX statements for what
it does, PowerShell texts it runs, and why what it does cannot be known.

* Code run from a string: ``Invoke-Expression``/``iex`` of a literal is read as PowerShell, of
  anything else (``iex ('Remove-'+'Item …')``, ``$code | iex``) is unreadable; so is the call
  operator with a name built at run time (``& ("Remove"+"-Item") app``), a script block from a
  variable (``Invoke-Command -ScriptBlock $sb``), ``Add-Type`` compiling code, a COM object.
* Programs started: ``Start-Process FILE -ArgumentList …`` is read as ``FILE …``; ``cmd /c
  TEXT`` as the POSIX commands its ``del /s``, ``rd /s``, ``type``, ``copy``, ``move`` amount to.
* Paths built at run time: a cmdlet that reads, writes or deletes files (``Get-Content``,
  ``Remove-Item``, ``Rename-Item``, ``Import-Csv`` …) given ``('.e'+'nv')``, ``"$($x)"``, ``-f``,
  a variable not set to a literal in the text, or a splat (``@args``) is unreadable.
* Objects piped: ``Get-ChildItem app -Recurse | Remove-Item`` acts on what the listing gives: read
  as ``find`` with ``-delete`` or ``-exec``; from a source the text does not show, unreadable.
* Aliases the command defines (``Set-Alias x Remove-Item``) are read as the cmdlet they name.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.powershell_canonical import canonical, redirections
from pytest_harness_audit.policy.shell.powershell_cmd import cmd_text
from pytest_harness_audit.policy.shell.powershell_dotnet import (
    Found,
    dotnet_calls,
    new_object,
    split_commas,
)
from pytest_harness_audit.policy.shell.powershell_names import CMDLETS
from pytest_harness_audit.policy.shell.powershell_pipes import (
    BY_PIPE,
    FILTERS,
    FOREACH,
    Context,
    Pipes,
    posix_quote,
    ps_quote,
)
from pytest_harness_audit.policy.shell.powershell_words import (
    Word,
    expression_value,
    named,
    operands,
    parenthesized,
    statements,
    value,
)

#: Cmdlets (and aliases) whose operands are paths they read, write or delete.
PATH_COMMANDS: Final = frozenset(
    {"remove-item", "ri", "del", "erase", "rd", "rmdir", "rm", "get-content", "gc", "type",
     "cat", "set-content", "sc", "add-content", "ac", "out-file", "copy-item", "cpi", "copy",
     "cp", "move-item", "mi", "move", "mv", "rename-item", "rni", "ren", "clear-content", "clc",
     "tee-object", "tee", "select-string", "sls", "import-csv", "ipcsv", "import-clixml",
     "export-csv", "epcsv", "export-clixml", "get-filehash", "format-hex", "fhx", "invoke-item",
     "ii", "expand-archive", "compress-archive", "new-item", "ni", "clear-item", "cli",
     "get-item", "gi", "import-powershelldatafile", "import-module", "ipmo", "set-item", "si"}
)  # fmt: skip
_INVOKERS: Final = frozenset({"invoke-command", "icm", "start-job", "sajb", "start-threadjob"})
_STARTERS: Final = frozenset({"start-process", "saps", "start"})
_ALIASERS: Final = frozenset({"set-alias", "sal", "new-alias", "nal"})
#: Variables PowerShell sets whose value is no path built by the command.
_AUTOMATIC: Final = frozenset(
    {"true", "false", "null", "home", "pwd", "psscriptroot", "pshome",
     "lastexitcode", "error", "host", "psversiontable", "profile"}
)  # fmt: skip
#: A file of a drive written as a variable: ``${c:SOUL.md} = 'x'``.
_DRIVE_ASSIGNMENT: Final = re.compile(
    r"\$\{(?!env:|variable:|function:|alias:)\w+:([^}:]+)\}\s*(?:[-+*/]?=|>)(?!=)", re.I
)
_SHELLS: Final = frozenset({"pwsh", "powershell", "cmd"})
#: PowerShell's own options that take a value.
_PWSH_VALUED: Final = ("-executionpolicy", "-workingdirectory", "-windowstyle", "-version",
                "-outputformat", "-inputformat", "-configurationname", "-settingsfile",
                "-custompipename", "-psconsolefile", "-configurationfile")  # fmt: skip
_VARIABLE: Final = re.compile(r"\$(?:\{([^}]*)\}|([\w:]+))")
#: Most texts run by a command read (``iex`` of ``iex`` …).
_MAX_DEPTH: Final = 8


def _computed(word: Word, ctx: Context) -> bool:
    """Whether ``word`` is a value built when the command runs (a variable set here to a
    literal, the environment, ``$_`` in a pipe: not)."""
    if word.value is not None or word.text.startswith("{"):
        return False
    text = word.text
    if text.startswith("-") and ":" in text:
        text = text.split(":", 1)[1]
        if not text or text.lower() in ("$true", "$false"):
            return False
    splat = re.fullmatch(r"@([\w:]+)", text)
    if splat and (splat.group(1).lower() in ctx.splats or splat.group(1).lower() in ctx.values):
        return False
    if text.startswith(("(", "@", "$(", '"$(')) or "-f " in text or "$(" in text:
        return True
    for match in _VARIABLE.finditer(text):
        name = (match.group(1) or match.group(2) or "").lower()
        if name.startswith("env:") or name in _AUTOMATIC:
            continue
        if name in ctx.values and text[match.end() : match.end() + 1] not in (".", "["):
            continue  # `$f` set to a literal (`$f[0]`, `$f.Name`: what it gives is not read)
        if name in ("_", "psitem") or name.startswith(("_.", "psitem.")):
            continue  # the objects piped in: read where the pipe is (`Routes._piped`)
        return True
    return False


class Routes(Pipes):
    """What :func:`routes` found (see :class:`.powershell_dotnet.Found`)."""

    def read(self, text: str, depth: int) -> None:
        """Read ``text``'s statements, then those inside its brackets."""
        if depth > _MAX_DEPTH:
            self.unknown("PowerShell code nested too deep")
            return
        for pipeline in statements(text):
            self._pipeline(pipeline, depth)
        for inner in parenthesized(text):
            for pipeline in statements(inner):
                self._pipeline(pipeline, depth)
        dotnet_calls(text, self.found, self.ctx.values)
        for match in _DRIVE_ASSIGNMENT.finditer(text):
            self.found.posix.append(f"tee {posix_quote(match.group(1))}")

    def _pipeline(self, pipeline: list[list[Word]], depth: int) -> None:
        source: str | None = None  # the `find` words giving the piped files, else unknown
        literal_input: list[str] | None = None
        for position, given in enumerate(pipeline):
            words = self._assigned(given) if position == 0 else given
            words = redirections(words, self.ctx, self.found)
            if not words:
                return
            name = self._name(words)
            canonical(name, words, self.ctx, self.found, name in PATH_COMMANDS or name in CMDLETS)
            if position == 0:
                source = self._source(name, words)
                if source is None and len(words) == 1:
                    source = self.sourced(words[0])  # `$items | ri`, `(gci app) | ri`
                literal_input = self._literals(words)
            self._command(name, words, depth, position > 0)
            if position == 0:
                continue
            if name in ("invoke-expression", "iex") and len(words) == 1:
                if literal_input is not None:
                    self.found.scripts.extend(literal_input)
                else:
                    self.unknown("PowerShell runs code piped from another command")
            elif name in BY_PIPE and not operands(words[1:]):
                self._piped(BY_PIPE[name], words, source, literal_input)
            elif name in FOREACH:
                self._foreach(words, source, literal_input)
            elif name in _SHELLS and _reads_stdin(name, words[1:]):
                self._stdin_shell(name, literal_input)
            elif name in ("select-string", "sls") and source is not None:
                self._piped("cat", words, source, None)  # it searches the files piped in
            elif name not in FILTERS:
                source, literal_input = None, None

    def _command(self, name: str, words: list[Word], depth: int, piped: bool) -> None:
        if words[0].text in ("&", ".") and len(words) > 1:
            target = words[1]
            if target.text.startswith("{"):
                return
            if target.value is None:
                self.unknown("PowerShell runs a command named at run time")
                return
            self.found.scripts.append(
                " ".join([shlex.quote(target.value), *(w.text for w in words[2:])])
            )
            return
        if (
            name in self.ctx.aliases.values()
            and words[0].value
            and words[0].value.lower() in self.ctx.aliases
        ):
            self.found.scripts.append(" ".join([name, *(w.text for w in words[1:])]))
        rest = words[1:]
        script = words[0].value or ""
        if name in ("import-module", "ipmo") and rest and rest[0].value:
            script = rest[0].value  # a module file's code runs when it is imported
        if script.lower().endswith((".ps1", ".psm1")):
            self.found.posix.append(f"pwsh -File {posix_quote(script)}")
        if name in ("new-item", "ni", "set-item", "si") and self._provider_item(rest):
            return
        if name in PATH_COMMANDS:
            listed = [(w, self.sourced(w)) for w in rest if w.text[:1] in "$@("]
            for _, source in listed:
                if source is not None and name in BY_PIPE:
                    self._piped(BY_PIPE[name], words, source, None)  # `ri (gci app -r)`
            sourced = {id(w) for w, source in listed if source is not None}
            if any(_computed(w, self.ctx) for w in rest if id(w) not in sourced):
                self.unknown("PowerShell names a path built at run time")
            if name in ("new-item", "ni"):
                self._new_item(rest)
        elif name in ("invoke-expression", "iex"):
            values = [self._value(w) for w in operands(rest)]
            if values and all(v is not None for v in values):
                self.found.scripts.append(" ".join(v or "" for v in values))
            elif values:
                self.unknown("PowerShell runs code built at run time")
        elif name in _INVOKERS or (name in FOREACH and named(rest, "-parallel")):
            self._invoker(rest)
        elif name in _STARTERS:
            self._starter(rest)
        elif name in ("cmd", "cmd.exe"):
            self._cmd(rest)
        elif name == "wsl":
            self._wsl(rest)
        elif name == "add-type" and (operands(rest) and not named(rest, "-assemblyname")):
            self.unknown("PowerShell compiles .NET code")
        elif name == "new-object":
            new_object(rest, self.found)
        elif name in ("set-variable", "sv", "new-variable", "nv"):
            variable = (
                self._param(rest, "-name")
                or next(iter(_positionals(rest, ("-name", "-value"))), Word("", None)).value
            )
            given = named(rest, "-value") or next(
                iter(_positionals(rest, ("-name", "-value"))[1:]), None
            )
            if variable and given is not None and given.value is not None:
                self.ctx.values[variable.lower()] = given.value
        elif name in _ALIASERS:
            names = [w.value for w in operands(rest)]
            if len(names) >= 2 and names[0] and names[1]:
                self.ctx.aliases[names[0].lower()] = names[1].lower()
            else:
                self.unknown("PowerShell defines an alias the reading cannot follow")

    def _new_item(self, rest: list[Word]) -> None:
        """``New-Item``: a file written (``tee``), a link made (``ln -s``), a folder nothing."""
        kind = (self._param(rest, "-itemtype", "-type") or "file").lower()
        target = self._param(rest, "-target", "-value")
        folder = self._param(rest, "-path")
        leaf = self._param(rest, "-name")
        valued = ("-itemtype", "-type", "-target", "-value", "-path", "-name")
        positional = _positionals(rest, valued)
        if folder is None and positional:
            folder = positional[0].value
        if positional[:1] and positional[0].value is None and folder is None:
            self.unknown("PowerShell makes an item at a path built at run time")
            return
        path = "/".join(part for part in (folder, leaf) if part) or None
        if kind in ("directory", "d") or path is None:
            return
        if kind in ("symboliclink", "junction", "hardlink"):
            if target is None:
                self.unknown("PowerShell links to a path built at run time")
                return
            self.found.posix.append(f"ln -s {posix_quote(target)} {posix_quote(path)}")
        else:
            self.found.posix.append(f"tee {posix_quote(path)}")

    def _provider_item(self, rest: list[Word]) -> bool:
        """``New-Item alias:x -Value Remove-Item`` (an alias), ``function:x`` (a function from
        a string): whether the item was one of these."""
        given = _positionals(rest, ("-path", "-name", "-value", "-itemtype", "-type"))
        path = self._param(rest, "-path", "-name") or (given[0].value if given else None)
        if path is None or not re.match(r"(?i)(alias|function):", path):
            return False
        body = self._param(rest, "-value")
        if body is None and len(given) > 1 and not given[1].text.startswith("{"):
            body = given[1].value
        drive, _, item = path.partition(":")
        if drive.lower() == "alias" and body:
            self.ctx.aliases[item.lower()] = body.lower()
        elif drive.lower() == "function" and body:
            self.found.scripts.append(body)
        elif drive.lower() == "alias" or named(rest, "-value") is not None:
            self.unknown("PowerShell defines a command from a value built at run time")
        return True

    def _param(self, rest: list[Word], *names: str) -> str | None:
        word = named(rest, *names)
        return None if word is None else word.value

    def _stdin_shell(self, name: str, given: list[str] | None) -> None:
        """A PowerShell or ``cmd`` fed its commands on standard input."""
        if given is None:
            self.unknown(f"{name} runs commands piped in from another command")
        elif name == "cmd":
            for line in given:
                posix, known = cmd_text([Word("/c", "/c"), Word(line, line)])
                self.found.posix.extend(posix)
                if not known:
                    self.unknown("cmd runs a command built at run time")
        else:
            self.found.scripts.extend(given)

    def _assigned(self, words: list[Word]) -> list[Word]:
        """The words after an assignment's head (``$x = …``), the value of a variable set to a
        literal (or a hashtable of literals, for splatting) kept."""
        match = re.fullmatch(r"\$\{?([\w:-]+)\}?", words[0].text)
        if not (match and len(words) >= 2 and re.fullmatch(r"[-+*/%]?=", words[1].text)):
            return words
        name = match.group(1).lower()
        drive, colon, item = name.partition(":")
        if colon and drive in ("alias", "function") and len(words) > 2:
            body = words[2].value if len(words) == 3 else None  # `${alias:x} = 'Remove-Item'`
            if body is None and not words[2].text.startswith("{"):
                self.unknown("PowerShell defines a command from a value built at run time")
            elif body is not None and drive == "alias":
                self.ctx.aliases[item] = body.lower()
            elif body is not None:
                self.found.scripts.append(body)
            return []
        self.ctx.values.pop(name, None)
        self.ctx.splats.pop(name, None)
        self.ctx.listings.pop(name, None)
        listing = self._source(self._name(words[2:]), words[2:]) if len(words) > 2 else None
        if listing is not None:
            self.ctx.listings[name] = listing
        if len(words) == 3 and words[1].text == "=":
            copied = self._value(words[2]) if words[2].text[:1] == "$" else None
            if copied is not None:  # `$q = $p`
                self.ctx.values[name] = copied
                return []
            if words[2].value is not None and words[2].text[:1] in "'\"@":
                self.ctx.values[name] = words[2].value
                return []
            table = _hashtable(words[2].text)
            if table is not None:
                self.ctx.splats[name] = table
                return []
        return words[2:]

    def _invoker(self, rest: list[Word]) -> None:
        script = named(rest, "-scriptblock", "-parallel")
        file = named(rest, "-filepath")
        if file is not None:
            if file.value is None:
                self.unknown("PowerShell runs a script file named at run time")
            else:
                self.found.posix.append(f"pwsh -File {posix_quote(file.value)}")
        positional = operands(rest)
        first = script or (positional[0] if positional else None)
        if first is not None and not first.text.startswith("{") and file is None:
            self.unknown("PowerShell runs a script block the text does not show")

    def _starter(self, rest: list[Word]) -> None:
        program = named(rest, "-filepath")
        arguments = named(rest, "-argumentlist", "-args")
        positional = [w for w in operands(rest) if w is not program and w is not arguments]
        program = program or (positional[0] if positional else None)
        if arguments is None and len(positional) > 1:
            arguments = positional[1]
        if program is None:
            return
        if program.value is None or (arguments is not None and arguments.value is None):
            self.unknown("PowerShell starts a program named at run time")
            return
        line = [ps_quote(program.value)]
        parts = split_commas(arguments.text) if arguments is not None else []
        for part in parts:
            # one string is the command line as typed; an array, one argument each
            part_value = value(part.strip())
            if part_value is None:
                self.unknown("PowerShell starts a program named at run time")
                return
            line.append(part_value if len(parts) == 1 else ps_quote(part_value))
        self.found.scripts.append("& " + " ".join(line))

    def _wsl(self, rest: list[Word]) -> None:
        """``wsl [-d NAME] [-u USER] [--cd DIR] [-e|--exec|--] COMMAND …``: a Linux command."""
        index = 0
        while index < len(rest) and (rest[index].value or "").startswith("-"):
            option = (rest[index].value or "").lower()
            index += 1
            if option in ("-e", "--exec", "--"):
                break
            if option in ("-d", "--distribution", "-u", "--user", "--cd"):
                index += 1
        argv = [word.value for word in rest[index:]]
        if any(arg is None for arg in argv):
            self.unknown("wsl runs a command built at run time")
        elif argv:
            self.found.posix.append(shlex.join([arg or "" for arg in argv]))

    def _cmd(self, rest: list[Word]) -> None:
        posix, known = cmd_text(rest)
        self.found.posix.extend(posix)
        if not known:
            self.unknown("cmd runs a command built at run time")


def _hashtable(text: str) -> list[str] | None:
    """A hashtable of literals (``@{Path='app'; Recurse=$true}``) as the parameters it splats
    (``-Path 'app' -Recurse``), else ``None``."""
    if not (text.startswith("@{") and text.endswith("}")):
        return None
    out: list[str] = []
    for entry in re.split(r"[;\n]", text[2:-1]):
        key, equals, given = entry.partition("=")
        key, given = key.strip().strip("'\""), given.strip()
        if not entry.strip():
            continue
        if not equals or not re.fullmatch(r"\w+", key):
            return None
        if given.lower() == "$true":
            out.append(f"-{key}")
        elif given.lower() != "$false":
            found = expression_value(given)
            if found is None:
                return None
            out.extend([f"-{key}", ps_quote(found)])
    return out


def _positionals(words: list[Word], valued: tuple[str, ...]) -> list[Word]:
    """The words that are neither a parameter nor the value of one of ``valued``."""
    out: list[Word] = []
    skip = False
    for word in words:
        lowered = word.text.lower()
        if skip:
            skip = False
        elif re.fullmatch(r"-[a-z][\w-]*", lowered):
            skip = any(full.startswith(lowered) for full in valued) and len(lowered) > 2
        elif not lowered.startswith("-"):
            out.append(word)
    return out


def _reads_stdin(name: str, args: list[Word]) -> bool:
    """Whether ``pwsh ARGS`` (or ``cmd ARGS``) runs the commands on its standard input."""
    index = 0
    while index < len(args):
        word = (args[index].value or "?").lower()
        following = (args[index + 1].value or "?") if index + 1 < len(args) else ""
        if name == "cmd":
            if word in ("/c", "/k", "/r"):
                return False
        elif word == "-":
            return True
        elif word in ("-c", "-f", "-fi", "-e", "-ec") or any(
            len(word) > 3 and full.startswith(word)
            for full in ("-command", "-file", "-encodedcommand")
        ):
            return following == "-"
        elif not word.startswith("-"):
            return False  # a script file
        elif word in ("-ep", "-wd", "-w", "-v", "-o", "-of", "-if") or any(
            len(word) > 3 and full.startswith(word) for full in _PWSH_VALUED
        ):
            index += 1  # the option's value
        index += 1
    return True


def routes(text: str) -> Found:
    """What the commands of PowerShell ``text`` do that its rewriting does not show."""
    reader = Routes()
    reader.read(text, 0)
    return reader.found


__all__ = ["PATH_COMMANDS", "routes"]
