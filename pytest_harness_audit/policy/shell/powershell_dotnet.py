""".NET members PowerShell calls, as the POSIX commands they amount to.

PowerShell reaches files and the network without a cmdlet: ``[IO.File]::ReadAllText('.env')``,
``[IO.Directory]::Delete('app', $true)``, ``(New-Object Net.WebClient).DownloadString(URL)``,
``(Get-Item app).Delete($true)``. :func:`dotnet_calls` reads each static call (``[T]::M(…)``,
``[T]::new(…)``, type names in any case, spaced, with or without ``System.``) and each method
call on an object whose making the text shows, and gives what it does as POSIX statements
(``cat '.env'``, ``rm -r 'app'``, ``curl URL``). What cannot be read gives a reason instead (the
command is then unreadable, never allowed unread): a type the table does not know, a file or
network member called on an object the text does not make, a path or code built at run time.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Final

from pytest_harness_audit.policy.shell.powershell_words import (
    Word,
    expression_value,
    literal,
    named,
    operands,
    statements,
    value,
)
from pytest_harness_audit.policy.shell.quoted_spans import sub_quoted

#: Types whose static members reach no file, program or network (by their last name).
_PURE_TYPES: Final = frozenset(
    {"math", "string", "char", "convert", "datetime", "datetimeoffset", "timespan", "guid",
     "encoding", "utf8encoding", "environment", "path", "regex", "int", "int16", "int32",
     "int64", "uint32", "uint64", "long", "double", "single", "float", "decimal", "bool",
     "boolean", "byte", "sbyte", "console", "bitconverter", "enumerable", "array", "arraylist",
     "hashtable", "ordered", "pscustomobject", "psobject", "version", "uri", "stringbuilder",
     "stopwatch", "thread", "cultureinfo", "random", "biginteger", "bigint", "enum", "type",
     "runtimeinformation", "ipaddress", "mailaddress", "xml", "xmldocument", "webutility",
     "httputility", "wildcardpattern", "stringcomparer", "stringcomparison", "textinfo",
     "object", "void", "text.encoding", "uribuilder", "semver", "semanticversion", "dbnull",
     "securestring", "char[]", "byte[]", "string[]", "int[]", "object[]", "timezoneinfo",
     "globalization", "jsonserializer", "base64", "nullable", "tuple", "valuetuple"}
)  # fmt: skip
#: File members: what each does with its arguments (``read``/``write``/``delete``/``copy``/
#: ``move``: the first is the path, a copy's or move's second the destination).
_FILE: Final = {
    **dict.fromkeys(
        ("readalltext", "readallbytes", "readalllines", "readlines", "openread", "opentext",
         "open", "readalltextasync", "readallbytesasync", "readalllinesasync", "readlinesasync",
         "openhandle", "new"), "read"),
    **dict.fromkeys(
        ("writealltext", "writeallbytes", "writealllines", "appendalltext", "appendalllines",
         "appendtext", "createtext", "create", "openwrite", "writealltextasync",
         "writeallbytesasync", "writealllinesasync", "appendalltextasync",
         "appendalllinesasync", "encrypt", "decrypt", "setunixfilemode"), "write"),
    "delete": "delete",
    "copy": "copy",
    "move": "move",
    "replace": "move",
    "createsymboliclink": "write",
}  # fmt: skip
_DIRECTORY: Final = {"delete": "rmdir", "move": "move", "createdirectory": "mkdir",
              "setcurrentdirectory": "cd", "createsymboliclink": "write"}  # fmt: skip
#: Stream types made from a path: what they do with it.
_STREAMS: Final = {"streamreader": "read", "streamwriter": "write", "filestream": "stream",
            "binaryreader": "", "binarywriter": "", "fileinfo": "",
            "directoryinfo": ""}  # fmt: skip
#: Types that talk to the network.
_NETWORK: Final = frozenset(
    {"webclient", "httpclient", "webrequest", "httpwebrequest", "ftpwebrequest", "tcpclient",
     "udpclient", "socket", "dns", "smtpclient", "clientwebsocket", "ping", "tcplistener",
     "httplistener", "networkstream", "sslstream", "httpclienthandler", "socketshttphandler",
     "restclient", "webproxy"}
)  # fmt: skip
#: Members of an object whose type the text does not show that touch files, programs or the
#: network: a call of one on such an object cannot be read.
_EFFECT_MEMBERS: Final = frozenset(
    {"delete", "moveto", "copyto", "open", "openread", "opentext", "openwrite", "create",
     "createtext", "appendtext", "encrypt", "decrypt", "downloadstring", "downloadfile",
     "downloaddata", "downloadstringtaskasync", "downloadfiletaskasync", "downloaddatataskasync",
     "downloadfileasync", "downloadstringasync", "uploadstring", "uploadfile", "uploaddata",
     "uploadvalues", "uploadfileasync", "uploadstringtaskasync", "uploadfiletaskasync",
     "getasync", "postasync", "putasync", "sendasync", "deleteasync", "patchasync",
     "getstringasync", "getbytearrayasync", "getstreamasync", "getresponse", "getresponseasync",
     "getrequeststream", "connect", "connectasync", "invoke", "invokeasync", "invokescript",
     "invokereturnasis", "addscript", "addcommand", "begininvoke", "newscriptblock",
     "expandstring",
     "writealltext", "readalltext", "createsubdirectory", "setaccesscontrol"}
)  # fmt: skip
_STATIC: Final = re.compile(r"\[\s*([A-Za-z_][\w.` \t]*?)\s*\]\s*::\s*([A-Za-z_]\w*)\s*(\()?")
_INSTANCE: Final = re.compile(r"([\w\])])\s*\.\s*([A-Za-z_]\w*)\s*\(")
_ASSIGNED: Final = re.compile(r"\$([\w:]+)\s*=\s*([^;\n|]+)")
_QUOTES: Final = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"`]|`.)*\"", re.DOTALL)
_HOMES: Final = frozenset({"userprofile", "homepath", "home"})
#: A member named by a string or variable (``[IO.File]::"ReadAllText"(…)``, ``$o.$m(…)``) or
#: of a type named by a value (``([type]'IO.File')::ReadAllText``, ``$t::Delete``).
_DYNAMIC_MEMBER: Final = re.compile(
    r"(?:\]\s*::|(?:\)|\$[\w:]+|\])\s*\.)\s*(?:[\"'][^\"']*[\"']|\$[\w:]+|\([^()]*\))\s*\("
    r"|(?:\)|\$[\w:]+)\s*::\s*[A-Za-z_]"
)
_ITEM_COMMANDS: Final = frozenset({"get-item", "gi", "get-childitem", "gci", "ls", "dir"})


class Found:
    """What the .NET calls of a text amount to: POSIX statements, PowerShell texts run (a
    script block made from a string), and why some could not be read."""

    def __init__(self) -> None:
        self.posix: list[str] = []
        self.scripts: list[str] = []
        self.unknown: list[str] = []


def _type_key(name: str) -> str:
    """A type name as the tables key it: its last dotted part, in lower case."""
    name = re.sub(r"[\s`]", "", name).lower()
    name = name.removeprefix("system.")
    if name in _PURE_TYPES:
        return name
    return name.rsplit(".", 1)[-1]


def _arguments(
    text: str, start: int, values: Mapping[str, str] | None = None
) -> tuple[list[Word], int]:
    """The comma-separated arguments of the call whose ``(`` is at ``start``; the index past
    its ``)``."""
    depth, index, quote = 0, start, ""
    while index < len(text):
        char = text[index]
        if quote:
            if char == "`" and quote == '"':
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                break
        index += 1
    inner = text[start + 1 : index]
    words: list[Word] = []
    for part in split_commas(inner):
        part = part.strip()
        variable = re.fullmatch(r"\$([\w:]+)", part)
        if variable and values and variable.group(1).lower() in values:
            words.append(Word(part, values[variable.group(1).lower()]))
        elif part:
            words.append(Word(part, expression_value(part)))
    return words, index + 1


def split_commas(text: str, quotes: str = "'\"") -> list[str]:
    """``text`` split on its commas outside quotes (``quotes``: the characters that open one)
    and brackets."""
    parts: list[str] = []
    depth, quote, start = 0, "", 0
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in quotes:
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _q(value: str) -> str:
    return shlex.quote(value.replace("\\", "/"))


def _paths(args: list[Word], count: int, what: str, found: Found) -> list[str] | None:
    """The first ``count`` arguments as paths, or ``None`` (a reason noted) when one is built
    at run time."""
    if len(args) < count:
        return None
    known = [posix_path(word) for word in args[:count]]
    paths = [path for path in known if path is not None]
    if len(paths) < count:
        found.unknown.append(f"PowerShell {what} a path built at run time")
        return None
    return paths


_ENVIRONMENT_ONLY: Final = re.compile(
    r'"?((?:[^"$`\'(]|\$(?:env:\w+|\{env:\w+\}|home\b))*)"?', re.I
)


def posix_path(word: Word) -> str | None:
    """A path word as POSIX shell text: a literal quoted, one naming the environment
    (``"$env:USERPROFILE\\.ssh"``, ``$HOME\\x``) in double quotes; else ``None``."""
    if word.value is not None:
        return _q(word.value)
    match = _ENVIRONMENT_ONLY.fullmatch(word.text)
    if match is None:
        return None
    text = re.sub(
        r"\$(?:\{env:(\w+)\}|env:(\w+)|(home)\b)",
        lambda m: (
            "${HOME}"
            if (m.group(1) or m.group(2) or "home").lower() in _HOMES
            else "${" + (m.group(1) or m.group(2)) + "}"
        ),
        match.group(1),
        flags=re.I,
    )
    return '"' + text.replace("\\", "/") + '"'


def file_action(action: str, args: list[Word], found: Found) -> None:
    """A file member's ``action`` (:data:`_FILE`) on ``args``, as a POSIX statement."""
    if action == "read":
        paths = _paths(args, 1, "reads", found)
        if paths:
            found.posix.append(f"cat {paths[0]}")
            mode = (args[1].value or "").lower() if len(args) > 1 else ""
            if any(word in mode for word in ("create", "truncate", "append", "write")):
                found.posix.append(f"tee {paths[0]}")
    elif action == "write":
        paths = _paths(args, 1, "writes", found)
        if paths:
            found.posix.append(f"tee {paths[0]}")
    elif action == "delete":
        paths = _paths(args, 1, "deletes", found)
        if paths:
            found.posix.append(f"rm -f {paths[0]}")
    elif action in ("copy", "move"):
        paths = _paths(args, 2, "copies", found)
        if paths:
            found.posix.append(f"{'cp' if action == 'copy' else 'mv'} {paths[0]} {paths[1]}")


