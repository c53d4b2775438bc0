"""The folder a wrapper runs its command in: ``env -C DIR``, ``sudo -D DIR``, ``systemd-run
--working-directory=DIR``, ``run0 --chdir=DIR``.

Everything the command runs starts there, a script it hands to a shell included (``env -C ..
sh -c 'echo x >> audit/x.jsonl'``), so the command is read as ``cd DIR && COMMAND``: the
reading's place moves for every path the command and its scripts name, as after a ``cd``.
(``git``/``tar``/``make -C DIR`` move only the paths of their own words: :mod:`.place`.)
"""

from __future__ import annotations

import shlex

#: Each wrapper's options naming the folder its command runs in.
_FOLDER_OPTIONS = {
    "env": ("-C", "--chdir"),
    "sudo": ("-D", "--chdir"),
    "systemd-run": ("--working-directory", "-D"),
    "run0": ("--chdir", "-D"),
}


def moved_command(name: str, options: list[str], command: list[str]) -> str | None:
    """``cd DIR && COMMAND`` for wrapper ``name`` given ``options`` (its words before the
    command) that run ``command`` in ``DIR``; ``None`` when it names no folder."""
    names = _FOLDER_OPTIONS.get(name)
    if names is None:
        return None
    folder = None
    for index, word in enumerate(options):
        option, equals, value = word.partition("=")
        if option in names and option[:2] == "--" and equals:
            folder = value  # `--chdir=..`
        elif word in names and index + 1 < len(options):
            folder = options[index + 1]  # `-C ..`, `--chdir ..`
        elif word[:2] in names and len(word) > 2 and word[1:2] != "-":
            folder = word[2:]  # `-C..`
    if not folder:
        return None
    return f"cd {shlex.quote(folder)} && {shlex.join(command)}"


def watch_runs_words(word: str) -> bool:
    """Whether ``word`` is ``watch``'s ``-x``/``--exec`` (also bundled: ``-tx``, ``-xn1``):
    ``watch`` then runs its words themselves, not ``sh -c`` of them joined."""
    return word == "--exec" or (word[:2] != "--" and "x" in word.split("n", 1)[0])


__all__ = ["moved_command", "watch_runs_words"]
