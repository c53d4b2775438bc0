"""The built-in rule no policy can override: no call may touch the audit store.

The evidence must stay out of the audited agent's reach. Every target of a call (file paths,
the paths a shell command reads, writes or deletes, symlinks resolved) is checked against the
session's storage directory before anything runs: a call that reads, writes or deletes inside
it, that deletes or overwrites a directory holding it, or that copies or packs such a directory
whole (a copy put back later would roll the evidence back), is refused with the alert
``tamper_attempt``, whatever the policy says (also in dry-run), and the verdict is FAIL.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pytest_harness_audit.gate.auditor_runs import runs_auditor
from pytest_harness_audit.gate.store_git import (
    CallCommands,
    command_moves_ignored_files,
    worktree_top,
)
from pytest_harness_audit.gate.store_lists import CHANGERS, NAMERS, input_file, listed_paths
from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.shell.place import Place
from pytest_harness_audit.policy.shell.rewrites import REWRITERS, extraction_folder
from pytest_harness_audit.policy.shell.tree_reads import TREE_READERS, recursive_folders
from pytest_harness_audit.policy.shell.xargs import UNKNOWN_NAME

#: Commands that copy, pack or extract whole folders (the cheap test before reading a command).
_ARCHIVERS = TREE_READERS | REWRITERS
#: Commands that change the modes or owners of what they name, and the options whose value is
#: the next word (``chmod --reference=F``, ``setfacl -m ACL``).
_MODE_CHANGERS = {
    "chmod": frozenset(),
    "chown": frozenset(),
    "chgrp": frozenset(),
    "chattr": frozenset({"-v", "-p"}),
    "setfacl": frozenset({"-m", "-M", "-x", "-X", "--modify", "--remove", "--set", "--set-file"}),
}
#: The rule id of refused calls.
STORE_RULE_ID = "protect-audit-store"
#: The alert every refused call carries.
TAMPER_ALERT = "tamper_attempt"
#: Effect kinds (``<kind>:<path>`` targets) that change what they name.
_CHANGING = frozenset({"destroy", "delete", "write"})
_SKIPPED = frozenset({"note", "unreadable"})
_MAX_PATH = 4096
_MAX_SCANNED = 64 << 20
_MAX_ITEMS = 1 << 20
_MAX_PATH_VALUES = 1 << 14
#: A parameter value that can be a path with a directory part: no white space or NUL.
_PATH_LIKE = re.compile(r"[^\s\x00]{0,4095}/[^\s\x00]{0,4095}|\.\.")
_WILD = re.compile(r"[*?\[]")
#: What separates a command's words for the cheap tests, quotes and operators included
#: (``cd .. && sh -c 'chmod -R 000 .'`` holds the word ``chmod``).
_WORDS = re.compile(r"[\s'\"`;&|()<>{}$]+")
#: What the reading leaves of a value only the run knows: ``$(…)``, ``$name``, backticks.
_UNKNOWN = re.compile(r"[$`\u2026]")


class StoreGuard:
    """Tells whether a call's targets or parameters touch ``store`` (the storage directory)."""

    def __init__(self, store: str | os.PathLike[str], root: str | None) -> None:
        self.root = root
        absolute = os.path.abspath(os.fspath(store))
        self.store = os.path.realpath(absolute)
        #: Spellings of the store an agent could write: absolute, resolved, workspace-relative.
        self._spellings = {absolute.rstrip("/"), self.store.rstrip("/")}
        #: The store's path relative to the workspace, when it lies inside it.
        self.in_workspace: str | None = None
        if root is not None:
            real_root = os.path.realpath(root)
            if inside(self.store, real_root) and self.store != real_root:
                self.in_workspace = os.path.relpath(self.store, real_root)
                self._spellings.add(self.in_workspace)
        #: The work tree holding both the store and the workspace, where git's bulk handling
        #: of ignored files (``stash --all``, ``add --force .``) carries the store away.
        self._shared_repo: str | None = None
        if root is not None:
            top = worktree_top(os.path.dirname(self.store))
            if top is not None and top == worktree_top(os.path.realpath(root)):
                self._shared_repo = top

    def offending(self, targets: Iterable[str], params: Mapping[str, Any]) -> str | None:
        """The first target (or parameter text) that touches the store, else ``None``."""
        checked: set[str] = set()
        commands = CallCommands(params)  # the commands read so far, with word boundaries
        for target in targets:
            kind, path = split_target(target)
            if kind in _SKIPPED or not path or len(path) > _MAX_PATH or "\0" in path:
                continue
            checked.add(path)
            resolved = self._resolve(path)
            if inside(resolved, self.store):
                return target
            if kind in _CHANGING and inside(self.store, resolved):
                return target  # deleting or overwriting a directory that holds the store
            if (
                kind in _CHANGING or (not kind and path in _file_tool_paths(params))
            ) and self._second_name(resolved):
                return target  # a hard link the agent made to a file of the store
            if _WILD.search(path) and self._glob_reaches(path, kind in _CHANGING):
                return target  # a glob the reading could not list (`../a*/audit/*.jsonl`)
            if UNKNOWN_NAME in path and self._glob_reaches(_any_name(path), kind in _CHANGING):
                return target  # `ls .. | xargs -I{} rm -rf ../{}`: a name not known, any
            if _UNKNOWN.search(path) and self._unknown_reaches(path):
                return target  # a run-time prefix, a known tail (`$(dirname $PWD)/audit/…`)
            if not kind and (
                self._moves_store(path, commands)
                or runs_auditor(path)
                or self._copies_store(path, commands)
                or self._changes_modes(path, commands)
                or self._lists_store(path, commands)
            ):
                return target
            if "$" in path and self._through_environment(kind, path):
                return target  # `$HARNESS_AUDIT_DIR/audit/…`: a variable the agent's shell has
        paths = _MAX_PATH_VALUES
        try:
            for text in _strings(params):
                if any(spelling in text for spelling in self._spellings if len(spelling) > 1):
                    return _shorten(text)
                if text not in checked and _PATH_LIKE.fullmatch(text):
                    # a value under a name the policy does not read as a target (`dest`,
                    # `filename`, an upstream tool's own argument) is still a path to somewhere
                    paths -= 1
                    if paths < 0:
                        return f"parameters naming more than {_MAX_PATH_VALUES} paths"
                    if inside(self._resolve(text), self.store):
                        return _shorten(text)
        except _TooLarge as exc:
            return str(exc)  # fail closed: what cannot be checked is not let through
        return None

    def _unknown_reaches(self, path: str) -> bool:
        """Whether a path whose start only the run knows (``$(…)/audit/x.jsonl``, ``$d/…``)
        ends in a path of the store: its known tail, after the last unknown part, spells the
        store's last directories and then something that exists in it (or nothing)."""
        if any(character.isspace() for character in path):
            return False  # a command's text, not one path
        parts = [part for part in path.split("/") if part not in ("", ".")]
        unknown = [index for index, part in enumerate(parts) if _UNKNOWN.search(part)]
        tail = parts[unknown[-1] + 1 :] if unknown else []
        if not tail or ".." in tail:
            return False
        for store in {self.store, *(s for s in self._spellings if os.path.isabs(s))}:
            store_parts = [part for part in store.split("/") if part]
            for start in range(len(store_parts)):
                trailing = store_parts[start:]
                if (
                    len(tail) >= len(trailing)
                    and all(
                        _part_matches(name, pattern)
                        for name, pattern in zip(trailing, tail, strict=False)
                    )
                    and _exists_below(store, tail[len(trailing) :])
                ):
                    return True
        return False

    def _through_environment(self, kind: str, path: str) -> bool:
        """Whether ``path`` (or, for a command's text, one of its words) reaches the store once
        the variables this process also has are put in: the hook door runs in the agent's own
        environment, where ``$HARNESS_AUDIT_DIR`` names the store."""
        words = [path] if not any(c.isspace() for c in path) else path.split()
        for word in words:
            filled = _ENV_REFERENCE.sub(_env_value, word.strip("\"'"))
            if filled == word.strip("\"'") or "$" in filled:
                continue
            resolved = self._resolve(filled)
            if inside(resolved, self.store):
                return True
            if kind in _CHANGING and inside(self.store, resolved):
                return True
        return False

    def _moves_store(self, text: str, commands: CallCommands) -> bool:
        """Whether a command (or a simple command as the reading lists it) makes git carry the
        store away."""
        if self._shared_repo is None or "git" not in text:
            return False
        return command_moves_ignored_files(text, self.root, self._holds_store, commands)

    def _copies_store(self, text: str, commands: CallCommands) -> bool:
        """Whether a command reads whole a folder that holds the store (``cp -a ~/.local/state
        backup``, ``tar czf s.tgz ~``): a copy of the evidence to put back later rolls the
        chain and its witness back together."""
        if not any(word.rsplit("/", 1)[-1] in _ARCHIVERS for word in _WORDS.split(text)):
            return False
        if commands.judged(text):
            return False
        for argv, folders in self._placed(text, commands):
            for here in folders:
                for folder in recursive_folders(argv):
                    if self._holds_store(os.path.join(here, os.path.expanduser(folder))):
                        return True
                into = extraction_folder(argv)  # `tar -C ~ -xf backup`: a restore over it
                if into is not None and self._holds_store(
                    os.path.join(here, os.path.expanduser(into))
                ):
                    return True
        return False

    def _placed(self, text: str, commands: CallCommands) -> Iterator[tuple[list[str], list[str]]]:
        """Each command of ``text`` with the folders it may run in, as the shell reading's
        :class:`Place` follows ``cd``, ``pushd``, ``popd`` and ``cd -`` (``cd ~/.local``: the
        workspace's and the user's ``~``; after a ``cd`` not known, every folder above)."""
        root = self.root or os.getcwd()
        place = Place.for_root(root)
        stack_set = "DIRSTACK" in text
        ran = len(commands.ran)
        for argv in commands.read(text, self.root):
            if place.unknown:
                folders = [os.path.normpath(os.path.join(root, "../" * up)) for up in range(9)]
            else:
                folders = [os.path.normpath(os.path.join(root, place.cwd))]
                if place.home:
                    folders.append(os.path.expanduser(place.home))
            yield argv, folders
            if stack_set:  # `DIRSTACK[1]=..; popd` (an assignment is no command of the list)
                place.forget_stack()
            place.change(argv, [False] * len(argv))
            if argv and argv[0] in ("source", "."):  # `source <(echo cd ..)`: its moves too
                for moved in commands.ran[ran:]:
                    place.change(moved, [False] * len(moved))
                ran = len(commands.ran)

    def _changes_modes(self, text: str, commands: CallCommands) -> bool:
        """Whether a command changes the modes or owners of a folder that holds the store
        (``chmod -R a-w ..``, ``chown -R nobody ..``): the harness could no longer write the
        chain, or the agent could write it (a change inside the store is a read of it, refused
        already)."""
        if not any(word.rsplit("/", 1)[-1] in _MODE_CHANGERS for word in _WORDS.split(text)):
            return False
        if commands.judged(text):
            return False
        previous: list[str] = []
        for argv, folders in self._placed(text, commands):
            name = argv[0].rsplit("/", 1)[-1] if argv else ""
            # `ls | xargs chmod 000`: names from standard input, any of the folder's
            fed = previous[:1] == ["xargs"] and previous[-len(argv) :] == argv
            previous = argv
            if name not in _MODE_CHANGERS:
                continue
            if name == "chattr":  # its attributes may start with `-` (`chattr -i ..`)
                args = [word for word in argv[1:] if not _ATTRIBUTES_WORD.fullmatch(word)]
                operands = _operands(args, _MODE_CHANGERS[name])
            else:
                operands = _operands(argv[1:], _MODE_CHANGERS[name])
            if name in ("chmod", "chown", "chgrp") and not any(
                word.startswith("--reference") for word in argv[1:]
            ):
                operands = operands[1:]  # the mode or owner (setfacl's: options)
            for operand in [*operands, "*"] if fed else operands:
                operand = _any_name(operand)  # (`xargs -I{} chmod 000 ../{}`: any name there)
                for here in folders:
                    path = os.path.join(here, os.path.expanduser(operand))
                    if self._holds_store(path) or (
                        _WILD.search(operand) is not None and self._glob_reaches(path, True)
                    ):
                        return True
        return False

    def _lists_store(self, text: str, commands: CallCommands) -> bool:
        """Whether ``xargs`` gives its command a path of the store (or, to a command that
        changes what it names, a folder holding it) from a names file the shell reading does
        not read (``xargs -a /tmp/list chmod -R 000``, :mod:`.store_lists`)."""
        if "xargs" not in text or commands.judged(text):
            return False
        before: list[str] = []
        given = input_file(text)
        for argv, folders in self._placed(text, commands):
            if argv and os.path.basename(argv[0]) == "xargs":
                for here in folders:
                    for program, path in listed_paths(argv, before, here, given):
                        resolved = self._resolve(path)
                        if program in CHANGERS and inside(self.store, resolved):
                            return True  # a folder holding the store, changed
                        if program not in NAMERS and inside(resolved, self.store):
                            return True  # a path of the store, read or changed
            before = argv
        return False

    def _second_name(self, resolved: str) -> bool:
        """Whether ``resolved`` is a regular file with more than one name, one of them in the
        store (a hard link made by a run-time path no call's text showed)."""
        try:
            info = os.stat(resolved)
        except (OSError, ValueError):
            return False
        if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
            return False
        wanted = (info.st_dev, info.st_ino)
        if os.path.isfile(self.store):
            return _identity(self.store) == wanted
        store = _identity(self.store)
        if store is None or store[0] != info.st_dev:
            return False  # a link never crosses file systems
        # the first files of the store only: a folder of witnesses kept for every session grows
        # without end, and a refusal of every write to a hard-linked file (pnpm's packages)
        # would follow; this session's chain and policy given a second name are also noted by
        # the session policy watch (:mod:`.session_policy`), however large the store
        seen = 0
        for folder, folders, files in os.walk(self.store):
            folders[:] = [name for name in folders if name != "objects"]  # git's (read-only)
            for name in files:
                seen += 1
                if seen > _MAX_STORE_FILES:
                    return False
                if _identity(os.path.join(folder, name)) == wanted:
                    return True
        return False

    def _holds_store(self, path: str) -> bool:
        resolved = self._resolve(path)
        return inside(resolved, self.store) or inside(self.store, resolved)

    def _glob_reaches(self, pattern: str, changing: bool) -> bool:
        """Whether a glob could name a path inside the store (or, for a change, a directory
        holding it): matched part by part against the store's own path, nothing listed."""
        expanded = os.path.expanduser(pattern)
        if not os.path.isabs(expanded):
            expanded = os.path.join(self.root or os.getcwd(), expanded)
        parts = [p for p in os.path.normpath(expanded).split("/") if p]
        for store in {self.store, *(s for s in self._spellings if os.path.isabs(s))}:
            store_parts = [p for p in store.split("/") if p]
            common = min(len(parts), len(store_parts))
            if len(parts) < len(store_parts) and not changing:
                continue
            if all(
                _part_matches(store_parts[i], parts[i]) for i in range(common)
            ) and _exists_below(store, parts[len(store_parts) :]):
                return True
        return False

    def _resolve(self, path: str) -> str:
        expanded = os.path.expanduser(path)
        if not os.path.isabs(expanded):
            expanded = os.path.join(self.root or os.getcwd(), expanded)
        try:
            return os.path.realpath(expanded)
        except (OSError, ValueError):
            return os.path.abspath(expanded)


