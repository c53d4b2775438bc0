"""Word expansion as the shell does it before running a command, within bounds.

Brace expansion (``.env{,_bak}``), parameter expansion of variables assigned earlier in the same
command (``CMD=rm; $CMD``) and of ``$IFS`` (a field separator), command substitution of a plain
``echo``/``printf`` (``$(echo rm)``), field splitting, pathname expansion (globs) and quote
removal. A value that cannot be known (``$HOME`` aside, which is ``~``) stays as its ``$NAME``
text and marks the field *dynamic*.

Globs are expanded against the workspace root when one is given, or against the directory inside
it a script has moved to (``cd app && cat *``; at most :data:`GLOB_MATCH_LIMIT` paths a word),
and a glob is also read as every sensitive name it could match
(:data:`~pytest_harness_audit.policy.sensitive.GLOB_CANDIDATES`: ``S*L.md`` → ``SOUL.md``,
``~/.[e]nv`` → ``~/.env``) — where the shell runs is not known.
"""

from __future__ import annotations

import glob
import itertools
import os
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pytest_harness_audit.policy.sensitive import glob_candidates
from pytest_harness_audit.policy.shell.filters import MAX_FILTERS, run_filter
from pytest_harness_audit.policy.shell.nodes import Lit, Param, Part, Redirect, Sub, Word
from pytest_harness_audit.policy.shell.params import operate
from pytest_harness_audit.policy.shell.place import Place

#: Most fields one word may expand to (braces, globs); the rest are dropped.
MAX_FIELDS = 256
#: Most paths a glob word adds from a workspace listing.
GLOB_MATCH_LIMIT = 64
#: Most glob words of one command listed against the workspace.
GLOB_LISTING_LIMIT = 16
#: Largest script file of the workspace read when a command runs it.
SCRIPT_FILE_LIMIT = 64 * 1024
_GLOB_MAX_WILD_PARTS = 2
#: Folders :meth:`Expander.workspace_files` does not look in: installed dependencies, builds.
_SKIPPED = frozenset(
    {"node_modules", "venv", "env", "site-packages", "__pycache__", "build", "dist", "target"}
)
_IFS = " \t\n"
_BRACE = 1  # brace expansion applies
_SPLIT = 2  # field splitting applies
_GLOB = 4  # pathname expansion applies
_UNQUOTED_LITERAL = _BRACE | _GLOB
_UNQUOTED_VALUE = _SPLIT | _GLOB
_GLOB_CHARS = re.compile(r"[*?\[]")
_SEQUENCE = re.compile(r"^(-?\d{1,6})\.\.(-?\d{1,6})$|^([A-Za-z])\.\.([A-Za-z])$")

Chars = list[tuple[str, int]]


@dataclass(slots=True)
class Field:
    """One expanded word: its text, and whether part of it could not be known."""

    text: str
    dynamic: bool = False


