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

from pytest_harness_audit.policy.shell.powershell_dotnet import Found, dotnet_calls, made
from pytest_harness_audit.policy.shell.powershell_words import Word, parenthesized, statements

#: Cmdlets (and aliases) whose operands are paths they read, write or delete.
PATH_COMMANDS = frozenset(
    {"remove-item", "ri", "del", "erase", "rd", "rmdir", "rm", "get-content", "gc", "type",
     "cat", "set-content", "sc", "add-content", "ac", "out-file", "copy-item", "cpi", "copy",
     "cp", "move-item", "mi", "move", "mv", "rename-item", "rni", "ren", "clear-content", "clc",
     "tee-object", "tee", "select-string", "sls", "import-csv", "ipcsv", "import-clixml",
     "export-csv", "epcsv", "export-clixml", "get-filehash", "format-hex", "fhx", "invoke-item",
     "ii", "expand-archive", "compress-archive", "new-item", "ni", "clear-item", "cli",
     "get-item", "gi", "import-powershelldatafile", "import-module", "ipmo", "set-item", "si"}
)  # fmt: skip
#: Cmdlets that act on the file objects piped into them (and the POSIX program for each).
_BY_PIPE = {
    **dict.fromkeys(("remove-item", "ri", "del", "erase", "rd", "rmdir", "rm"), "rm"),
    **dict.fromkeys(("get-content", "gc", "type", "cat"), "cat"),
    **dict.fromkeys(("clear-content", "clc"), "truncate -s 0"),
    **dict.fromkeys(("copy-item", "cpi", "copy", "cp", "move-item", "mi", "move", "mv",
                     "rename-item", "rni", "ren"), "cp"),
}  # fmt: skip
#: Cmdlets that give file objects (or pass on those piped into them).
_LISTINGS = frozenset({"get-childitem", "gci", "ls", "dir"})
_ITEMS = frozenset({"get-item", "gi", "resolve-path", "rvpa"})
_FILTERS = frozenset(
    {"where-object", "where", "?", "select-object", "select", "sort-object", "sort",
     "tee-object"}
)  # fmt: skip
_INVOKERS = frozenset({"invoke-command", "icm", "start-job", "sajb", "start-threadjob"})
_STARTERS = frozenset({"start-process", "saps", "start"})
_ALIASERS = frozenset({"set-alias", "sal", "new-alias", "nal"})
_FOREACH = frozenset({"foreach-object", "%", "foreach"})
#: Variables PowerShell sets whose value is no path built by the command.
_AUTOMATIC = frozenset(
    {"true", "false", "null", "home", "pwd", "psscriptroot", "pshome", "args", "input",
     "lastexitcode", "error", "host", "psversiontable", "profile"}
)  # fmt: skip
_VARIABLE = re.compile(r"\$(?:\{([^}]*)\}|([\w:]+))")
_CMD_PROGRAMS = {"del": "rm", "erase": "rm", "rd": "rm", "rmdir": "rm", "type": "cat",
                 "copy": "cp", "xcopy": "cp -r", "robocopy": "cp -r", "move": "mv",
                 "ren": "mv", "rename": "mv"}  # fmt: skip
#: Most texts run by a command read (``iex`` of ``iex`` …).
_MAX_DEPTH = 8