_ENV_REFERENCE = re.compile(
    r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[:]?[-=?+][^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)"
)
#: Variables whose value here says nothing of the agent's shell.
_LOCAL_VARIABLES = frozenset({"PWD", "OLDPWD", "_"})


def _any_name(path: str) -> str:
    """``path`` with each name the reading could not know (:data:`UNKNOWN_NAME`, what
    ``xargs -I{}`` gets from an input not known) as ``*``: any name of its folder."""
    return path.replace(UNKNOWN_NAME, "*") if UNKNOWN_NAME in path else path


def _env_value(match: re.Match[str]) -> str:
    name = match.group(1) or match.group(2)
    value = os.environ.get(name) if name not in _LOCAL_VARIABLES else None
    return value if value else match.group(0)


def _operands(args: list[str], valued: frozenset[str]) -> list[str]:
    """The operands of a command's words (options and their values left out; after ``--``,
    every word; ``chmod -w x`` reads ``-w`` as a mode, kept as an operand)."""
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            return operands + args[index + 1 :]
        if word in valued:
            index += 2
            continue
        if word.startswith("-") and len(word) > 1 and not _MODE_WORD.fullmatch(word):
            index += 1
            continue
        operands.append(word)
        index += 1
    return operands


#: A ``chmod`` mode that starts with ``-`` (``-w``, ``-x,o-r``), not an option.
_MODE_WORD = re.compile(r"-[rwxXst]+(?:,[ugoa]*[-+=][rwxXst]*)*")
#: A ``chattr`` attribute change (``+i``, ``-i``, ``=ai``): its options (``-R``, ``-V``, ``-f``,
#: ``-v``, ``-p``) use no letter of an attribute.
_ATTRIBUTES_WORD = re.compile(r"[-+=][aAcCdDeFijmPsStTux]+")


