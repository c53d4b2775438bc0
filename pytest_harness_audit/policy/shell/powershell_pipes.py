"""PowerShell objects piped from a listing into a cmdlet that deletes, reads or copies them.

``Get-ChildItem app -Recurse | Remove-Item`` deletes what the listing gives, as ``find app
-mindepth 1 -exec rm -r {} +`` does; ``gci -Filter *.env -r | gc`` reads the ``.env`` files,
``… | % { Remove-Item $_ }`` and ``… | % Delete`` act on each object, ``'.env' | gc`` on the
strings piped. A listing held in a variable (``$items = gci app -r; $items | ri``) or given in
parentheses (``Remove-Item (gci app -r).FullName``) is the same source. :class:`Pipes` gives the
``find`` statement each amounts to; objects from a command it does not follow make the command
unreadable.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.powershell_dotnet import Found
from pytest_harness_audit.policy.shell.powershell_words import Word, named, operands, statements

#: Cmdlets that act on the file objects piped into them (and the POSIX program for each).
BY_PIPE: Final = {
    **dict.fromkeys(("remove-item", "ri", "del", "erase", "rd", "rmdir", "rm"), "rm"),
    **dict.fromkeys(("get-content", "gc", "type", "cat"), "cat"),
    **dict.fromkeys(("clear-content", "clc"), "truncate -s 0"),
    **dict.fromkeys(("copy-item", "cpi", "copy", "cp", "move-item", "mi", "move", "mv",
                     "rename-item", "rni", "ren"), "cp"),
}  # fmt: skip
#: Cmdlets that give file objects (or pass on those piped into them).
_LISTINGS: Final = frozenset({"get-childitem", "gci", "ls", "dir"})
_ITEMS: Final = frozenset({"get-item", "gi", "resolve-path", "rvpa"})
FILTERS: Final = frozenset(
    {"where-object", "where", "?", "select-object", "select", "sort-object", "sort",
     "tee-object"}
)  # fmt: skip
FOREACH: Final = frozenset({"foreach-object", "%", "foreach"})
_RECURSE: Final = re.compile(r"(?i)-r(e(c(u(r(s(e)?)?)?)?)?)?(:\S*)?")


class Context:
    """What the commands read so far set: variables with a literal value, aliases."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.aliases: dict[str, str] = {}
        self.splats: dict[str, list[str]] = {}
        #: Variables holding a listing's objects: the ``find`` words for them.
        self.listings: dict[str, str] = {}


def posix_quote(text: str) -> str:
    """A path as a POSIX word (``\\`` as ``/``)."""
    return shlex.quote(text.replace("\\", "/"))


def ps_quote(text: str) -> str:
    """``text`` as a PowerShell literal."""
    return "'" + text.replace("'", "''") + "'"


