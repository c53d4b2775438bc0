"""A command whose name or text is a program's output the reading cannot work out.

``$(python3 gen.py)``, ``eval "$(node make-cmd.js)"`` and ``sh -c "$(./plan)"`` run whatever
the program prints: a script built at run time, as ``python3 gen.py | sh`` runs one. Such a
command is unreadable (a warning under ``safety``), as the piped form is. A program whose
output names a program or sets the shell up, not text of the workspace's making, is the
ordinary idiom and stays as it was: ``$(which python3) -m pytest``, ``eval "$(ssh-agent -s)"``,
``eval "$(pyenv init -)"`` (:data:`SETUP_PROGRAMS`).
"""

from __future__ import annotations

from typing import Final

from pytest_harness_audit.policy.shell.nodes import Lit, Sub

#: Programs whose output names a program, a folder or a setting, or the shell set-up of an
#: installed tool.
SETUP_PROGRAMS: Final = frozenset(
    {"which", "command", "type", "whereis", "realpath", "readlink", "dirname", "basename",
     "pwd", "git", "npm", "yarn", "pnpm", "poetry", "pipenv", "pyenv", "rbenv", "nodenv",
     "goenv", "jenv", "conda", "mamba", "micromamba", "ssh-agent", "gpg-agent", "opam",
     "brew", "dircolors", "fnm", "zoxide", "starship", "mise", "rtx", "asdf", "keychain",
     "rustup", "go", "pkg-config", "python3-config", "xcrun", "tty", "id", "whoami",
     "hostname", "uname", "date", "nproc", "getconf", "mktemp", "locale", "tput", "gh",
     "kubectl", "minikube", "docker-machine", "aws", "gcloud", "ls", "find", "head", "tail"}
)  # fmt: skip
#: The program of a substitution the reading reads again (an unknown output's stand-in).
_STAND_IN: Final = "…"


def program_of(sub: Sub) -> str:
    """The name of the program a command substitution starts with (``""``: not written)."""
    if not sub.commands or not sub.commands[0].words:
        return ""
    parts = sub.commands[0].words[0]
    if not all(isinstance(part, Lit) for part in parts):
        return ""
    return "".join(part.text for part in parts if isinstance(part, Lit)).rsplit("/", 1)[-1]


def opaque_command(programs: list[str]) -> str | None:
    """Why a command named by an output not worked out is unreadable (``programs``: those whose
    output the command's substitutions left unknown), or ``None`` when each is a set-up
    program's (module doc)."""
    unknown = [name for name in programs if name != _STAND_IN and name not in SETUP_PROGRAMS]
    if not unknown:
        return None
    return f"it runs what a program prints ({unknown[0] or 'a program not named'})"


__all__ = ["SETUP_PROGRAMS", "opaque_command", "program_of"]
