"""Commands a finder runs on each file it finds: ``find … -exec CMD {} +`` and ``fd … -x CMD``.

Both run a command whose operands are the files the finder lists, so the reading runs the
command's words once with every listed name in the place of the placeholder, and once with each
example name: the folder it searches, a file the tests literally name or a credential name a
glob could match, for a root the reading cannot list. ``fd``/``fdfind`` run ``-x``/``--exec``
(once a file) and ``-X``/``--exec-batch`` (once with them all) up to a ``;``; a command with no
placeholder gets the path at its end; ``{/}``, ``{//}``, ``{.}``, ``{/.}`` stand for the base
name, the folder, the path and the base name without extension. What ``fd`` lists is every file
under its folders that its pattern (a regular expression searched in the base name, any case;
``-g``: a glob; ``-F``: a fixed string) and its ``-e`` extensions keep: one name too many
(``-p`` full-path patterns, or a pattern Python cannot compile, keep them all), never too few.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.sensitive import GLOB_CANDIDATE_NAMES
from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.listings import walked_names
from pytest_harness_audit.policy.shell.option_words import split_options

#: Most names one command is run with.
_MAX_LISTED = 256
#: The finders read here (the cheap test before any work).
FINDERS = frozenset({"fd", "fdfind"})
_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})
#: fd's options taking a value (short ones may end a bundle: ``-He env``).
_FD_VALUED = frozenset(
    {"-e", "--extension", "-t", "--type", "-E", "--exclude", "-d", "--max-depth", "--min-depth",
     "--exact-depth", "-S", "--size", "--changed-within", "--changed-before", "-o", "--owner",
     "-j", "--threads", "--base-directory", "--search-path", "--path-separator", "-c", "--color",
     "--max-results", "--ignore-file", "--and", "--format", "--batch-size"}
)  # fmt: skip
_FD_SHORT_VALUED = "etEdSojc"
_FD_PLACEHOLDERS = ("{}", "{/}", "{//}", "{.}", "{/.}")


def run_on_each(
    inner: list[str],
    examples: list[str],
    listed: list[str] | None,
    ctx: Context,
    put: Callable[[str, str], str] | None = None,
    folder: str = "",
) -> None:
    """Read ``inner`` (a command with placeholders) as run on each of ``examples`` and on all
    of ``listed`` at once; ``put(word, path)``: the word for one path (``{}`` replaced);
    ``folder``: where it runs (``find ROOT -execdir``: in ROOT, its paths from there)."""
    put = put or _put_find
    start = f"cd {quote(folder)} && " if folder else ""
    if folder:
        put = _from_folder(put, folder)
    for found in examples:
        ctx.script(start + " ".join(quote(put(w, found)) for w in inner))
    if listed is not None:
        names = listed[:_MAX_LISTED]
        ctx.script(start + " ".join(_each(w, names, put) for w in inner))


def _from_folder(put: Callable[[str, str], str], folder: str) -> Callable[[str, str], str]:
    """``put`` with each path written from ``folder`` (``../a/b`` from ``..``: ``./a/b``)."""

    def moved(word: str, path: str) -> str:
        inside = path.startswith(folder.rstrip("/") + "/")
        return put(word, "./" + posixpath.relpath(path, folder) if inside else path)

    return moved


def _put_find(word: str, path: str) -> str:
    return word.replace("{}", path)


def _each(word: str, names: list[str], put: Callable[[str, str], str]) -> str:
    """``word`` with its placeholder as each of ``names`` in turn, quoted."""
    if put(word, "\0") == word:
        return quote(word)
    return " ".join(quote(put(word, name)) for name in names)


def quote(word: str) -> str:
    """``word`` quoted for a shell, always (``shlex.quote`` leaves ``X=1`` bare, which the
    script built here would read as an assignment, not as a command's name or argument)."""
    return "'" + word.replace("'", "'\\''") + "'" if word else "''"


def fd(name: str, args: list[str], ctx: Context) -> bool:
    """``fd ARGS``: read the commands its ``-x``/``-X`` run on the files it lists; whether it
    runs any (else its words are read as a listing's)."""
    listing, commands = _fd_split(args)
    if not commands:
        return False
    known = ctx.workspace_root is not None
    found = walked_names(name, listing, ctx, known) if known else None
    keep = _fd_filter(listing)
    listed = [f for f in found if keep(f)] if found is not None else None
    folder = (_fd_words(listing)[1][1:] or ["."])[0]
    examples = [folder]  # the folder it searches, as `find`'s root (`fd . .. -x …`)
    if not known and _given(listing):
        examples += [posixpath.join(folder, n) for n in GLOB_CANDIDATE_NAMES if keep(n)]
    for inner in commands:
        if not any(p in word for word in inner for p in _FD_PLACEHOLDERS):
            inner = [*inner, "{}"]
        run_on_each(inner, examples[:8], listed, ctx, _put_fd, _base(listing))
    return True


def _base(listing: list[str]) -> str:
    """fd's ``--base-directory DIR``: where it searches from and runs its commands."""
    options = _fd_words(listing)[0]
    found = [o.partition("=")[2] for o in options if o.startswith("--base-directory=")]
    found += [options[i + 1] for i, o in enumerate(options[:-1]) if o == "--base-directory"]
    return found[-1] if found else ""


def _given(listing: list[str]) -> bool:
    """Whether an fd listing names a pattern or an extension (with neither, no credential file
    in particular)."""
    options, operands = _fd_words(listing)
    return bool(operands or _extensions(options))


def _extensions(options: list[str]) -> list[str]:
    """The extensions of fd's ``-e EXT``/``--extension=EXT`` options, lower-cased."""
    found = [o.partition("=")[2] for o in options if o.startswith("--extension=")]
    for index, word in enumerate(options[:-1]):
        if word == "--extension" or (word[:1] == "-" and word[1:2] != "-" and word[-1] == "e"):
            found.append(options[index + 1])
    return [e.lstrip(".").lower() for e in found]


def _fd_split(args: list[str]) -> tuple[list[str], list[list[str]]]:
    """fd's listing words and the commands its ``-x``/``-X`` run (each up to a ``;``)."""
    listing: list[str] = []
    commands: list[list[str]] = []
    index = 0
    while index < len(args):
        word = args[index]
        start = _exec_start(word)
        if start is None:
            listing.append(word)
            index += 1
            continue
        if word[:1] == "-" and word[1:2] not in ("-", "x", "X"):
            listing.append(word[: word.index("x" if "x" in word else "X")])  # `-Hx`: -H lists
        end = index + 1
        while end < len(args) and args[end] != ";":
            end += 1
        inner = ([start] if start else []) + args[index + 1 : end]
        if inner:
            commands.append(inner)
        index = end + 1
    return listing, commands


def _exec_start(word: str) -> str | None:
    """Where ``word`` starts an fd command: ``""`` (``-x``, ``--exec``, ``-Hx``), the command's
    first word (``-xcat``, ``--exec=cat``); ``None``: it does not."""
    if word in _FD_EXEC:
        return ""
    name, equals, value = word.partition("=")
    if equals and name in _FD_EXEC and name.startswith("--"):
        return value
    if word[:1] != "-" or word[1:2] == "-":
        return None
    for position, letter in enumerate(word[1:], 1):
        if letter in "xX":
            return word[position + 1 :]
        if letter in _FD_SHORT_VALUED:
            return None  # the rest of the bundle is that option's value
    return None


def _fd_words(listing: list[str]) -> tuple[list[str], list[str]]:
    """fd's options (with their values) and operands (its pattern first)."""
    return split_options(listing, _FD_VALUED, _FD_SHORT_VALUED)


def _fd_filter(listing: list[str]) -> Callable[[str], bool]:
    """Which listed paths fd's pattern and extensions keep (module doc: never too few)."""
    options, operands = _fd_words(listing)
    flags = "".join(o[1:] for o in options if o[:1] == "-" and o[1:2] != "-")
    extensions = _extensions(options)
    pattern = operands[0] if operands else ""
    if "p" in flags or "--full-path" in options:
        pattern = ""  # matched against the absolute path: keep them all
    glob = "g" in flags or "--glob" in options
    fixed = "F" in flags or "--fixed-strings" in options
    compiled = None
    if pattern and not glob and not fixed:
        try:
            compiled = re.compile(pattern, re.IGNORECASE)
        except re.error:
            pattern = ""  # a pattern Python cannot read: keep them all

    def search(base: str) -> bool:
        if not pattern:
            return True
        if glob:
            return wildcards.fnmatchcase(base.lower(), pattern.lower())
        if fixed:
            return pattern.lower() in base.lower()
        return compiled is not None and compiled.search(base) is not None

    def keep(path: str) -> bool:
        base = posixpath.basename(path.rstrip("/"))
        if extensions and not any(base.lower().endswith("." + e) for e in extensions):
            return False
        return search(base)

    return keep


def _put_fd(word: str, path: str) -> str:
    """``word`` with fd's placeholders for ``path``."""
    if "{" not in word:
        return word
    base = posixpath.basename(path)
    stem = base.rsplit(".", 1)[0] if "." in base[1:] else base
    whole = path[: len(path) - len(base)] + stem
    folder = posixpath.dirname(path) or "."
    for placeholder, value in (("{//}", folder), ("{/.}", stem), ("{/}", base), ("{.}", whole)):
        word = word.replace(placeholder, value)
    return word.replace("{}", path)


__all__ = ["FINDERS", "fd", "quote", "run_on_each"]