def _directory(member: str, args: list[Word], found: Found) -> None:
    action = _DIRECTORY.get(member)
    if action is None:
        return
    if action == "rmdir":
        paths = _paths(args, 1, "deletes", found)
        recursive = len(args) > 1 and (args[1].value or "").lower() != "$false"
        if paths:
            found.posix.append(f"rm -r -f {paths[0]}" if recursive else f"rmdir {paths[0]}")
    elif action in ("move", "write"):
        file_action(action, args, found)
    elif action in ("mkdir", "cd"):
        paths = _paths(args, 1, "names", found)
        if paths:
            found.posix.append(f"{'mkdir -p' if action == 'mkdir' else 'cd'} {paths[0]}")


def network(args: list[Word], found: Found, upload: bool = False) -> None:
    """A network exchange with the URLs (and, ``upload``: the file) among ``args``."""
    urls = [w.value for w in args if w.value and re.match(r"(?i)[a-z][\w+.-]*://", w.value)]
    files = [w.value for w in args if w.value and w.value not in urls] if upload else []
    found.posix.append(
        " ".join(["curl", *(f"-T {_q(path)}" for path in files[-1:]), *map(_q, urls)])
    )


def made(type_name: str, args: list[Word], found: Found) -> str:
    """An object of ``type_name`` made with ``args`` (``[T]::new``, ``New-Object``): what making
    it does; its key for the member calls that follow."""
    key = _type_key(type_name)
    if key in _STREAMS:
        action = _STREAMS[key]
        if action == "stream":
            file_action("read", args, found)
        elif action:
            file_action(action, args, found)
    elif key in _NETWORK:
        network(args, found)
    elif key not in _PURE_TYPES and key not in ("scriptblock", "powershell"):
        found.unknown.append(f"PowerShell makes a .NET object the reading does not know: {key}")
    return key


