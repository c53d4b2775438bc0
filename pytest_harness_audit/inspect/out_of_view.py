"""Files a call moved out of the work's view: lost, as a deletion is.

``mv app .venv/x`` keeps every byte of ``app/``, but in a folder no one reads as the project's
work: a virtual environment, installed packages, a cache, a build output, or a path git ignores.
The next ``rm -rf .venv``, ``git clean -X`` or fresh clone drops it unseen, and nothing shows
that the work went. A file moved (a rename, ``git mv``, a hard link then the old name removed)
from a place in view to a place out of view counts as deleted, not renamed.

A place is out of view when a folder on its path has one of the :data:`HIDDEN_FOLDERS` names and
held no tracked file before the call (a project whose own ``build/`` is tracked keeps it in
view), or when git ignores it after the call (``git check-ignore``; a path in the index is not
ignored). A file was in view unless it lay in such a folder, or was untracked and is ignored by
git now; an ignore file changed by the same call (``echo notes/ >> .gitignore && mv notes
.cache/``) leaves an untracked file in view, as it was before the call, and so does git showing
it when the session started (:func:`untracked_in_view`): the owner's untracked work made ignored
by one call and moved away by a later one is lost at the move. Generated files
(:func:`is_generated`: compiled, logs, in a folder of :data:`HIDDEN_FOLDERS`) are no work.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from typing import Final

from pytest_harness_audit.inspect.git_env import GIT_ISOLATION_ENV

#: Names of folders that hold no project work: environments, dependencies, caches, outputs.
HIDDEN_FOLDERS: Final = frozenset(
    {
        ".venv",
        "venv",
        ".virtualenvs",
        "site-packages",
        "node_modules",
        "__pycache__",
        ".git",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        ".eggs",
        ".cache",
        "build",
        "dist",
    }
)
#: Most paths asked of git in one call (the rest are judged by their folders' names alone).
MAX_ASKED: Final = 10_000
#: Suffixes of files a build, an interpreter or a run writes: not the project's work.
GENERATED_SUFFIXES: Final = (
    ".pyc",
    ".pyo",
    ".o",
    ".obj",
    ".so",
    ".dylib",
    ".dll",
    ".a",
    ".class",
    ".log",
)
#: Names of files a tool or the system writes: not the project's work.
GENERATED_NAMES: Final = frozenset({".DS_Store", "Thumbs.db", ".coverage"})

Move = tuple[str, str]


def is_generated(path: str) -> bool:
    """Whether ``path`` (relative, posix) is a generated file: its name or suffix says so, or a
    folder on its path is one of :data:`HIDDEN_FOLDERS` or an ``*.egg-info``."""
    *folders, name = path.split("/")
    if name in GENERATED_NAMES or name.endswith(GENERATED_SUFFIXES):
        return True
    return any(part in HIDDEN_FOLDERS or part.endswith(".egg-info") for part in folders)


def _git_lines(root: str, args: Sequence[str], given: str = "") -> list[str] | None:
    """The NUL-separated output of ``git ARGS`` run at ``root`` (``given`` on its standard
    input); ``None`` when git cannot tell (no repository, an error)."""
    if not os.path.lexists(os.path.join(root, ".git")):
        return None
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            env={**os.environ, **GIT_ISOLATION_ENV},
            input=given.encode("utf-8", "surrogateescape"),
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode not in (0, 1):
        return None
    return [path for path in done.stdout.decode("utf-8", "surrogateescape").split("\0") if path]


def untracked_in_view(root: str) -> frozenset[str]:
    """The untracked files git shows in the repository at ``root`` now (not ignored), a folder
    none of whose files is tracked as one ``dir/`` entry; empty past :data:`MAX_ASKED` entries,
    or when git cannot tell."""
    args = ["ls-files", "-z", "--others", "--exclude-standard", "--directory"]
    found = _git_lines(root, args)
    return frozenset(found) if found is not None and len(found) <= MAX_ASKED else frozenset()


def _shown(path: str, in_view: frozenset[str]) -> bool:
    """Whether ``path`` or a folder on it is among ``in_view`` (:func:`untracked_in_view`)."""
    if not in_view:
        return False
    parts = path.split("/")
    return path in in_view or any(
        "/".join(parts[:n]) + "/" in in_view for n in range(1, len(parts))
    )


def _hidden_folder(path: str, tracked: frozenset[str]) -> bool:
    """Whether a folder on ``path`` has a hidden name and held no tracked file."""
    parts = path.split("/")[:-1]
    for depth, part in enumerate(parts):
        if part in HIDDEN_FOLDERS:
            prefix = "/".join(parts[: depth + 1]) + "/"
            if not any(known.startswith(prefix) for known in tracked):
                return True
    return False


def ignored_paths(root: str, paths: Sequence[str]) -> frozenset[str]:
    """Those of ``paths`` git ignores in the repository at ``root`` (none when git cannot tell)."""
    if not paths:
        return frozenset()
    found = _git_lines(root, ["check-ignore", "-z", "--stdin"], "\0".join(paths[:MAX_ASKED]) + "\0")
    return frozenset(found or ())


def _ignore_file(path: str) -> bool:
    return path.rsplit("/", 1)[-1] == ".gitignore" or path.endswith(".git/config")


def out_of_view(
    root: str,
    moves: Sequence[Move],
    tracked: frozenset[str],
    changed: Sequence[str],
    in_view: frozenset[str] = frozenset(),
) -> tuple[tuple[Move, ...], tuple[Move, ...]]:
    """``(renamed, hidden)``: ``moves`` (``(before, now)`` pairs) split into those that stay in
    the work's view and those moved out of it (module doc). ``tracked``: the paths tracked
    before the call; ``changed``: every path the call created, modified or deleted;
    ``in_view``: the untracked paths git showed when the session started."""
    if not moves:
        return (), ()
    candidates = [(source, path) for source, path in moves if not _hidden_folder(source, tracked)]
    if not candidates:
        return tuple(moves), ()
    hidden = {pair for pair in candidates if _hidden_folder(pair[1], tracked)}
    rest = [pair for pair in candidates if pair not in hidden]
    ignores_changed = any(_ignore_file(path) for path in changed)
    asked = sorted({path for pair in rest for path in pair})
    ignored = ignored_paths(root, asked) if rest else frozenset()
    for source, path in rest:
        shown = _shown(source, in_view) and not is_generated(source)
        source_seen = source in tracked or ignores_changed or source not in ignored or shown
        if source_seen and path in ignored:
            hidden.add((source, path))
    kept = tuple(pair for pair in moves if pair not in hidden)
    return kept, tuple(sorted(hidden))


__all__ = [
    "GENERATED_NAMES",
    "GENERATED_SUFFIXES",
    "HIDDEN_FOLDERS",
    "ignored_paths",
    "is_generated",
    "out_of_view",
    "untracked_in_view",
]
