"""Git commands that throw away every uncommitted change of the work tree.

``git reset --hard`` is one; so are ``git checkout -- .`` and ``git restore .``, and every other
spelling of "the whole tree" or "whatever the tree holds, overwrite it" git takes:

* a pathspec naming the whole tree: ``.``, ``./.``, ``.//``, ``app/..``, a glob of nothing but
  ``*`` (``*``, ``**``, ``./*``), the top's magic (``:/``, ``:(top)``, ``:/*``), other magic
  around any of these (``:(glob)**``, ``:(icase).``), or exclusions only (``:!README.md``,
  ``:^x``, ``:(exclude)x``: everything but them);
* a forced checkout or switch of a commit (``git checkout -f HEAD``, ``git checkout --force
  main``, ``git switch -f main``, ``git switch --discard-changes main``): the tree is set to
  the commit whatever it held;
* plumbing that does the same: ``git read-tree -u --reset TREE`` and ``git checkout-index -a
  -f`` (every tracked file written from the index over what the tree holds);
* the changes put away and the stash thrown away in the same command (``git stash && git stash
  drop``, ``git stash -u; git stash clear``): no ref keeps them, and the effect inspection sees
  only files modified back to their committed text.

:func:`discards_changes` tells.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from pytest_harness_audit.policy.shell.option_words import split_options

#: Options of ``git checkout``/``restore``/``switch`` that take a value.
_VALUED: Final = frozenset(
    {"-b", "-B", "-c", "-C", "--orphan", "--source", "-s", "--conflict", "--pathspec-from-file"}
)
#: Pathspec magic, long (``:(top,glob)``) or short (``:/``, ``:!``, ``:^``).
_LONG_MAGIC: Final = re.compile(r"^:\(([^)]*)\)")
_SHORT_MAGIC: Final = re.compile(r"^:([/!^]*):?")


def _pathspec(spec: str) -> tuple[str, bool, bool]:
    """``(path, from the top, an exclusion)`` of one pathspec, its magic taken off."""
    long = _LONG_MAGIC.match(spec)
    if long:
        words = {w.strip() for w in long.group(1).split(",")}
        excluded = "exclude" in words or "!" in words or "^" in words
        return spec[long.end() :], "top" in words, excluded
    short = _SHORT_MAGIC.match(spec) if spec.startswith(":") else None
    if short:
        signs = short.group(1)
        return spec[short.end() :], "/" in signs, "!" in signs or "^" in signs
    return spec, False, False


def _whole(spec: str, folder: str) -> bool:
    """Whether the path of one pathspec (not an exclusion) names the whole work tree."""
    path, top, _ = _pathspec(spec)
    if not top:
        path = posixpath.join(folder, path) if folder and not path.startswith("/") else path
    if path.strip("*/.") == "" and "*" in path:
        return True  # `*`, `**`, `./*`, `:/*`: every file
    return posixpath.normpath(path or ".") == "."


def whole_tree(specs: list[str], folder: str = "") -> bool:
    """Whether the pathspecs ``specs`` (of a command run in ``folder``) cover the whole tree:
    one names all of it, or every one is an exclusion."""
    if not specs:
        return False
    if all(_pathspec(spec)[2] for spec in specs):
        return True  # `:!README.md`: everything but README.md
    return any(not _pathspec(spec)[2] and _whole(spec, folder) for spec in specs)


#: ``git stash`` subcommands that put nothing away.
_STASH_OTHERS: Final = frozenset(
    {"list", "show", "drop", "clear", "pop", "apply", "branch", "create", "store"}
)


def _stashes(argv: list[str]) -> bool:
    """Whether the command ``argv`` is a ``git stash`` that puts the tree's changes away."""
    if not argv or argv[0].rsplit("/", 1)[-1] != "git" or "stash" not in argv:
        return False
    after = argv[argv.index("stash") + 1 :]
    return not after or after[0] not in _STASH_OTHERS


def discards_changes(
    sub: str, rest: list[str], folder: str = "", earlier: list[list[str]] | None = None
) -> bool:
    """Whether ``git SUB REST`` (run in ``folder``; after the commands ``earlier`` of the same
    text) throws every uncommitted change away."""
    if sub == "stash":
        dropping = rest[:1] in (["drop"], ["clear"])
        return dropping and any(_stashes(argv) for argv in earlier or ())
    if sub == "switch":
        return any(w in ("-f", "--force", "--discard-changes") for w in rest)
    if sub == "read-tree":
        return "-u" in rest and "--reset" in rest
    if sub == "checkout-index":
        every = any(w in ("-a", "--all") or _bundled(w, "a") for w in rest)
        return every and any(w == "--force" or _bundled(w, "f") for w in rest)
    if sub not in ("checkout", "restore"):
        return False
    options, operands = split_options(rest, _VALUED)
    if sub == "restore":
        staged = any(o in ("-S", "--staged") or _bundled(o, "S") for o in options)
        if staged and not any(o in ("-W", "--worktree") or _bundled(o, "W") for o in options):
            return False  # the index only: the tree keeps its changes
        return whole_tree(operands, folder)
    after = rest[rest.index("--") + 1 :] if "--" in rest else None
    specs = after if after is not None else operands[1:] or operands[:1]
    if whole_tree(specs, folder):
        return True
    forced = any(o in ("-f", "--force") or _bundled(o, "f") for o in options)
    if not forced:
        return False
    # `checkout -f [COMMIT]`: the tree set to the commit; paths after it limit it to them
    return (after is None and len(operands) <= 1) or (after == [] and len(operands) <= 1)


def _bundled(word: str, letter: str) -> bool:
    """Whether ``word`` is a bundle of short options holding ``letter`` (``-qf``)."""
    return word[:1] == "-" and word[1:2] not in ("-", "") and letter in word[1:]


__all__ = ["discards_changes", "whole_tree"]
