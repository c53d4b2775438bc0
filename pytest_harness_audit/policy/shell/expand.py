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
import re
from typing import Final

from pytest_harness_audit.policy.path_forms import join_path, normal_path
from pytest_harness_audit.policy.shell.arith import arithmetic
from pytest_harness_audit.policy.shell.arrays import unset_element
from pytest_harness_audit.policy.shell.braces import BRACE, MAX_FIELDS, Chars, brace_expand
from pytest_harness_audit.policy.shell.context import HeldReads
from pytest_harness_audit.policy.shell.cut_filters import text_filter
from pytest_harness_audit.policy.shell.declarations import assign, assign_default
from pytest_harness_audit.policy.shell.echo import echo_output, printed_text
from pytest_harness_audit.policy.shell.fieldtext import (
    UNKNOWN,
    Field,
    descriptor_path,
    file_key,
    known_ending,
    needs_work,
    posix_brackets,
    unknown_glob,
)
from pytest_harness_audit.policy.shell.filters import named_files, stdin_filter
from pytest_harness_audit.policy.shell.folder_values import folder_operated, folder_output
from pytest_harness_audit.policy.shell.listings import LISTERS, listing_output
from pytest_harness_audit.policy.shell.nodes import (
    KEY_MARK,
    Command,
    Lit,
    Param,
    Part,
    Redirect,
    Sub,
    Word,
)
from pytest_harness_audit.policy.shell.opaque_output import program_of
from pytest_harness_audit.policy.shell.outside_listings import outside_glob
from pytest_harness_audit.policy.shell.params import referred
from pytest_harness_audit.policy.shell.pipelines import own_pipeline
from pytest_harness_audit.policy.shell.place import Place
from pytest_harness_audit.policy.shell.splitting import IFS, SPLIT, split_fields
from pytest_harness_audit.policy.shell.tildes import home_fields, tilde_word

#: Most paths a glob word adds from a workspace listing.
GLOB_MATCH_LIMIT: Final = 64
#: Most glob words of one command listed against the workspace.
GLOB_LISTING_LIMIT: Final = 16
#: Largest script file of the workspace read when a command runs it.
SCRIPT_FILE_LIMIT: Final = 64 * 1024
_GLOB_MAX_WILD_PARTS: Final = 2
#: Folders :meth:`Expander.workspace_files` does not look in: installed dependencies, builds.
_SKIPPED: Final = frozenset(
    {"node_modules", "venv", "env", "site-packages", "__pycache__", "build", "dist", "target"}
)
_BRACE: Final = BRACE  # brace expansion applies
_GLOB: Final = 4  # pathname expansion applies
_UNQUOTED_LITERAL: Final = _BRACE | _GLOB
_UNQUOTED_VALUE = SPLIT | _GLOB
_GLOB_CHARS: Final = re.compile(r"[*?\[]")
_STDIN: Final = "/dev/fd/0"
_FIXED = {"IFS": IFS, "HOME": "~", "PWD": "."}  # values taken when the script set none
_HERE: Final = (["<<<"], ["<<"], ["<<-"])