class Expander:
    """Expands words with the variables of one script (:attr:`variables`)."""

    def __init__(self, root: str | None = None) -> None:
        self.root = root
        self.variables: dict[str, str] = {}
        self.listings = 0
        #: Where the script being read has moved to (``cd``), for globs and relative paths.
        self.place = Place.for_root(root)
        #: Files this command writes with a known text (``echo 'cmd' > s.sh``), by
        #: :meth:`key`; and those it writes with a text that cannot be known.
        self.files: dict[str, str] = {}
        self.unknown_files: set[str] = set()
        #: Whether ``*`` matches dotfiles (``shopt -s dotglob``, ``GLOBIGNORE=…``).
        self.dotglob = False
        #: Workspace files program text loaded (imports), each read once (:mod:`.imports`).
        self.loaded: set[str] = set()
        self.pending_loads: list[str] = []
        #: Workspace files reached through a symlink by :meth:`file_text`, not yet reported.
        self.followed: list[str] = []
        #: Aliases the command defines (``alias c='cat .env'``), by name.
        self.aliases: dict[str, str] = {}
        #: Workspace files a command runs that were too large to read (the reading says so).
        self.too_large: list[str] = []

    # -- parts to characters -------------------------------------------------------------------
    def _chars(self, word: Word, out: Chars) -> bool:
        """Append the characters of ``word`` with their flags; return whether any is dynamic."""
        dynamic = False
        for part in word:
            if isinstance(part, Lit):
                flags = 0 if part.quoted else _UNQUOTED_LITERAL
                out.extend((char, flags) for char in part.text)
                continue
            value, known = self._value(part)
            dynamic |= not known
            if isinstance(part, Param) and part.default is not None and not value:
                dynamic |= self._chars(part.default, out)
                continue
            flags = 0 if part.quoted or not known else _UNQUOTED_VALUE
            out.extend((char, flags) for char in value)
        return dynamic

    def _value(self, part: Part) -> tuple[str, bool]:
        """The value of an expansion and whether it is known."""
        if isinstance(part, Param):
            if part.opaque:
                value = self._operated(part)
                if value is not None:
                    return value, True
                return f"${{{part.name}}}", False
            if part.name in self.variables:
                return self.variables[part.name], True
            if part.name == "IFS":
                return _IFS, True
            if part.name == "HOME":
                return "~", True
            if part.name == "PWD":
                return ".", True
            if part.default is not None:
                return "", True
            return f"${part.name}", False
        if isinstance(part, Sub):
            value = self.substitution_value(part)
            return ("$(…)", False) if value is None else (value, True)
        return "", True  # pragma: no cover - Lit is handled by the caller

    def _operated(self, part: Param) -> str | None:
        """``${NAME<op>}`` and ``${!NAME}`` on a known value (:mod:`.params`)."""
        op = part.op
        if op is None:
            return None
        if part.name == "!":  # indirection: the variable named by NAME's value
            target = self.variables.get(op)
            return None if target is None else self.variables.get(target)
        value = self.variables.get(part.name)
        return None if value is None else operate(value, op)

    def substitution_value(self, sub: Sub) -> str | None:
        """The output of ``$(echo …)``/``$(printf '%s' …)``, ``$(cat FILE)``/``$(<FILE)`` of a
        file the reading knows, or of a short pipeline of text filters after one (``$(echo
        LmVudg== | base64 -d)``, :mod:`.filters`); ``None`` when not knowable."""
        commands = sub.commands
        if sub.arithmetic or not commands or len(commands) > MAX_FILTERS:
            return None
        if any(later.stdin is not earlier for earlier, later in itertools.pairwise(commands)):
            return None  # not one pipeline
        text: str | None = None
        for index, command in enumerate(commands):
            if index == 0 and not command.words and len(command.redirects) == 1:
                text = self._redirected_file(command.redirects[0])  # `$(<file)`
                if text is None:
                    return None
                continue
            if command.redirects or not command.words:
                return None
            fields = [field for word in command.words for field in self.expand(word)]
            if any(field.dynamic for field in fields):
                return None
            argv = [field.text for field in fields]
            if index == 0 and argv[0].rsplit("/", 1)[-1] == "cat" and len(argv) > 1:
                texts = [self.file_text(path) for path in argv[1:9] if not path.startswith("-")]
                known = len(texts) == len(argv) - 1 and all(t is not None for t in texts)
                text = "".join(t or "" for t in texts) if known else None  # `$(cat file)`
            elif index == 0:
                text = echo_output(argv)
                text = None if text is None else text + "\n"
            else:
                text = run_filter(argv[0].rsplit("/", 1)[-1], argv[1:], text)
            if text is None:
                return None
        return None if text is None else text.rstrip("\n")

    def _redirected_file(self, redirect: Redirect) -> str | None:
        if redirect.op != "<" or redirect.target is None:
            return None
        fields = self.expand(redirect.target)
        return self.file_text(fields[0].text) if len(fields) == 1 else None

    # -- the expansion steps -------------------------------------------------------------------
    def expand(self, word: Word) -> list[Field]:
        """The fields ``word`` expands to (quote removal, braces, variables, splitting, globs)."""
        if len(word) == 1 and isinstance(word[0], Lit):
            text = word[0].text
            if word[0].quoted or not needs_work(text):
                return [Field(text)]
        chars: Chars = []
        dynamic = self._chars(word, chars)
        results: list[Field] = []
        ifs = self.variables.get("IFS", _IFS)
        for variant in brace_expand(chars):
            for field_chars in _split(variant, ifs):
                results.extend(self._glob(field_chars, dynamic))
                if len(results) >= MAX_FIELDS:
                    return results[:MAX_FIELDS]
        return results

    def _glob(self, chars: Chars, dynamic: bool) -> Iterator[Field]:
        text = "".join(char for char, _ in chars)
        if not any(flags & _GLOB and char in "*?[" for char, flags in chars):
            yield Field(text, dynamic)
            return
        pattern = "".join(
            char if flags & _GLOB or char not in "*?[]" else f"[{char}]" for char, flags in chars
        )
        seen = {text}
        yield Field(text, dynamic)
        for path in itertools.chain(self._listing(pattern), glob_candidates(pattern)):
            if path not in seen:
                seen.add(path)
                yield Field(path, dynamic)

    def _listing(self, pattern: str) -> list[str]:
        root = self.root
        if not root or self.listings >= GLOB_LISTING_LIMIT or "$" in pattern:
            return []
        if pattern.startswith("~"):
            return []
        if pattern.startswith("/"):
            prefix = root.rstrip("/") + "/"
            if not pattern.startswith(prefix):
                return []
            pattern = pattern[len(prefix) :]
        elif (here := self.place.here) is not None or "/../" in f"/{pattern}":
            # where the script has moved inside the workspace (`cd app && cat ../*/*.json`),
            # listed from the root: the paths come back relative to it
            pattern = posixpath.normpath(posixpath.join(here or ".", pattern))
        parts = pattern.split("/")
        if ".." in parts or sum(1 for p in parts if _GLOB_CHARS.search(p)) > _GLOB_MAX_WILD_PARTS:
            return []
        self.listings += 1
        try:
            found = glob.iglob(pattern, root_dir=root)
            if self.dotglob:  # `*` and `?` match a leading dot too
                head, slash, last = pattern.rpartition("/")
                dotted = (
                    "." + last if last[:1] == "*" else "." + last[1:] if last[:1] == "?" else ""
                )
                if dotted:
                    found = itertools.chain(found, glob.iglob(head + slash + dotted, root_dir=root))
            return list(itertools.islice(found, GLOB_MATCH_LIMIT))
        except (OSError, ValueError):
            return []

    def file_text(self, path: str) -> str | None:
        """The text of a script file a command runs: written earlier in the same command with
        a known text, or a file of the workspace (at most :data:`SCRIPT_FILE_LIMIT` bytes, not
        a symlink out of it); ``None`` when it cannot be known. A path with glob characters
        is the first workspace path it matches, as the shell runs it (``./ti*.sh``); one built
        at run time is the workspace path its known ending names (``$(pwd)/tidy.sh``)."""
        if not path or "\0" in path:
            return None
        key = self.key(path)
        if key in self.files:
            return self.files[key]
        if key in self.unknown_files:
            return None
        root = self.root
        if not root:
            return None
        if "$" in path:
            path = _known_ending(path)
            if not path:
                return None
        elif _GLOB_CHARS.search(path):
            matches = sorted(self._listing(path))
            if not matches:
                return None
            path = matches[0]
        here = self.place.here
        joined = os.path.join(root, here or "", path) if not path.startswith("/") else path
        try:
            real, real_root = os.path.realpath(joined), os.path.realpath(root)
            if not real.startswith(real_root.rstrip("/") + "/") or not os.path.isfile(real):
                return None
            if os.path.islink(joined):
                self.followed.append(os.path.relpath(real, real_root))
            if os.path.getsize(real) > SCRIPT_FILE_LIMIT:
                self.too_large.append(path)
                return None
            with open(real, "rb") as handle:
                return handle.read(SCRIPT_FILE_LIMIT).decode("utf-8", "replace")
        except (OSError, ValueError):
            return None

    def key(self, path: str) -> str:
        """How a file written or run in this command is known: its path from where the script
        is (``cd app; … > s.sh`` and ``sh app/s.sh`` from the start are one file)."""
        here = self.place.here
        return file_key(posixpath.join(here, path) if here and path[:1] != "/" else path)

    def workspace_files(self, folder: str, limit: int = 4096) -> list[str] | None:
        """The files under the workspace folder ``folder`` (paths from where the script is,
        sorted; hidden, dependency and build folders skipped): none without a workspace;
        ``None`` when there are more than ``limit`` entries to look at."""
        root = self.root
        if not root:
            return []
        here = self.place.here or ""
        top = os.path.realpath(os.path.join(root, here, folder))
        real_root = os.path.realpath(root)
        if top != real_root and not top.startswith(real_root.rstrip("/") + "/"):
            return []
        found: list[str] = []
        seen = 0
        for current, folders, files in os.walk(top):
            folders[:] = sorted(f for f in folders if f not in _SKIPPED and f[:1] != ".")
            seen += len(folders) + len(files)
            if seen > limit:
                return None
            prefix = os.path.relpath(current, os.path.join(real_root, here))
            found.extend(posixpath.normpath(posixpath.join(prefix, name)) for name in files)
        return sorted(found)

    def assign(self, name: str, word: Word) -> None:
        """Record ``NAME=word`` (its value as one field, as an assignment is not split)."""
        chars: Chars = []
        if name == "GLOBIGNORE":
            self.dotglob = bool(word)  # bash: a GLOBIGNORE set lets `*` match dotfiles
        if self._chars(word, chars):
            self.variables.pop(name, None)
            return
        self.variables[name] = "".join(char for char, _ in chars)