def split_target(target: str) -> tuple[str, str]:
    """``(kind, path)`` of an effect target (``write:a.txt``); ``("", target)`` for others."""
    head, sep, rest = target.partition(":")
    if sep and head.isalpha() and head.islower() and len(head) <= 12:
        return head, rest
    return "", target


def _exists_below(directory: str, parts: list[str], budget: int = 4096) -> bool:
    """Whether the glob ``parts`` names something that exists below ``directory`` (the shell
    leaves a glob that matches nothing as it is, which opens no file of the store)."""
    frontier = [directory]
    for part in parts:
        following: list[str] = []
        for current in frontier:
            if not _WILD.search(part):
                candidate = os.path.join(current, part)
                if os.path.lexists(candidate):
                    following.append(candidate)
                continue
            try:
                with os.scandir(current) as entries:
                    for entry in entries:
                        budget -= 1
                        if budget < 0:
                            return True  # too many to look through: judged as reaching it
                        if _part_matches(entry.name, part):
                            following.append(entry.path)
            except OSError:
                continue
        if not following:
            return False
        frontier = following
    return True


def _part_matches(name: str, pattern: str) -> bool:
    """Whether a glob part matches a name as the shell does (a dotfile only by a leading dot;
    a bracket's ``^`` negating, its POSIX classes read)."""
    if name.startswith(".") and not pattern.startswith("."):
        return False
    return wildcards.fnmatchcase(name, pattern)