class Expander:
    """Expands words with the variables of one script (:attr:`variables`)."""

    def __init__(self, root: str | None = None) -> None:
        self.root = root
        self.variables: dict[str, str] = {}
        self.lists: dict[str, list[str]] = {}  # variables set to lists of words (:mod:`.loops`)
        self.listings = 0
        self.loosened = 0  # substitutions that gave only the names they may print (:mod:`.filters`)
        #: Where the script being read has moved to (``cd``), for globs and relative paths.
        self.place = Place.for_root(root)
        #: Files this command writes with a known text (``echo 'cmd' > s.sh``), by
        #: :meth:`key`; and those it writes with a text that cannot be known.
        self.files: dict[str, str] = {}
        self.unknown_files: set[str] = set()
        #: Of those, the ones that hold names a filter may print (``ls -a | awk … > l``; the
        #: shell's ``/dev/fd/0`` in a script a pipe feeds): those names (:mod:`.name_streams`).
        self.loose_files: dict[str, str] = {}
        #: A command rewrote workspace files with a text not known: all not written since are.
        self.tree_rewritten = False
        self.rewrite_pending = False
        #: What piped searches read, by the command whose output holds it (:mod:`.tree_reads`).
        self.held_reads: dict[int, HeldReads] = {}
        #: The command whose script is being read (``bash -c TEXT | base64``): its output.
        self.carrier: Command | None = None
        #: Whether ``*`` matches dotfiles (``shopt -s dotglob``, ``GLOBIGNORE=…``).
        self.dotglob = False
        #: Workspace files program text loaded (imports), each read once (:mod:`.imports`).
        self.loaded: set[str] = set()
        #: Each loaded module's text and the names of it judged so far (:mod:`.imported`).
        self.judged: dict[str, tuple[str, frozenset[str] | None]] = {}
        self.opaque: list[str] = []  # programs whose output a substitution left unknown
        self.pending_loads: list[str] = []
        self.followed: list[str] = []  # files read through a symlink (file_text), not reported
        #: Aliases the command defines (``alias c='cat .env'``), by name.
        self.aliases: dict[str, str] = {}
        self.too_large: list[str] = []  # workspace files a command runs, too large to read
        #: The file each process substitution ``<(…)`` stands for, by the id of its node.
        self.processes: dict[int, tuple[Sub, str]] = {}
        #: The ``PATH``, ``PYTHONPATH`` and ``NODE_PATH`` the script set (unknown parts as their
        #: ``$NAME`` text): names may then be found in workspace folders (:mod:`.lookups`).
        self.path_lists: dict[str, str] = {}
        #: Folders Python imports were seen to be looked up in (:mod:`.pymodules`).
        self.python_folders: list[str] = []
        #: Variables the script set to a value it built at run time (``D=$(cat f)``).
        self.built: set[str] = set()
        #: Names hashed to a file (``hash -p FILE NAME``): the shell runs FILE for NAME.
        self.hashed: dict[str, str] = {}
        #: Where the script was when it set ``PATH`` (``$PWD/bin`` named that folder's bin).
        self.search_base = ""
        #: Namerefs (``declare -n r=f``): the variable each names (``""``: one not known).
        self.refs: dict[str, str] = {}
        #: The keys of arrays given them (``a=([k]=x)``, ``a[k]=x``): ``${!a[@]}``.
        self.keys: dict[str, list[str]] = {}
        #: Function calls read with their arguments, and the bodies read now (:mod:`.calls`).
        self.calls = 0
        self.calling: set[int] = set()
        #: Values expanded as prompts (``${v@P}``, ``PS4``): whether read (:mod:`.subscript_code`).
        self.prompts: dict[str, bool] = {}
        self.readonly: set[str] = set()  # `readonly x`: its value stays (:mod:`.unsure`)

    def chars_of(self, word: Word, out: Chars) -> bool:
        """Append the characters of ``word`` with their flags; return whether any is dynamic."""
        dynamic = False
        for part in word:
            if isinstance(part, Lit):
                if part is KEY_MARK:
                    break  # an array's keys follow its elements (:mod:`.arrays`)
                flags = 0 if part.quoted else _UNQUOTED_LITERAL
                out.extend((char, flags) for char in part.text)
                continue
            if isinstance(part, Param) and part.alternate is not None:
                if self.variables.get(part.name, "maybe set"):  # set, or not known: the word
                    dynamic |= self.chars_of(part.alternate, out)
                continue
            loosened = self.loosened
            value, known = self._value(part)
            dynamic |= not known
            if isinstance(part, Param) and part.default is not None:
                unset = unset_element(part, value, self.variables, self.lists, self.keys)
                if unset is not False:  # unset (or maybe: the word, then the elements)
                    dynamic |= _default_word(self, part, part.default, out, unset is None)
                    if unset:
                        continue
                    out.append((" ", _UNQUOTED_VALUE))
            element = isinstance(part, Param) and (
                (op := part.op or "")[:1] == "["
                or part.name in ("@", "*")
                or part.name in self.lists
                or op[-3:] in ("[@]", "[*]")  # `${!a[@]}`: the keys
            )
            element = element or self.loosened != loosened  # names a filter may print: `"$(…)"`
            flags = UNKNOWN if not known else 0 if part.quoted and not element else _UNQUOTED_VALUE
            out.extend((char, flags) for char in value)
        return dynamic

    def _value(self, part: Part) -> tuple[str, bool]:
        """The value of an expansion and whether it is known."""
        if isinstance(part, Param):
            if self.refs and part.name in self.refs:  # a nameref: the variable it names
                part = referred(part, self.refs)
            if part.opaque:
                value = folder_operated(part, self)  # (`${PWD%/*}` too)
                if part.op == "@P" and part.name in self.variables:
                    self.prompts.setdefault(self.variables[part.name], False)  # its code runs
                return (value, True) if value is not None else (f"${{{part.name}}}", False)
            if part.name == "*" and part.quoted and {"IFS", "*"} <= self.variables.keys():
                return self.variables["IFS"][:1].join(self.variables["*"].split(" ")), True
            if part.name in self.variables:
                return self.variables[part.name], True
            if fixed := _FIXED.get(part.name) or self.place.variable(part.name, self.root):
                return fixed, True
            if part.default is not None:
                return "", True
            return f"${part.name}", False
        if isinstance(part, Sub):
            if part.process:
                return self.process_file(part), True
            if part.expression is not None:  # `$((i + 1))` of known numbers
                chars: Chars = []
                known = not self.chars_of(part.expression, chars)
                text = "".join(c for c, _ in chars)
                value = arithmetic(text, self.variables) if known else None
                return ("$(…)", False) if value is None else (value, True)
            value = self.substitution_value(part)  # else `$(ls | awk …)`, `$(head -1)`: names
            names = len(part.commands) > 1 or bool(self.loose_files) or _STDIN in self.files
            if value is None and names:
                self.loosened += int((value := self.substitution_value(part, True)) is not None)
            value = folder_output(part, self) if value is None else value  # `$(cd ..; pwd)`
            if value is None:  # `$(realpath .env)`: the credential files its own text names
                self.loosened += int((value := named_files(part, self.variables)) is not None)
            if value is None:
                self.opaque.append(program_of(part))
            return ("$(…)", False) if value is None else (value, True)
        return "", True  # pragma: no cover - Lit is handled by the caller

    def substitution_value(self, sub: Sub, loose: bool = False) -> str | None:
        """The output of ``$(echo …)``/``$(printf '%s' …)``, ``$(cat FILE)``/``$(<FILE)`` of a
        file the reading knows, or of a short pipeline of text filters after one (``$(echo
        LmVudg== | base64 -d)``, :mod:`.filters`; ``loose``: names it may print); else ``None``."""
        commands = own_pipeline(sub)
        if commands is None:
            return None
        text: str | None = None
        exact = False
        for index, command in enumerate(commands):
            if index == 0 and not command.words and len(command.redirects) == 1:
                text = self._redirected_file(command.redirects[0], loose)  # `$(<file)`
                if text is None:
                    return None
                continue
            here = index == 0 and [r.op for r in command.redirects] in _HERE  # `rev <<< vne.`
            if (not here and any(r.fd != "2" for r in command.redirects)) or not command.words:
                return None
            fields = [field for word in command.words for field in self.expand(word)]
            if not fields or any(field.dynamic for field in fields):
                return None  # (no field: `$($IFS)` runs nothing the reading can name)
            argv = [field.text for field in fields]
            exact = here or argv[0] in ("echo", "printf") if index == 0 else exact
            if here and argv == ["cat"]:  # `$(cat <<EOF …)`
                text = self._here(command.redirects[0])
            elif index == 0 and argv[0].rsplit("/", 1)[-1] == "cat":  # `$(cat file)`, `$(cat)`
                paths = [_STDIN if p == "-" else p for p in argv[1:9]] or [_STDIN]
                texts = [self._text(path, loose) for path in paths if path[:1] != "-"]
                known = len(texts) == len(paths) == max(len(argv) - 1, 1)
                known = known and all(t is not None for t in texts)
                text = "".join(t or "" for t in texts) if known else None
            elif (
                index == 0
                and (kept := stdin_filter(argv[0].rsplit("/", 1)[-1], argv[1:])) is not None
            ):
                # `$(head -1)`: the lines of the script's input it may keep
                given = self._here(command.redirects[0]) if here else self._text(_STDIN, loose)
                text = text_filter(argv[0].rsplit("/", 1)[-1], kept, given, loose, here)
            elif index == 0 and argv[0] in (":", "true", "false", "cd", "sleep", "unset"):
                text = ""  # `.e$(:)nv`: prints nothing
            elif index == 0 and argv[0] == "pwd" and len(argv) <= 2:
                text = ".\n"  # where the script is, as `$PWD` is read
            elif index == 0 and argv[0].rsplit("/", 1)[-1] in LISTERS:
                text = listing_output(argv, self)  # `$(ls -a)`: the names it prints
            elif index == 0:
                text = printed_text(argv, lambda: self._text(_STDIN, loose), self.file_text)
            else:  # (`cut -c`, `head -c` of a text known exactly: not a listing's)
                text = text_filter(argv[0].rsplit("/", 1)[-1], argv[1:], text, loose, exact)
            if text is None:
                return None
        return None if text is None else text.rstrip("\n")

    def process_file(self, sub: Sub) -> str:
        """The file a process substitution stands for (``<(cat x.sh)`` → ``/dev/fd/63``, as
        bash names it); what it holds is the output of its commands, when known (a shell or an
        interpreter given that file runs the output), else a text not known."""
        known = self.processes.get(id(sub))
        if known is not None and known[0] is sub:
            return known[1]
        count = len(self.processes)
        path = f"/dev/fd/{63 - count if count < 60 else 64 + count}"
        self.processes[id(sub)] = (sub, path)
        text = self.substitution_value(sub) if sub.process == "<" else None
        if text is None:
            self.files.pop(path, None)
            self.unknown_files.add(path)
        else:
            self.files[path] = text + "\n"
            self.unknown_files.discard(path)
        return path

    def _here(self, redirect: Redirect) -> str | None:
        """The text a here-string gives (``<<< vne.``: ``vne.`` and a newline), or a heredoc's
        body (as written), when known."""
        if redirect.op != "<<<":
            return redirect.body
        fields = self.expand(redirect.target) if redirect.target is not None else []
        known = fields and not any(field.dynamic for field in fields)
        return " ".join(field.text for field in fields) + "\n" if known else None

    def _redirected_file(self, redirect: Redirect, loose: bool) -> str | None:
        if redirect.op != "<" or redirect.target is None:
            return None
        fields = self.expand(redirect.target)
        return self._text(fields[0].text, loose) if len(fields) == 1 else None

    def _text(self, path: str, loose: bool) -> str | None:
        """A file's text (``loose``: else the names it may hold, :attr:`loose_files`)."""
        text = self.file_text(path)
        if text is None and loose and self.loose_files:
            return self.loose_files.get(self.key(descriptor_path(path)))
        return text

    def expand(self, word: Word) -> list[Field]:
        """The fields ``word`` expands to (quote removal, braces, variables, splitting, globs)."""
        if len(word) == 1 and isinstance(word[0], Lit):
            text = word[0].text
            if word[0].quoted or not needs_work(text):
                return [Field(text)]
        word = tilde_word(word, self.variables)  # `~+/x`, `~-/x`: `$PWD/x`, `$OLDPWD/x`
        chars: Chars = []
        loosened = self.loosened
        dynamic = self.chars_of(word, chars) or self.loosened != loosened
        results: list[Field] = []
        ifs = self.variables.get("IFS", IFS)
        for variant in brace_expand(chars):
            for field_chars in split_fields(variant, ifs):
                results.extend(self._glob(field_chars, dynamic))
                if len(results) >= MAX_FIELDS:
                    return results[:MAX_FIELDS]
        results += home_fields(results, self.place, self.root)  # `~-/x` after `cd ~/.local`
        return results

    def _glob(self, chars: Chars, dynamic: bool) -> list[Field]:
        text = "".join(char for char, _ in chars)
        if dynamic and any(flags & UNKNOWN for _, flags in chars):  # `.env$unset`: `.env*`
            pattern = posix_brackets(unknown_glob(chars, _GLOB))
            found = self.place.candidates(pattern, self.dotglob)
        elif not any(flags & _GLOB and char in "*?[" for char, flags in chars):
            return [Field(text, dynamic)]
        else:
            pattern = posix_brackets(unknown_glob(chars, _GLOB))
            candidates = self.place.candidates(pattern, self.dotglob)
            found = self._listing(pattern) + candidates
        seen = {text}
        fields = [Field(text, dynamic)]
        for path in found:
            if path not in seen:
                seen.add(path)
                fields.append(Field(path, dynamic))
        return fields

    def _listing(self, pattern: str) -> list[str]:
        root = self.root
        if self.listings >= GLOB_LISTING_LIMIT or "$" in pattern:
            return []
        if not root or pattern.startswith("~"):
            return outside_glob(pattern)  # `cat ~/.*`: the credential files it matches
        if pattern.startswith("/"):
            prefix = root.rstrip("/") + "/"
            if not pattern.startswith(prefix):
                return outside_glob(pattern)
            pattern = pattern[len(prefix) :]
        elif self.place.outside:
            return []  # `cd .. && rm *`: not the workspace's files (the store guard reads `../*`)
        elif (here := self.place.here) is not None or "/../" in f"/{pattern}":
            # moved inside the workspace (`cd app && cat ../*/*.json`): listed from the root
            pattern = normal_path(join_path(here or ".", pattern))
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
        if not path or "\0" in path or (not self.root and not self.files):
            return None  # (no workspace and nothing written: no text can be known)
        if path.startswith(("/dev/", "/proc/")):
            path = descriptor_path(path)
        key = self.key(path)
        if key in self.files:
            return self.files[key]
        if self.is_unknown(key):
            return None
        root = self.root
        if not root:
            return None
        if "$" in path:
            path = known_ending(path)
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

    def is_unknown(self, key: str) -> bool:
        """Whether the file of ``key`` was written in this command with a text not known."""
        if key in self.unknown_files:
            return True
        # a rewrite of the work tree leaves git's own files (`.git/config`, hooks) as they were
        return self.tree_rewritten and key not in self.files and ".git/" not in f"/{key}"

    def key(self, path: str) -> str:
        """How a file written or run in this command is known: its path from where the script
        is (``cd app; … > s.sh`` and ``sh app/s.sh`` from the start are one file)."""
        here = self.place.here
        return file_key(join_path(here, path) if here and path[:1] != "/" else path)

    def real_path(self, path: str) -> str | None:
        """The real path of ``path`` from where the script is (``None``: no workspace)."""
        root = self.root
        if not root:
            return None
        place = self.place
        cwd = "." if place.unknown else place.cwd  # `cd ..` too: a folder above it holds it
        return os.path.realpath(os.path.join(root, cwd, os.path.expanduser(path)))

    def workspace_folder(self, folder: str) -> str | None:
        """The real path of ``folder`` (from where the script is) in the workspace, or ``None``."""
        root = self.root
        top = self.real_path(folder)
        if not root or top is None:
            return None
        real_root = os.path.realpath(root)
        if top != real_root and not top.startswith(real_root.rstrip("/") + "/"):
            return None
        return top

    def workspace_files(self, folder: str, limit: int = 4096) -> list[str] | None:
        """The files under the workspace folder ``folder`` (paths from where the script is,
        sorted; hidden, dependency and build folders skipped): none without a workspace;
        ``None`` when there are more than ``limit`` entries to look at."""
        top = self.workspace_folder(folder)
        if top is None:
            return []
        real_root = os.path.realpath(self.root or "")
        here = self.place.here or ""
        found: list[str] = []
        seen = 0
        for current, folders, files in os.walk(top):
            folders[:] = sorted(f for f in folders if f not in _SKIPPED and f[:1] != ".")
            seen += len(folders) + len(files)
            if seen > limit:
                return None
            prefix = os.path.relpath(current, os.path.join(real_root, here))
            found.extend(normal_path(join_path(prefix, name)) for name in files)
        return sorted(found)

    def assign(self, name: str, word: Word) -> None:
        """Record ``NAME=word`` (its value as one field, as an assignment is not split)."""
        assign(self, name, word)


def _default_word(expander: Expander, part: Param, word: Word, out: Chars, maybe: bool) -> bool:
    """Append the characters of ``${NAME-word}``'s ``word``; whether any is dynamic. ``maybe``:
    not known whether the element was unset (``${NAME=word}`` then leaves ``NAME`` unknown)."""
    given: Chars = []
    unknown = expander.chars_of(word, given)
    out.extend(given)
    if part.assigns:  # `${x:=.env}`: `x` is set to it
        assign_default(expander, part.name, given, unknown or maybe)
    return unknown


__all__ = ["Expander", "Field", "brace_expand", "descriptor_path", "echo_output", "file_key"]
__all__ += ["needs_work"]