def file_key(path: str) -> str:
    """How a file written or run in one command is known: its path normalised (``./s.sh`` and
    ``s.sh`` are one file)."""
    return posixpath.normpath(path) if path else path


#: Expansions a field keeps as text when their value cannot be known.
_UNKNOWN_PART = re.compile(r"\$(?:\(…\)|\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|.)")


def _known_ending(path: str) -> str:
    """The workspace path a path built at run time names by its known ending
    (``$(pwd)/tools/x.sh`` → ``tools/x.sh``); empty when it ends in an unknown part."""
    ending = _UNKNOWN_PART.split(path)[-1]
    return ending.lstrip("/") if ending.startswith("/") and len(ending) > 1 else ""


def needs_work(text: str) -> bool:
    """Whether an unquoted literal has a brace or a glob character (else it stands as it is)."""
    return "{" in text or "*" in text or "?" in text or "[" in text


def _split(chars: Chars, ifs: str = _IFS) -> list[Chars]:
    """Field splitting of the characters that came from unquoted expansions (on ``ifs``, the
    value of ``IFS`` when a script set it)."""
    if not any(flags & _SPLIT for _, flags in chars):
        return [chars]
    fields: list[Chars] = []
    current: Chars = []
    started = False
    for char, flags in chars:
        if flags & _SPLIT and char in ifs:
            if current or started:
                fields.append(current)
            current, started = [], False
            continue
        current.append((char, flags))
        started = True
    if current:
        fields.append(current)
    return fields