def _static(key: str, member: str, args: list[Word], found: Found) -> None:
    if member == "new":
        made(key, args, found)
    elif key in ("file", "fileinfo"):
        action = _FILE.get(member)
        if action is not None:
            file_action(action, args, found)
    elif key in ("directory", "directoryinfo"):
        _directory(member, args, found)
    elif key in _NETWORK:
        network(args, found)
    elif key == "scriptblock" and member == "create":
        if args and args[0].value is not None:
            found.scripts.append(args[0].value)
        else:
            found.unknown.append("PowerShell runs code built at run time")
    elif key == "zipfile" and member in ("extracttodirectory", "createfromdirectory", "open",
                                          "openread"):  # fmt: skip
        paths = _paths(args, min(len(args), 2), "archives", found)
        if paths:  # as `unzip -o ZIP -d DIR`, `zip -r ZIP DIR` read them
            found.posix.append(" ".join(["zip -r", *reversed(paths)]))
    elif key == "process" and member == "start" and args:
        values = [word.value for word in args]
        if any(value is None for value in values):
            found.unknown.append("PowerShell starts a program named at run time")
        else:
            found.scripts.append(" ".join(["&", *(value or "" for value in values)]))
    elif key not in _PURE_TYPES and key not in ("path", "streamreader", "streamwriter"):
        found.unknown.append(f"PowerShell calls a .NET member the reading does not know: {key}")


