"""Where a command runs: ``cd``, ``pushd`` and ``-C DIR`` options move relative paths.

The shell resolves a relative path against its working directory, which a script changes as it
goes (``cd .. && echo x >> audit/s.jsonl`` writes ``../audit/s.jsonl``). The reading keeps the
directory a script has moved to (:class:`Place`, relative to where the command starts, or
absolute) and adds, beside each relative path as written, the path it names from there.

A directory that cannot be known (``cd "$(dirname "$PWD")"``) may lie anywhere; each relative
path is then also read from every directory above the start, up to the file-system root
(``../p``, ``../../p`` …), so a path that reaches out of the workspace upwards is still seen. A
directory below the start stays unknown: a path read from there keeps only its written form.
A bare ``*`` is moved like any other path: ``cd .. && rm -rf *`` names everything beside the
workspace (``../*``), the audit store kept there included.

``cd ~`` goes to the workspace for the harness's commands (their ``HOME``), but to the user's
home for a host's (the hook door): a path read from there also gets its ``~/`` form, which the
built-in rules read from the real home (``cd ~ && rm -rf .local`` is ``~/.local``).

The union is deliberate: ``( cd .. ); cat x`` and ``bash -c 'cd ..'`` do not move the outer
shell, yet the reading moves — a path gets one form too many, never one too few.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol

from pytest_harness_audit.policy.path_forms import join_path, normal_path
from pytest_harness_audit.policy.sensitive import glob_candidates
from pytest_harness_audit.policy.shell.dirstack import UNKNOWN_SPOT, Spot, stack_move
from pytest_harness_audit.policy.shell.outside_listings import outside_glob
from pytest_harness_audit.policy.shell.physical import physical_setting, physical_spot
from pytest_harness_audit.policy.shell.tar_words import TARS, tar_words

#: Path lists of a reading whose entries are moved.
PATH_LISTS: Final = ("reads", "writes", "deletes", "destroys")
#: Most directories above the start a path is read from when the directory is unknown.
MAX_ANCESTORS: Final = 8
#: Most paths of one reading given their unknown-directory forms.
MAX_PLACED: Final = 256
_CHANGE_DIR: Final = frozenset({"cd", "pushd", "popd", "chdir", "dirs"})
#: Words before a builtin that run it as itself (``builtin cd ..``, ``command -p cd ..``).
_BUILTIN_RUNNERS: Final = frozenset({"builtin", "command"})
#: Commands whose ``-C DIR`` (or ``--directory``/``--chdir``) runs them elsewhere.
_DIR_OPTION_COMMANDS: Final = frozenset({"git", "tar", "bsdtar", "gtar", "make", "gmake", "env"})
_DIR_OPTIONS: Final = ("--directory", "--chdir", "--cwd")


def _dir_option(option: str) -> bool:
    """Whether ``option`` is ``--directory``, ``--chdir``, ``--cwd`` or an abbreviation of
    the first two, as ``getopt_long`` takes them (``--dir``, ``--ch``)."""
    if option in _DIR_OPTIONS:
        return True
    return len(option) >= 4 and any(full.startswith(option) for full in _DIR_OPTIONS[:2])


class Paths(Protocol):
    """The path lists of a reading, and how far each has been placed."""

    reads: list[str]
    writes: list[str]
    deletes: list[str]
    destroys: list[str]
    marks: dict[str, int]


@dataclass(slots=True)
class Place:
    """The working directory of a script being read.

    ``cwd``: where the script is, relative to where it started (``.``) or absolute;
    ``unknown``: it moved somewhere the reading cannot know. ``stack``: ``pushd``'s directories
    (:mod:`.dirstack`). ``previous``: where the last move left (``$OLDPWD``), ``""`` before
    any, ``previous_unknown`` whether that was not known, ``previous_home`` its ``home``.
    ``home``: the same directory as a path from the user's home (``~/x``, ``~/..``), when the
    script went there by ``~`` (module doc), else ``""``.
    """

    depth: int = MAX_ANCESTORS
    cwd: str = "."
    unknown: bool = False
    previous: str = ""
    stack: list[Spot] = field(default_factory=list)
    placed: int = 0
    previous_unknown: bool = False
    home: str = ""
    previous_home: str = ""
    root: str = ""
    physical: bool = False

    # (an own __init__: the compiled build compiles it, not the one dataclass would generate)
    def __init__(
        self,
        depth: int = MAX_ANCESTORS,
        cwd: str = ".",
        unknown: bool = False,
        previous: str = "",
        stack: list[Spot] | None = None,
        placed: int = 0,
        previous_unknown: bool = False,
        home: str = "",
        previous_home: str = "",
        root: str = "",
    ) -> None:
        self.depth = depth
        self.cwd = cwd
        self.unknown = unknown
        self.previous = previous
        self.stack = [] if stack is None else stack
        self.placed = placed
        self.previous_unknown = previous_unknown
        self.home = home
        self.previous_home = previous_home
        self.root = root  # (for `cd -P`: :mod:`.physical`)
        self.physical = False  # `set -P`

    @classmethod
    def for_root(cls, root: str | None) -> Place:
        """A place starting in ``root`` (its depth bounds the unknown-directory forms)."""
        if not root or not root.startswith("/"):
            return cls()
        parts = [p for p in root.split("/") if p]
        return cls(depth=min(len(parts), MAX_ANCESTORS), root=root)

    # -- moving --------------------------------------------------------------------------------
    def change(
        self,
        argv: list[str],
        dynamic: list[bool],
        variables: Mapping[str, str] | None = None,
        environ: Mapping[str, str | None] | None = None,
    ) -> None:
        """Follow ``cd``/``pushd``/``popd``/``dirs`` (any other argv leaves the place as it is;
        ``builtin cd``, ``command cd`` are ``cd``); ``variables``, ``environ``: the script's and
        the command's own, for the ``HOME``, ``OLDPWD`` and ``CDPATH`` that ``cd``, ``cd -``
        and ``cd NAME`` follow. Every move sets ``$OLDPWD`` (``popd`` and ``pushd +N`` too)."""
        # every name of _CHANGE_DIR (and `builtin`, `command`) ends in `d`, `r`, `s` or `n`, and
        # only those letters lower-case to such an ending: any other cannot name one
        if not argv or argv[0][-1:] not in "dDrRsSnNtT":
            return
        argv, dynamic = _unwrapped(argv, dynamic)
        name = command_name(argv[0]) if argv else ""
        if name == "set":  # `set -P`: every later `cd` follows links (:mod:`.physical`)
            self.physical = physical_setting(argv, self.physical)
            return
        if name not in _CHANGE_DIR:
            return
        here: Spot = (self.cwd, self.unknown, self.home)
        given = _Given(variables, environ)
        if name == "cd" or name == "chdir":
            operands = [
                (word, dyn)
                for word, dyn in zip(argv[1:], dynamic[1:], strict=False)
                if not (word.startswith("-") and word != "-")
            ]
            physical = self.physical
            for word in argv[1 : len(argv) - len(operands)]:
                if word[:1] == "-" and word[1:2] not in ("-", "") and word.strip("-LPe@"):
                    break  # (an operand that starts with `-`, not an option)
                for flag in word[1:] if word[:1] == "-" and word != "--" else "":
                    physical = True if flag == "P" else False if flag == "L" else physical
            go: Spot | None = self._target(*operands[0], given) if operands else self._home(given)
            if physical and go is not None and operands and operands[0][0] != "-":
                word = operands[0][0]
                go = physical_spot(self.root, join_path(self.cwd, word), go)
        else:
            move = stack_move(name, argv[1:], dynamic[1:], here, self.stack)
            self.stack = move.stack
            go = move.go
            if move.operand is not None:
                go = self._target(move.operand, move.dynamic, given)
                if self.physical:  # `set -P; pushd link/..`
                    go = physical_spot(self.root, join_path(self.cwd, move.operand), go)
                if move.save_only:  # `pushd -n DIR`: saved, not gone to
                    self.stack.append(go)
                    go = None
        if go is None:
            return
        self.previous, self.previous_unknown, self.previous_home = here
        self._go(go[0], go[1])
        home = go[2]
        self.home = home if not go[1] and (home == "~" or home.startswith("~/")) else ""

    def _home(self, given: _Given) -> Spot:
        """Where ``cd`` alone goes: ``$HOME`` (``~``: the workspace root, or the user's home
        for a host's command)."""
        home_value = given.get("HOME")
        if home_value is not None:  # `HOME=..; cd`
            return (*self._resolved(home_value), "")
        return (".", False, "~")

    def _target(self, word: str, dyn: bool, given: _Given) -> Spot:
        """Where ``cd WORD`` (``pushd WORD``) goes from here."""
        if dyn or "$" in word:
            return (word, True, "")
        if word == "-":  # `$OLDPWD`: with no `cd` before, where the shell came from
            oldpwd = given.get("OLDPWD")
            if oldpwd is not None:
                return (*self._resolved(oldpwd), "")
            unknown = self.previous_unknown or not self.previous
            return (self.previous, unknown, self.previous_home)
        if word == "~" or word.startswith("~/"):  # HOME is the workspace root
            home_value = given.get("HOME")
            if home_value is not None:
                return (*self._resolved(join_path(home_value, word[2:])), "")
            return (normal_path("." + word[1:]), False, home_path(word))
        if word.startswith("~"):  # `cd ~user`: another user's home, not known
            return (word, True, "")
        if given.get("CDPATH") and not word.startswith(("/", "./", "../")) and word != "..":
            return (word, True, "")  # `CDPATH=.. cd audit`: a folder of the path
        absolute = word.startswith("/")
        target = normal_path(word if absolute else join_path(self.cwd, word))
        # `cd ~; cd .config`, `cd ~/..`: the folder from the user's home too
        home = home_path(join_path(self.home, word)) if self.home and not absolute else ""
        return (target, self.unknown and not absolute, home)

    def variable(self, name: str, root: str | None) -> str | None:
        """The value the place gives a variable the script did not set: ``$OLDPWD`` after a
        ``cd`` of the script, as an absolute path (from the workspace ``root``, so it is not
        moved again); ``None`` for another name, before any ``cd``, without a root, or when
        it is not known."""
        previous = self.previous
        if name != "OLDPWD" or not previous or self.previous_unknown:
            return None
        if previous.startswith("/"):
            return previous
        if not root or not root.startswith("/"):
            return None
        return normal_path(join_path(root, previous))

    def entry(self, index: int, root: str | None) -> str | None:
        """Entry ``index`` of the directory stack as ``dirs`` lists it (``0``: where the script
        is; negative: from the right), as an absolute path from the workspace ``root``
        (``None``: beyond the stack, not known, or no root)."""
        full = [(self.cwd, self.unknown), *((cwd, unknown) for cwd, unknown, _ in self.stack[::-1])]
        if not -len(full) <= index < len(full) or full[index][1]:
            return None
        cwd = full[index][0]
        if cwd.startswith("/"):
            return cwd
        return normal_path(join_path(root, cwd)) if root and root.startswith("/") else None

    def forget_stack(self) -> None:
        """The saved directories after the script set ``DIRSTACK`` (``DIRSTACK[1]=..``, which
        bash lets change them): none is known."""
        self.stack = [UNKNOWN_SPOT for _ in self.stack]

    def home_forms(self, texts: list[str], root: str | None) -> list[str]:
        """The forms from the user's home of ``texts`` that start at ``$OLDPWD`` when the
        script went there by ``~`` (``cd ~/.local; cd /srv; rm -rf ~-/state`` is also
        ``~/.local/state``, the user's home for a host's command; module doc)."""
        oldpwd = self.variable("OLDPWD", root) if self.previous_home else None
        if oldpwd is None:
            return []
        forms = []
        for text in texts:
            if text == oldpwd or text.startswith(oldpwd.rstrip("/") + "/"):
                forms.append(home_path(self.previous_home + text[len(oldpwd) :]))
        return forms

    def _resolved(self, folder: str) -> tuple[str, bool]:
        """Where ``cd FOLDER`` goes (a value with an unknown part: somewhere not known)."""
        if "$" in folder or not folder:
            return folder, True
        if folder.startswith("/"):
            return normal_path(folder), False
        return normal_path(join_path(self.cwd, folder)), self.unknown

    @property
    def here(self) -> str | None:
        """The known directory inside the start the script is in (``None``: the start itself,
        a directory outside it, or one not known)."""
        cwd = self.cwd
        if self.unknown or cwd == "." or cwd.startswith(("/", "..")):
            return None
        return cwd

    @property
    def outside(self) -> bool:
        """Whether the script is in a known directory outside the start (``cd ..``, ``cd /tmp``),
        where the start's listing names nothing."""
        return not self.unknown and self.cwd.startswith(("/", ".."))

    def candidates(self, pattern: str, dotglob: bool = False) -> list[str]:
        """The sensitive paths a glob could expand to where the script is: ``cd ~/.ssh && cat *``
        reads the keys of ``.ssh``, ``cd /root/.ssh && cat *`` those of that folder
        (``dotglob``: a wildcard matches a leading dot)."""
        if self.unknown or self.cwd == "." or pattern.startswith(("/", "~")):
            return glob_candidates(pattern, dotglob)
        moved = normal_path(join_path(self.cwd, pattern))
        found = glob_candidates(moved, dotglob)
        return found + outside_glob(moved) if moved.startswith("/") else found

    def _go(self, cwd: str, unknown: bool) -> None:
        self.cwd, self.unknown = (cwd, unknown) if not unknown else (".", True)

    # -- placing paths -------------------------------------------------------------------------
    def place(self, reading: Paths, argv: list[str] | None = None) -> None:
        """Add the moved forms of the paths ``reading`` gained since the last call."""
        extra = _dir_options(argv) if argv else []
        if self.cwd == "." and not self.unknown and not extra and not self.home:
            _advance(reading)  # nothing moves: no path gains a form, only the marks advance
            return
        marks = reading.marks
        for name in PATH_LISTS:
            paths: list[str] = getattr(reading, name)
            start = marks.get(name, 0)
            end = len(paths)
            if start >= end:
                continue
            for path in paths[start:end]:  # (somewhere else, or `-C DIR`: forms to add)
                paths.extend(self._forms(path, extra))
            marks[name] = len(paths)

    def _forms(self, path: str, extra: list[str]) -> list[str]:
        if not path or path.startswith(("/", "~")):
            return []
        bases = [join_path(self.cwd, d) for d in extra]
        if self.cwd != ".":
            bases.append(self.cwd)
        forms = [normal_path(join_path(base, path)) for base in bases]
        if self.home:  # `cd ~ && rm -rf .local`: the user's `~/.local` for a host's command
            forms.append(home_path(join_path(self.home, path)))
        if self.unknown and self.placed < MAX_PLACED:
            self.placed += 1
            forms.extend("../" * level + path for level in range(1, self.depth + 1))
        return [form for form in dict.fromkeys(forms) if form != path]


class _Given:
    """A variable's value for ``cd``: the command's own (``CDPATH=.. cd x``) over the
    script's; ``$NAME`` for one whose value is not known."""

    __slots__ = ("environ", "variables")

    def __init__(
        self, variables: Mapping[str, str] | None, environ: Mapping[str, str | None] | None
    ) -> None:
        self.variables = variables or {}
        self.environ = environ or {}

    def get(self, name: str) -> str | None:
        if name in self.environ:
            value = self.environ[name]
            return f"${name}" if value is None else value
        return self.variables.get(name)


def _advance(reading: Paths) -> None:
    """Mark every path of ``reading`` placed (:meth:`Place.place` where nothing moves)."""
    marks = reading.marks
    size = len(reading.reads)
    if size and marks.get("reads", 0) < size:
        marks["reads"] = size
    size = len(reading.writes)
    if size and marks.get("writes", 0) < size:
        marks["writes"] = size
    size = len(reading.deletes)
    if size and marks.get("deletes", 0) < size:
        marks["deletes"] = size
    size = len(reading.destroys)
    if size and marks.get("destroys", 0) < size:
        marks["destroys"] = size


def place_at_start(reading: Paths, argv: list[str], root: str | None) -> None:
    """:meth:`Place.place` of ``argv`` from a fresh place in ``root`` (a reading that made no
    :class:`Place`): without ``-C DIR``, nothing moves and no place is made."""
    if _dir_options(argv):
        Place.for_root(root).place(reading, argv)
    else:
        _advance(reading)


def home_path(path: str) -> str:
    """``path`` (``~`` or ``~/…``) in its normal form from the user's home, climbing above it
    kept (``~/a/../..`` is ``~/..``, where ``normal_path`` would drop the ``~``)."""
    rest = normal_path(path[2:]) if path.startswith("~/") else "."
    return "~" if rest == "." else "~/" + rest


def _unwrapped(argv: list[str], dynamic: list[bool]) -> tuple[list[str], list[bool]]:
    """``argv`` without the ``builtin``/``command`` words that run it (``command -p cd ..``
    is ``cd ..``); nothing when ``command -v``/``-V`` only names it."""
    while argv and argv[0] in _BUILTIN_RUNNERS and len(argv) > 1:
        skip = 1
        while skip < len(argv) and argv[skip][:1] == "-" and (argv[0] == "command" or skip == 1):
            if argv[skip] == "--":
                skip += 1
                break
            if "v" in argv[skip].lower() or argv[0] == "builtin":
                return [], []
            skip += 1
        argv, dynamic = argv[skip:], dynamic[skip:]
    return argv, dynamic


def command_name(word: str) -> str:
    """The name a command word runs: its last path part, lower-cased."""
    return word.rsplit("/", 1)[-1].lower()


def _dir_options(argv: list[str]) -> list[str]:
    """The ``-C DIR`` / ``--directory=DIR`` / ``--chdir=DIR`` of ``git``, ``tar``, ``make``,
    ``env`` anywhere in ``argv`` (wrappers included)."""
    # each option below holds `-C`, `--c` or `--d`: without them in the words, none is found
    joined = " ".join(argv)
    tar_at = -1
    if "tar" in joined:  # `tar xfC x.tar DIR`, `tar -xC DIR`: as tar reads its letters
        tar_at = next((i for i, w in enumerate(argv) if command_name(w) in TARS), -1)
    if tar_at < 0 and "-C" not in joined and "--c" not in joined and "--d" not in joined:
        return []
    if not any(command_name(word) in _DIR_OPTION_COMMANDS for word in argv):
        return []
    found: list[str] = []
    for index, word in enumerate(argv):
        if word == "-C" and index + 1 < len(argv):
            found.append(argv[index + 1])
        elif word[:2] == "--" and _dir_option(option := word.partition("=")[0]):
            if option != word:
                found.append(word.partition("=")[2])  # `--directory=DIR`, `--dir=DIR`
            elif index + 1 < len(argv) and option != "--cwd":
                found.append(argv[index + 1])
    if tar_at >= 0:  # and what tar alone reads as one: `xfC x.tar DIR`, `-CDIR`, `-xC DIR`
        words = tar_words(command_name(argv[tar_at]), argv[tar_at + 1 :])
        found.extend(d for d in words.all_values("-C", "--directory") if d not in found)
    return [d for d in found if d and "$" not in d][:8]


__all__ = ["MAX_ANCESTORS", "PATH_LISTS", "Paths", "Place", "place_at_start"]