def brace_expand(chars: Chars) -> list[Chars]:
    """Brace expansion of the unquoted braces (``a{b,c}`` → ``ab ac``, ``{1..3}``)."""
    if not any(flags & _BRACE and char == "{" for char, flags in chars):
        return [chars]
    results: list[Chars] = []
    pending = [chars]
    while pending and len(results) < MAX_FIELDS:
        current = pending.pop()
        found = _first_brace(current)
        if found is None:
            results.append(current)
            continue
        start, commas, end = found
        head, tail = current[:start], current[end + 1 :]
        if commas:
            bounds = [start, *commas, end]
            options = [current[a + 1 : b] for a, b in itertools.pairwise(bounds)]
        else:
            options = _sequence(current[start + 1 : end])
        pending.extend(head + option + tail for option in reversed(options))
    return results[:MAX_FIELDS]


def _first_brace(chars: Chars) -> tuple[int, list[int], int] | None:
    """The first expandable ``{…}``: its start, top-level commas and end."""
    index = 0
    size = len(chars)
    while index < size:
        char, flags = chars[index]
        if char == "{" and flags & _BRACE:
            depth, commas, cursor = 0, [], index
            while cursor < size:
                inner, inner_flags = chars[cursor]
                if inner_flags & _BRACE:
                    if inner == "{":
                        depth += 1
                    elif inner == "}":
                        depth -= 1
                        if depth == 0:
                            break
                    elif inner == "," and depth == 1:
                        commas.append(cursor)
                cursor += 1
            if cursor < size and (commas or _sequence(chars[index + 1 : cursor])):
                return index, commas, cursor
        index += 1
    return None


