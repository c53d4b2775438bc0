"""Git's configurations and hooks the hook door compares between events (:mod:`.hook_between`).

Git runs code from its configuration (``core.fsmonitor``, ``core.hooksPath``, filters …) and
its hooks, in the workspace's ``.git``, in the folder ``core.hooksPath`` names, in the
submodules' git directories, and, for a linked worktree, in the git directories its ``.git``
file leads to (:func:`~pytest_harness_audit.inspect.git_dirs.linked_git_dirs`). This module
lists those files, each kind of folder walked with a bound of its own.
"""

from __future__ import annotations

import os

from pytest_harness_audit.inspect.exec_config import git_config_entries
from pytest_harness_audit.inspect.git_dirs import linked_git_dirs

#: Most entries looked at in ``.git/hooks`` and below ``.git/modules``.
MAX_GIT_ENTRIES = 512
_GIT_CONFIGS = ("config", "config.worktree")
_CONFIG_BYTES = 1 << 20


def git_files(root: str) -> set[str]:
    """The git configurations and hooks of the workspace's ``.git`` and its submodules' git
    directories (``.git/modules/<name>``), relative to ``root``, and of the git directories a
    ``.git`` file leads to (absolute): the hooks first, each folder kind with a bound of its own
    (junk below ``.git/modules`` cannot hide a new hook)."""
    linked = linked_git_dirs(root)  # a linked worktree's: its git runs what is there
    found = {f"{top}/{name}" for top in (".git", *linked) for name in _GIT_CONFIGS}
    for top in (".git", *linked):
        found.update(_walk_git(root, f"{top}/hooks", hooks=True))
    hooks_path = _hooks_path(root)
    if hooks_path is not None:  # `core.hooksPath` (husky, lefthook): git runs these instead
        found.update(_walk_git(root, hooks_path, hooks=True))
    for top in (".git", *linked):
        found.update(_walk_git(root, f"{top}/modules", hooks=False))
    return found


def _hooks_path(root: str) -> str | None:
    """The folder ``core.hooksPath`` of the workspace's git configuration names (relative to
    ``root`` when inside it), if any."""
    text = ""
    for top in (os.path.join(root, ".git"), *linked_git_dirs(root)):
        try:
            with open(os.path.join(top, "config"), "rb") as handle:
                text += handle.read(_CONFIG_BYTES).decode("utf-8", "surrogateescape") + "\n"
        except OSError:
            continue
    for entry in git_config_entries(text):
        key, _, value = entry.partition("=")
        if key == "core.hookspath" and value:  # git expands a leading `~` to the home folder
            folder = os.path.normpath(
                os.path.join(os.path.abspath(root), os.path.expanduser(value))
            )
            inside = os.path.commonpath([os.path.abspath(root), folder]) == os.path.abspath(root)
            return os.path.relpath(folder, root) if inside else folder
    return None


def _walk_git(root: str, top: str, *, hooks: bool) -> set[str]:
    """The hooks (``hooks``) or the configurations and hooks below ``top``; bounded."""
    found: set[str] = set()
    folders = [(top, hooks)]
    seen = 0
    while folders and seen < MAX_GIT_ENTRIES:
        folder, in_hooks = folders.pop()
        try:
            entries = list(os.scandir(os.path.join(root, folder)))
        except OSError:
            continue
        # hooks folders first: a configuration's folder holds at most a few of them
        for entry in entries:
            seen += 1
            relative = f"{folder}/{entry.name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if in_hooks:
                if not entry.name.endswith(".sample"):
                    found.add(relative)
            elif is_dir and entry.name == "hooks":
                folders.append((relative, True))
            elif is_dir and entry.name not in ("objects", "refs", "logs", "lfs"):
                folders.insert(0, (relative, False))
            elif entry.name in _GIT_CONFIGS:
                found.add(relative)
    return found


__all__ = ["MAX_GIT_ENTRIES", "git_files"]