class Pipes:
    """The objects a pipeline's commands are given, and what acting on them amounts to."""

    def __init__(self) -> None:
        self.found = Found()
        self.ctx = Context()

    def unknown(self, why: str) -> None:
        """Note a reason the command cannot be read."""
        if why not in self.found.unknown:
            self.found.unknown.append(why)

    def _name(self, words: list[Word]) -> str:
        """The command a statement runs, in lower case: an alias the text set read as its
        cmdlet, a program named by its path (``C:\\Windows\\System32\\cmd.exe``) by its name."""
        name = (words[0].value or "").lower()
        if not name.startswith("-"):
            name = re.split(r"[\\/]", name)[-1].removesuffix(".exe")
        return self.ctx.aliases.get(name, name)

    def _source(self, name: str, words: list[Word]) -> str | None:
        """The ``find`` words for the files a listing gives."""
        if name not in _LISTINGS and name not in _ITEMS:
            return None
        rest = words[1:]
        filters = _filter_values(rest)  # once: a statement of thousands of words
        given = [self._value(w) for w in operands(rest) if w not in filters]
        if any(path is None for path in given):
            return None
        paths = [posix_quote(path or ".") for path in given] or ["."]
        if name in _ITEMS:
            return " ".join(paths) + " -maxdepth 0"
        recurse = any(_RECURSE.fullmatch(w.text) for w in rest)
        filtered = named(rest, "-filter", "-include")
        name_test = f" -name {posix_quote(filtered.value)}" if filtered and filtered.value else ""
        if filtered is not None and filtered.value is None:
            return None
        return (
            " ".join(paths)
            + (" -mindepth 1" if recurse else " -mindepth 1 -maxdepth 1")
            + name_test
        )

    def _literals(self, words: list[Word]) -> list[str] | None:
        """The strings a statement of literals alone gives (``'.env'``, ``'a','b'``)."""
        if len(words) != 1 or words[0].value is None or words[0].text[:1] not in "'\"@":
            return None
        return [part.strip().strip("'\"") for part in words[0].value.split(",")]

    def _piped(
        self, program: str, words: list[Word], source: str | None, given: list[str] | None
    ) -> None:
        recursive = any(
            re.fullmatch(r"(?i)-r(e(c(u(r(s(e)?)?)?)?)?)?(:\$true)?", w.text) for w in words
        )
        if given is not None:
            flag = " -r" if recursive and program == "rm" else ""
            self.found.posix.append(f"{program}{flag} " + " ".join(map(posix_quote, given)))
        elif source is None:
            self.unknown(
                "PowerShell acts on objects piped from a command the reading does not follow"
            )
        elif program == "rm" and not recursive and "-name" in source:
            self.found.posix.append(f"find {source} -delete")
        elif program == "rm":
            self.found.posix.append(f"find {source} -exec rm -r {{}} +")
        else:
            self.found.posix.append(f"find {source} -exec {program} {{}} +")

    def _foreach(self, words: list[Word], source: str | None, given: list[str] | None) -> None:
        first = operands(words[1:])[:1]
        if first and first[0].value is not None and not first[0].text.startswith("{"):
            called = first[0].value.lower()  # `% Delete`: the member called on each object
            if called in ("delete", "moveto", "copyto", "openread", "opentext"):
                program = "rm" if called == "delete" else "cat"
                self._piped(program, [Word("-r", "-r")], source, given)
            return
        for block in (w.text[1:-1] for w in words[1:] if w.text.startswith("{")):
            for pipeline in statements(block):
                for inner in pipeline:
                    member = re.match(
                        r"(?i)\$(?:_|psitem)\s*\.\s*(delete|moveto|copyto)\s*\(", inner[0].text
                    )
                    if member:
                        recursive = [Word("-r", "-r")] if "$true" in inner[0].text.lower() else []
                        deleted = member.group(1).lower() == "delete"
                        self._piped("rm" if deleted else "cp", recursive, source, given)
                        continue
                    name = self._name(inner)
                    uses = any(re.search(r"\$(_|psitem)\b", w.text, re.I) for w in inner[1:])
                    if name in BY_PIPE and uses:
                        self._piped(BY_PIPE[name], inner, source, given)

    def _value(self, word: Word) -> str | None:
        """A word's value: a literal's, or that of a variable set to a literal before."""
        variable = re.fullmatch(r"\$([\w:]+)", word.text)
        if variable:
            return self.ctx.values.get(variable.group(1).lower())
        return word.value

    def sourced(self, word: Word) -> str | None:
        """The ``find`` words for the objects a word gives: a variable holding a listing, a
        listing in parentheses (``(gci app -r).FullName``); else ``None``."""
        variable = re.fullmatch(r"\$([\w:]+)(?:\.\w+)?", word.text)
        if variable:
            return self.ctx.listings.get(variable.group(1).lower())
        inner = re.fullmatch(r"[@$]?\((.*)\)(?:\.\w+)?", word.text, re.DOTALL)
        found = statements(inner.group(1)) if inner else []
        if len(found) != 1 or len(found[0]) != 1:
            return None
        return self._source(self._name(found[0][0]), found[0][0])


def _filter_values(words: list[Word]) -> list[Word]:
    found = [named(words, name) for name in ("-filter", "-include", "-exclude", "-depth")]
    return [w for w in found if w is not None]


__all__ = ["BY_PIPE", "FILTERS", "FOREACH", "Context", "Pipes", "posix_quote", "ps_quote"]