def _sequence(chars: Chars) -> list[Chars]:
    match = _SEQUENCE.match("".join(char for char, _ in chars))
    if match is None:
        return []
    if match.group(1) is not None:
        first, last = int(match.group(1)), int(match.group(2))
        step = 1 if last >= first else -1
        values = [str(v) for v in range(first, last + step, step)][:MAX_FIELDS]
    else:
        first_c, last_c = ord(match.group(3)), ord(match.group(4))
        step = 1 if last_c >= first_c else -1
        values = [chr(v) for v in range(first_c, last_c + step, step)]
    return [[(char, 0) for char in value] for value in values]


def echo_output(argv: list[str]) -> str | None:
    """What ``echo``/``printf '%s…'`` prints for ``argv``, without the final newline."""
    name = argv[0].rsplit("/", 1)[-1] if argv else ""
    args = argv[1:]
    if name == "echo":
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            args = args[1:]
        return " ".join(args)
    if name == "printf" and args:
        template = args[0]
        if template in ("%s", "%s\\n", "%s\n"):
            return "".join(args[1:])
        if "%" not in template:
            return _PRINTF_ESCAPE.sub(_printf_escape, template)
        return _printf_strings(template, args[1:])
    return None


_CONVERSION = re.compile(r"%(.)")


def _filler(values: Iterator[str]) -> Callable[[re.Match[str]], str]:
    """The replacement of each ``%s`` (the next value) and ``%%`` (a percent sign)."""
    return lambda match: "%" if match.group(1) == "%" else next(values)


def _printf_strings(template: str, values: list[str]) -> str | None:
    """``printf TEMPLATE VALUES…`` for a template whose conversions are all ``%s`` (and
    ``%%``): the template is used again while values are left, as ``printf`` does."""
    if any(c not in ("s", "%") for c in _CONVERSION.findall(template)):
        return None
    count = template.replace("%%", "").count("%s")
    out: list[str] = []
    remaining = list(values)
    while True:
        taken, remaining = remaining[:count], remaining[count:]
        taken += [""] * (count - len(taken))
        rendered = _CONVERSION.sub(_filler(iter(taken)), template)
        out.append(_PRINTF_ESCAPE.sub(_printf_escape, rendered))
        if not remaining or not count or len(out) >= 64:
            return "".join(out)


_PRINTF_ESCAPE = re.compile(r"\\(?:x[0-9A-Fa-f]{1,2}|0?[0-7]{1,3}|.)")
_PRINTF_CHARS = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def _printf_escape(match: re.Match[str]) -> str:
    """One backslash escape of a ``printf`` template (``\\n``, ``\\t``, ``\\x41``, ``\\101`` …)."""
    body = match.group()[1:]
    if body[0] == "x":
        return chr(int(body[1:], 16))
    if body[0] in "01234567":
        return chr(int(body, 8) & 0xFF)
    return _PRINTF_CHARS.get(body, body)


def expand_all(expander: Expander, words: list[Word]) -> list[Field]:
    """Every field of ``words``, in order."""
    return [field for word in words for field in expander.expand(word)]


__all__ = ["Expander", "Field", "brace_expand", "echo_output", "expand_all"]