#: The parameters naming the file a file tool (``Write``, ``Edit``, ``NotebookEdit``) works on.
_FILE_TOOL_KEYS = ("file_path", "notebook_path")


def _file_tool_paths(params: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(v for k in _FILE_TOOL_KEYS if isinstance(v := params.get(k), str))


#: Files of the store compared with a hard-linked target at most.
_MAX_STORE_FILES = 4096


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def inside(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or lies below it (both absolute and normal)."""
    return path == directory or path.startswith(directory.rstrip("/") + "/")


class _TooLarge(Exception):
    """Parameters too large to check whole."""


def _strings(value: Any) -> Iterable[str]:
    """Every string inside ``value``, keys included, without recursion. Every one is checked
    (a large value must not hide a short path behind it); over the bounds, which no door's
    payload reaches, :class:`_TooLarge` is raised."""
    characters, items = _MAX_SCANNED, _MAX_ITEMS
    stack = [value]
    while stack:
        item = stack.pop()
        items -= 1
        if items < 0:
            raise _TooLarge(f"parameters of more than {_MAX_ITEMS} values")
        if isinstance(item, str):
            characters -= len(item)
            if characters < 0:
                raise _TooLarge(f"parameters of more than {_MAX_SCANNED} characters")
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.values())
            stack.extend(key for key in item if isinstance(key, str))
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _shorten(text: str) -> str:
    return text if len(text) <= 80 else text[:79] + "…"