def _receiver(
    text: str, end: int, variables: dict[str, tuple[str, list[Word]]]
) -> tuple[str, list[Word]]:
    """What the object before ``.Member(`` is: ``("item", [path])`` for a file or folder the
    text names, a type key for an object it makes, ``("", [])`` when it does not say."""
    if text[end - 1] != ")":
        variable = re.search(r"(?<![\w.])\$([\w:]+)$", text[:end])
        return variables.get(variable.group(1).lower(), ("", [])) if variable else ("", [])
    depth, index = 0, end - 1
    while index >= 0:
        depth += {")": 1, "(": -1}.get(text[index], 0)
        if depth == 0:
            break
        index -= 1
    inner = text[index + 1 : end - 1].strip()
    made_static = re.search(r"\[\s*([A-Za-z_][\w.\s]*?)\s*\]\s*::\s*new\s*$", text[:index], re.I)
    if made_static:
        return _object(_type_key(made_static.group(1)), _arguments(text, index)[0])
    return _expression_kind(inner)


def _object(key: str, args: list[Word]) -> tuple[str, list[Word]]:
    """An object of type ``key`` made with ``args``: a file or folder object is the item."""
    return ("item", args[:1]) if key in ("fileinfo", "directoryinfo") else (key, args)


def _expression_kind(text: str) -> tuple[str, list[Word]]:
    """What object a command or expression gives: an item it names, a type it makes."""
    found = statements(text)
    if not found or not found[0] or not found[0][0]:
        return ("", [])
    words = found[0][0]
    name = words[0].text.lower()
    if name in _ITEM_COMMANDS:
        operands = [w for w in words[1:] if not w.text.startswith("-")]
        return ("item", operands[:1])
    if name == "new-object" and len(words) > 1:
        given = [w for w in words[1:] if not w.text.startswith("-")]
        if given and "(" in given[0].text:  # `New-Object T(a, b)`
            type_name, _, inner = given[0].text.partition("(")
            parts = [part.strip() for part in split_commas(inner.rstrip(")"))]
            return _object(_type_key(type_name), [Word(p, value(p)) for p in parts if p])
        if given:
            return _object(_type_key(given[0].text), given[1:])
    cast = re.match(r"\[\s*([A-Za-z_][\w.\s]*?)\s*\]\s*(.+)$", text, re.DOTALL)
    if cast:
        key = _type_key(cast.group(1))
        if key in ("fileinfo", "directoryinfo"):
            return ("item", [Word(cast.group(2), literal(cast.group(2).strip()))])
        if key in _NETWORK or key in _STREAMS:
            return (key, [])
    static_new = re.match(r"\[\s*([A-Za-z_][\w.\s]*?)\s*\]\s*::\s*new\s*\(", text, re.I)
    if static_new:
        return _object(_type_key(static_new.group(1)), _arguments(text, static_new.end() - 1)[0])
    return ("", [])


