"""Where ``cd -P`` goes: the folder a path names once its links are followed.

Bash's ``cd`` is logical by default: ``cd link/..`` goes back to where the link is. With ``-P``
(or after ``set -P``/``set -o physical``) it follows the links first: ``cd -P shared/..``, with
``shared`` a link to ``../lib`` beside the workspace, goes to the folder above the workspace,
where a store beside it lies. The reading asks the file system, as the call is judged (a link
that exists then); a folder that does not exist yet (made in the same command, maybe as a link)
is not known, so every folder above is read.
"""

from __future__ import annotations

import os

from pytest_harness_audit.policy.shell.dirstack import Spot


def physical_spot(root: str, written: str, spot: Spot) -> Spot:
    """Where ``cd -P`` to ``written`` (from where the script started in ``root``, or absolute)
    goes, given ``spot``, where the logical ``cd`` goes: a path from ``root`` when it lies in
    the workspace, else an absolute one; not known when the folder does not exist."""
    if spot[1] or not root.startswith("/"):
        return spot
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, written))
    if not os.path.isdir(real):
        return (".", True, "")
    if real == real_root or real.startswith(real_root.rstrip("/") + "/"):
        inside = os.path.relpath(real, real_root)
        return (inside, False, spot[2] if inside == spot[0] else "")  # (no link: as it was)
    return (real, False, spot[2] if real == spot[0] else "")


def physical_setting(argv: list[str], current: bool) -> bool:
    """Whether ``cd`` is physical after ``set`` ``argv`` (``set -P``, ``set -o physical``,
    ``set +P``), given ``current``."""
    for index, word in enumerate(argv[1:], 1):
        if word in ("-o", "+o") and argv[index + 1 : index + 2] == ["physical"]:
            current = word == "-o"
        elif word[:1] in "-+" and word[1:2] not in ("-", "o", "") and "P" in word:
            current = word[0] == "-"
        elif word == "--":
            break
    return current


__all__ = ["physical_setting", "physical_spot"]