class Context:
    """What the commands read so far set: variables with a literal value, aliases."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.aliases: dict[str, str] = {}


def _q(value: str) -> str:
    return shlex.quote(value.replace("\\", "/"))


def _computed(word: Word, ctx: Context, piped: bool) -> bool:
    """Whether ``word`` is a value built when the command runs (a variable set here to a
    literal, the environment, ``$_`` in a pipe: not)."""
    if word.value is not None or word.text.startswith("{"):
        return False
    text = word.text
    if text.startswith("-") and ":" in text:
        text = text.split(":", 1)[1]
        if not text or text.lower() in ("$true", "$false"):
            return False
    if text.startswith(("(", "@", "$(", '"$(')) or "-f " in text or "$(" in text:
        return True
    for match in _VARIABLE.finditer(text):
        name = (match.group(1) or match.group(2) or "").lower()
        if name.startswith("env:") or name in _AUTOMATIC or name in ctx.values:
            continue
        if name in ("_", "psitem") or name.startswith(("_.", "psitem.")):
            if piped:
                continue
        return True
    return False


def _operands(words: list[Word]) -> list[Word]:
    """The words that are no parameter name (``-Recurse``, ``-Path``)."""
    return [word for word in words if not re.fullmatch(r"-[A-Za-z][\w-]*:?", word.text)]


def _named(words: list[Word], *names: str) -> Word | None:
    """The value of the first parameter among ``names`` (lower case, abbreviations allowed)."""
    for index, word in enumerate(words):
        name, colon, value = word.text.partition(":")
        lowered = name.lower()
        if len(lowered) > 2 and any(full.startswith(lowered) for full in names):
            if colon:
                return Word(value, None if value.startswith(("$", "(")) else value)
            if index + 1 < len(words):
                return words[index + 1]
    return None


class Routes:
    """What :func:`routes` found (see :class:`.powershell_dotnet.Found`)."""

    def __init__(self) -> None:
        self.found = Found()
        self.ctx = Context()

    def unknown(self, why: str) -> None:
        """Note a reason the command cannot be read."""
        if why not in self.found.unknown:
            self.found.unknown.append(why)

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
        dotnet_calls(text, self.found)

    def _pipeline(self, pipeline: list[list[Word]], depth: int) -> None:
        source: str | None = None  # the `find` words giving the piped files, else unknown
        literal_input: list[str] | None = None
        for position, words in enumerate(pipeline):
            name = self._name(words)
            if position == 0:
                source = self._source(name, words)
                literal_input = self._literals(words)
            self._command(name, words, depth, position > 0)
            if position == 0:
                continue
            if name in ("invoke-expression", "iex") and len(words) == 1:
                if literal_input is not None:
                    self.found.scripts.extend(literal_input)
                else:
                    self.unknown("PowerShell runs code piped from another command")
            elif name in _BY_PIPE and not _operands(words[1:]):
                self._piped(_BY_PIPE[name], words, source, literal_input)
            elif name in _FOREACH:
                self._foreach(words, source, literal_input)
            elif name not in _FILTERS:
                source, literal_input = None, None

    def _name(self, words: list[Word]) -> str:
        name = (words[0].value or "").lower().removesuffix(".exe")
        return self.ctx.aliases.get(name, name)

    def _source(self, name: str, words: list[Word]) -> str | None:
        """The ``find`` words for the files a listing gives."""
        if name not in _LISTINGS and name not in _ITEMS:
            return None
        rest = words[1:]
        operands = [w for w in _operands(rest) if w not in _filter_values(rest)]
        if any(w.value is None for w in operands):
            return None
        paths = [_q(w.value or ".") for w in operands] or ["."]
        if name in _ITEMS:
            return " ".join(paths) + " -maxdepth 0"
        recurse = any(re.fullmatch(r"(?i)-r(e(c(u(r(s(e)?)?)?)?)?)?(:\$true)?", w.text) for w in rest)
        filtered = _named(rest, "-filter", "-include")
        name_test = f" -name {_q(filtered.value)}" if filtered and filtered.value else ""
        if filtered is not None and filtered.value is None:
            return None
        return " ".join(paths) + (" -mindepth 1" if recurse else " -mindepth 1 -maxdepth 1") + name_test

    def _literals(self, words: list[Word]) -> list[str] | None:
        """The strings a statement of literals alone gives (``'.env'``, ``'a','b'``)."""
        if len(words) != 1 or words[0].value is None or words[0].text[:1] not in "'\"@":
            return None
        return [part.strip().strip("'\"") for part in words[0].value.split(",")]

    def _piped(self, program: str, words: list[Word], source: str | None, given: list[str] | None) -> None:
        recursive = any(re.fullmatch(r"(?i)-r(e(c(u(r(s(e)?)?)?)?)?)?(:\$true)?", w.text) for w in words)
        if given is not None:
            flag = " -r" if recursive and program == "rm" else ""
            self.found.posix.append(f"{program}{flag} " + " ".join(map(_q, given)))
        elif source is None:
            self.unknown("PowerShell acts on objects piped from a command the reading does not follow")
        elif program == "rm" and not recursive and "-name" in source:
            self.found.posix.append(f"find {source} -delete")
        elif program == "rm":
            self.found.posix.append(f"find {source} -exec rm -r {{}} +")
        else:
            self.found.posix.append(f"find {source} -exec {program} {{}} +")

    def _foreach(self, words: list[Word], source: str | None, given: list[str] | None) -> None:
        member = _operands(words[1:])
        if member and member[0].value is not None and not member[0].text.startswith("{"):
            if member[0].value.lower() in ("delete", "moveto", "copyto", "openread", "opentext"):
                program = "rm" if member[0].value.lower() == "delete" else "cat"
                self._piped(program, [Word("-r", "-r")], source, given)
            return
        for block in (w.text[1:-1] for w in words[1:] if w.text.startswith("{")):
            for pipeline in statements(block):
                for inner in pipeline:
                    name = self._name(inner)
                    uses = any(re.search(r"\$(_|psitem)\b", w.text, re.I) for w in inner[1:])
                    if name in _BY_PIPE and uses:
                        self._piped(_BY_PIPE[name], inner, source, given)

    def _command(self, name: str, words: list[Word], depth: int, piped: bool) -> None:
        if words[0].text in ("&", ".") and len(words) > 1:
            target = words[1]
            if target.text.startswith("{"):
                return
            if target.value is None:
                self.unknown("PowerShell runs a command named at run time")
                return
            self.found.scripts.append(" ".join([shlex.quote(target.value), *(w.text for w in words[2:])]))
            return
        self._assignment(words)
        if name in self.ctx.aliases.values() and words[0].value and words[0].value.lower() in self.ctx.aliases:
            self.found.scripts.append(" ".join([name, *(w.text for w in words[1:])]))
        rest = words[1:]
        if name in PATH_COMMANDS:
            if any(_computed(w, self.ctx, piped) for w in rest):
                self.unknown("PowerShell names a path built at run time")
        elif name in ("invoke-expression", "iex"):
            values = [w.value for w in _operands(rest)]
            if values and all(v is not None for v in values):
                self.found.scripts.append(" ".join(v or "" for v in values))
            elif values:
                self.unknown("PowerShell runs code built at run time")
        elif name in _INVOKERS or (name in _FOREACH and _named(rest, "-parallel")):
            self._invoker(rest)
        elif name in _STARTERS:
            self._starter(rest)
        elif name in ("cmd", "cmd.exe"):
            self._cmd(rest)
        elif name == "add-type" and (_operands(rest) and not _named(rest, "-assemblyname")):
            self.unknown("PowerShell compiles .NET code")
        elif name == "new-object":
            self._new_object(rest)
        elif name in _ALIASERS:
            operands = [w.value for w in _operands(rest)]
            if len(operands) >= 2 and operands[0] and operands[1]:
                self.ctx.aliases[operands[0].lower()] = operands[1].lower()
            else:
                self.unknown("PowerShell defines an alias the reading cannot follow")

    def _assignment(self, words: list[Word]) -> None:
        match = re.fullmatch(r"\$([\w:]+)", words[0].text)
        if match and len(words) >= 3 and words[1].text == "=":
            name = match.group(1).lower()
            if len(words) == 3 and words[2].value is not None and words[2].text[:1] in "'\"@":
                self.ctx.values[name] = words[2].value
                self.found.posix.append(f"{name.replace(':', '_')}={_q(words[2].value)}")
            else:
                self.ctx.values.pop(name, None)

    def _invoker(self, rest: list[Word]) -> None:
        script = _named(rest, "-scriptblock", "-parallel")
        file = _named(rest, "-filepath")
        if file is not None:
            if file.value is None:
                self.unknown("PowerShell runs a script file named at run time")
            else:
                self.found.posix.append(f"pwsh -File {_q(file.value)}")
        operands = _operands(rest)
        first = script or (operands[0] if operands else None)
        if first is not None and not first.text.startswith("{") and file is None:
            self.unknown("PowerShell runs a script block the text does not show")

    def _starter(self, rest: list[Word]) -> None:
        program = _named(rest, "-filepath")
        arguments = _named(rest, "-argumentlist", "-args")
        operands = [w for w in _operands(rest) if w is not program and w is not arguments]
        program = program or (operands[0] if operands else None)
        if arguments is None and len(operands) > 1:
            arguments = operands[1]
        if program is None:
            return
        if program.value is None or (arguments is not None and arguments.value is None):
            self.unknown("PowerShell starts a program named at run time")
            return
        line = [shlex.quote(program.value)]
        if arguments is not None and arguments.value is not None:
            parts = [p.strip() for p in arguments.value.split(",")] if arguments.text[:1] not in "'\"" or "," in arguments.text.strip("'\"") and "','" in arguments.text else [arguments.value]
            line.extend(parts)
        self.found.scripts.append(" ".join(line))

    def _cmd(self, rest: list[Word]) -> None:
        values = [w.value for w in rest]
        if any(v is None for v in values):
            self.unknown("cmd runs a command built at run time")
            return
        words = [v or "" for v in values]
        lowered = [w.lower() for w in words]
        start = next((i for i, w in enumerate(lowered) if w in ("/c", "/k", "/r")), None)
        if start is None:
            return
        text = " ".join(words[start + 1 :]).replace("^", "")
        for part in re.split(r"&&|\|\||&|\|", text):
            posix = cmd_statement(part)
            if posix is None:
                self.unknown("cmd runs a command built at run time")
            elif posix:
                self.found.posix.append(posix)

    def _new_object(self, rest: list[Word]) -> None:
        if _named(rest, "-comobject"):
            self.unknown("PowerShell drives a COM object")
            return
        type_word = _named(rest, "-typename")
        operands = _operands(rest)
        if type_word is None and operands:
            type_word = operands[0]
            operands = operands[1:]
        if type_word is None or type_word.value is None:
            if type_word is not None and "(" in type_word.text:
                name, _, args = type_word.text.partition("(")
                made(name, [Word(a.strip(), a.strip().strip("'\"")) for a in args.rstrip(")").split(",") if a.strip()], self.found)
                return
            self.unknown("PowerShell makes an object of a type named at run time")
            return
        listed = _named(rest, "-argumentlist", "-args")
        args = [listed] if listed is not None else [w for w in operands if w is not type_word]
        made(type_word.value, args, self.found)


def _filter_values(words: list[Word]) -> list[Word]:
    found = [_named(words, name) for name in ("-filter", "-include", "-exclude", "-depth")]
    return [w for w in found if w is not None]


def cmd_statement(text: str) -> str | None:
    """One ``cmd`` statement as POSIX (``""``: nothing to read; ``None``: built at run time)."""
    words = text.split()
    if not words:
        return ""
    if "%" in words[0] or "!" in words[0]:
        return None
    name = words[0].lower().removesuffix(".exe")
    args = [re.sub(r"%(\w+)%", lambda m: "$HOME" if m.group(1).lower() in ("userprofile", "homepath") else "$" + m.group(1), w) for w in words[1:]]
    program = _CMD_PROGRAMS.get(name)
    if program is None:
        return " ".join([shlex.quote(words[0]), *(shlex.quote(a.replace("\\", "/")) if "$" not in a else a.replace("\\", "/") for a in args)])
    flags = {a.lower() for a in args if a.startswith("/")}
    operands = [a.replace("\\", "/") for a in args if not a.startswith("/")]
    if program == "rm" and ("/s" in flags or name in ("rd", "rmdir") and "/s" in flags):
        program = "rm -r -f"
    elif program == "rm" and name in ("rd", "rmdir"):
        program = "rmdir"
    elif name == "robocopy" and flags & {"/mir", "/purge"}:
        return " ".join(["rsync -a --delete", *operands])
    return " ".join([program, *(a if "$" in a else shlex.quote(a) for a in operands)])


def routes(text: str) -> Found:
    """What the commands of PowerShell ``text`` do that its rewriting does not show."""
    reader = Routes()
    reader.read(text, 0)
    return reader.found


__all__ = ["PATH_COMMANDS", "cmd_statement", "routes"]