def _instance(
    kind: str, made_with: list[Word], member: str, args: list[Word], found: Found
) -> None:
    if kind == "item":
        path = made_with[:1]
        if member == "delete":
            recursive = bool(args) and (args[0].value or "").lower() != "$false"
            paths = _paths(path, 1, "deletes", found)
            if paths:
                found.posix.append(f"rm -r -f {paths[0]}" if recursive else f"rm -f {paths[0]}")
        elif member in ("moveto", "copyto", "replace"):
            file_action("copy" if member == "copyto" else "move", path + args[:1], found)
        elif member in _FILE:
            file_action(_FILE[member], path, found)
        elif member in _EFFECT_MEMBERS:
            found.unknown.append(f"PowerShell calls .{member}() on a file")
    elif kind in _NETWORK:
        network(args, found, upload=member.startswith("upload"))
    elif kind in _STREAMS or kind in _PURE_TYPES:
        return
    elif member in _EFFECT_MEMBERS:
        found.unknown.append(f"PowerShell calls .{member}() on an object the text does not show")


def _masked(text: str) -> str:
    """``text`` with its quoted strings blanked (their text is no call)."""
    return sub_quoted(
        _QUOTES, lambda m: m.group()[0] + " " * (len(m.group()) - 2) + m.group()[-1], text
    )


def dotnet_calls(text: str, found: Found, values: Mapping[str, str] | None = None) -> None:
    """Read the .NET calls of ``text`` (not those inside its strings) into ``found``
    (``values``: the variables set to a literal before)."""
    masked = _masked(text)
    variables: dict[str, tuple[str, list[Word]]] = {}
    for match in _ASSIGNED.finditer(masked):
        source = text[match.start(2) : match.end(2)].strip()
        kind, made_with = _expression_kind(source)
        if kind:
            variables[match.group(1).lower()] = (kind, made_with)
    if _DYNAMIC_MEMBER.search(masked):
        found.unknown.append("PowerShell calls a .NET member named at run time")
    for match in _STATIC.finditer(masked):
        key, member = _type_key(match.group(1)), match.group(2).lower()
        if match.group(3) is None:
            if key in _NETWORK | {"file", "directory"}:  # `$f = [IO.File]::Delete; $f.Invoke(…)`
                found.unknown.append(f"PowerShell passes a .NET member as a value: {key}")
            continue
        args, _ = _arguments(text, match.end(3) - 1, values)
        _static(key, member, args, found)
    for match in _INSTANCE.finditer(masked):
        member = match.group(2).lower()
        kind, made_with = _receiver(text, match.end(1), variables)
        if not kind and member not in _EFFECT_MEMBERS:
            continue
        args, _ = _arguments(text, match.end() - 1, values)
        _instance(kind, made_with, member, args, found)


def new_object(rest: list[Word], found: Found) -> None:
    """What ``New-Object``'s object does when made (``-ComObject``: unreadable)."""
    if named(rest, "-comobject"):
        found.unknown.append("PowerShell drives a COM object")
        return
    type_word = named(rest, "-typename")
    positional = operands(rest)
    if type_word is None and positional:
        type_word, positional = positional[0], positional[1:]
    if type_word is not None and type_word.value is None and "(" in type_word.text:
        name, _, inner = type_word.text.partition("(")  # `New-Object T(a, b)`
        parts = [part.strip() for part in split_commas(inner.rstrip(")"))]
        made(name, [Word(part, value(part)) for part in parts if part], found)
        return
    if type_word is None or type_word.value is None:
        found.unknown.append("PowerShell makes an object of a type named at run time")
        return
    listed = named(rest, "-argumentlist", "-args")
    if listed is not None:
        positional = [Word(part.strip(), value(part.strip())) for part in split_commas(listed.text)]
    made(type_word.value, [word for word in positional if word is not type_word], found)


__all__ = [
    "Found",
    "dotnet_calls",
    "file_action",
    "made",
    "network",
    "new_object",
    "posix_path",
    "split_commas",
]
