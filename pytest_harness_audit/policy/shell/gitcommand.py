"""Git's own command line, as it sets configuration and picks the repository.

``git -c key=value``, ``--config-env=key=VAR`` (the value of ``VAR``), the settings of
``GIT_CONFIG_COUNT``/``GIT_CONFIG_PARAMETERS`` the command sees (:func:`.gitenv.command_settings`),
``--git-dir=DIR`` (another repository: its hooks and configuration are read), ``--exec-path=DIR``
(git runs its programs from ``DIR``: unknown), and ``git init``/``git clone`` with a
``--template=DIR`` (its hooks are copied into the new repository) or ``clone --config
key=value``.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.embedded import (
    Runner,
    git_config_value,
    git_key_runs,
    git_template,
)
from pytest_harness_audit.policy.shell.expand import Expander
from pytest_harness_audit.policy.shell.gitenv import command_settings

#: Global options of git that take the next word as their value.
GIT_GLOBAL_OPTIONS: Final = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"}
)


#: Configuration files read by :func:`existing_text`, by path: their signature and text.
_READ: Final[dict[str, tuple[tuple[int, int, int, int], str]]] = {}
_MAX_READ: Final = 256


class GitContext(Runner, Protocol):
    """What reading git's command line needs besides a :class:`~.embedded.Runner`."""

    def variable(self, name: str) -> str | None:
        """The value of a variable the command sees, when known."""
        ...

    def config_include(self, key: str, value: str) -> bool:
        """A git configuration ``include.path``: read the included file (:mod:`.gitenv`)."""
        ...

    def repository(self, git_dir: str) -> None:
        """Git works in the repository ``git_dir``: its hooks and configuration."""
        ...


def setting(word: str) -> tuple[str, str]:
    """``key=value`` of ``-c``/``--config``: a key alone is ``true``."""
    key, given, value = word.partition("=")
    return key, value if given else "true"


def global_options(
    args: list[str], ctx: GitContext, from_environment: bool
) -> tuple[int, list[tuple[str, str]], str]:
    """Read git's options before its subcommand: where the subcommand is, the settings the
    command takes (those of the environment first, when ``from_environment``) and the folder
    it runs in (``-C``; ``""``: where the command is)."""
    settings = command_settings(ctx.variable) if from_environment else []
    folder = ""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        word = args[index]
        following = args[index + 1] if index + 1 < len(args) else None
        name, has_value, value = word.partition("=")
        if word == "-c" and following is not None:
            settings.append(setting(following))
        elif word == "-C" and following:
            folder = (
                following if following.startswith("/") or not folder else f"{folder}/{following}"
            )
        elif name == "--config-env":
            found = _config_env(value if has_value else following or "", ctx)
            if found is not None:
                settings.append(found)
        elif name == "--git-dir" and (value if has_value else following):
            ctx.repository(value if has_value else following or "")
        elif name == "--exec-path" and value:  # `--exec-path` alone prints the folder
            ctx.unknown("git runs its programs from a folder the command names")
        index += 2 if word in GIT_GLOBAL_OPTIONS else 1
    return index, settings, folder


def _config_env(spec: str, ctx: GitContext) -> tuple[str, str] | None:
    """``--config-env=KEY=VAR``: the setting ``KEY`` takes the value of the variable ``VAR``;
    one that may run something with a value not known makes the command unknown."""
    key, _, name = spec.rpartition("=")
    value = ctx.variable(name) if key else None
    if value is not None:
        return key, value
    if not key or git_key_runs(key):
        ctx.unknown("git takes configuration from the environment")
    return None


def config_target(options: list[str], folder: str = "") -> str | None:
    """The file ``git config`` with ``options``, run in ``folder`` (``-C``), writes: the
    repository's ``.git/config``, ``--global``'s ``.gitconfig`` (the workspace is the home of
    the commands it runs), ``--file F``; ``None`` for the system file or one only read
    (``--blob``)."""
    written = ".git/config"
    for index, option in enumerate(options):
        if option in ("-f", "--file") and index + 1 < len(options):
            written = options[index + 1]
            break
        if option.startswith("--file="):
            written = option.partition("=")[2]
            break
        if option in ("--system", "--blob") or option.startswith("--blob="):
            return None
        if option == "--global":
            return ".gitconfig"
    return relative_to(folder, written)


def relative_to(folder: str, path: str) -> str:
    """``path`` as git run in ``folder`` (``-C``) names it."""
    return f"{folder.rstrip('/')}/{path}" if folder and not path.startswith("/") else path


def config_with(text: str | None, key: str, value: str) -> str:
    """The text of a git configuration file after ``git config KEY VALUE``."""
    head, _, name = key.rpartition(".")
    section, dot, sub = head.partition(".")
    header = f'[{section} "{sub}"]' if dot else f"[{section}]"
    quoted = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{text or ""}\n{header}\n\t{name} = "{quoted}"\n'


def existing_text(
    expander: Expander, file_text: Callable[[str], str | None]
) -> Callable[[str], str | None]:
    """``file_text`` for the configuration files every git command looks for, mostly missing
    or unchanged: a file neither written earlier in the command nor on disk is ``None`` without
    resolving its path, and one unchanged on disk since it was last read (same inode, size,
    change and modification times) is not read again."""
    base = os.path.join(expander.root or "", expander.place.here or "")

    def text(path: str) -> str | None:
        key = expander.key(path)
        if (
            path.startswith("/")
            or any(char in path for char in "$*?[")
            or key in expander.files
            or key in expander.unknown_files  # not a work-tree rewrite: git's files stay
        ):
            return file_text(path)
        joined = os.path.join(base, path)
        try:
            status = os.stat(joined)
        except (OSError, ValueError):
            return None
        signature = (status.st_ino, status.st_size, status.st_ctime_ns, status.st_mtime_ns)
        known = _READ.get(joined)
        if known is not None and known[0] == signature:
            return known[1]
        found = file_text(path)
        if found is not None:
            if len(_READ) >= _MAX_READ:
                _READ.clear()
            _READ[joined] = (signature, found)
        return found

    return text


def new_repository(sub: str, args: list[str], ctx: GitContext) -> None:
    """``git init``/``git clone``: the hooks of a ``--template=DIR`` are copied into the new
    repository (read as the hooks of ``core.hooksPath`` are); ``clone``'s ``--config
    key=value`` is set in it as ``-c`` is."""
    for index, word in enumerate(args):
        following = args[index + 1] if index + 1 < len(args) else ""
        found = None
        if word.startswith("--template="):
            git_template(word.partition("=")[2], ctx)
        elif word == "--template":
            git_template(following, ctx)
        elif sub == "clone" and word in ("-c", "--config"):
            found = setting(following)
        elif sub == "clone" and word.startswith("--config="):
            found = setting(word.partition("=")[2])
        if found is not None and not ctx.config_include(*found):
            git_config_value(*found, ctx)


#: Options of git subcommands whose value is a command git runs (long names, which git
#: accepts abbreviated), and their one-letter forms by subcommand.
_COMMAND_OPTIONS: Final = ("--upload-pack", "--receive-pack", "--exec", "--extcmd",
                    "--open-files-in-pager")  # fmt: skip
_SHORT_COMMAND_OPTIONS: Final = {
    "fetch": "-u", "clone": "-u", "pull": "-u", "ls-remote": "-u", "difftool": "-x",
    "grep": "-O", "archive": "", "rebase": "-x",
}  # fmt: skip
#: ``git filter-branch``'s filters: each is shell text it evaluates, once a commit.
_FILTERS: Final = frozenset(
    {"--setup", "--env-filter", "--tree-filter", "--index-filter", "--parent-filter",
     "--msg-filter", "--commit-filter", "--tag-name-filter"}
)  # fmt: skip


def git_option_commands(sub: str, args: list[str]) -> list[str]:
    """The commands ``git SUB`` runs from its options: ``--upload-pack=CMD`` (``--upl=`` too,
    as git takes a long option by any unambiguous start), ``--receive-pack``, ``--exec``,
    ``difftool -x``/``--extcmd``, ``grep -O``/``--open-files-in-pager``, ``rebase -x``; and
    from its operands (:func:`_operand_commands`)."""
    commands: list[str] = _operand_commands(sub, args)
    short = _SHORT_COMMAND_OPTIONS.get(sub, "")
    for index, word in enumerate(args):
        if word[:1] != "-":
            continue  # an operand: every option below starts with `-`
        if word == "--":
            break
        name, equals, value = word.partition("=")
        long = name.startswith("--") and len(name) > 4
        matched = [o for o in _COMMAND_OPTIONS if o.startswith(name)] if long else ()
        if len(matched) == 1 or (short and name == short):
            if not equals:
                value = args[index + 1] if index + 1 < len(args) else ""
            if value:
                commands.append(value)
        elif short and word.startswith(short) and len(word) > 2 and not word.startswith("--"):
            commands.append(word[2:])  # `-OCMD`, `-uCMD`
    return commands


def _operand_commands(sub: str, args: list[str]) -> list[str]:
    """The commands ``git bisect run CMD …`` and ``git submodule foreach CMD …`` run (the words
    of the command, the first through the shell as git gives it), and ``git filter-branch``'s
    filters (``--tree-filter CMD``, ``--index-filter=CMD`` …: shell text)."""
    if sub == "filter-branch":
        found: list[str] = []
        for index, word in enumerate(args):
            if word == "--":
                break
            name, equals, value = word.partition("=")
            if name in _FILTERS:
                given = value if equals else (args[index + 1] if index + 1 < len(args) else "")
                found.append(given)
        return [text for text in found if text]
    words: list[str] = []
    if sub == "bisect" and args[:1] == ["run"]:
        words = args[1:]
    elif sub == "submodule":
        index = 0
        while index < len(args) and args[index] in ("-q", "--quiet"):
            index += 1
        if args[index : index + 1] == ["foreach"]:
            words = args[index + 1 :]
            while words and words[0] in ("-q", "--quiet", "--recursive"):
                words = words[1:]
            words = words[1:] if words[:1] == ["--"] else words
    if not words:
        return []
    return [" ".join([words[0], *(shlex.quote(word) for word in words[1:])])]


__all__ = [
    "GIT_GLOBAL_OPTIONS",
    "GitContext",
    "config_target",
    "config_with",
    "existing_text",
    "git_option_commands",
    "global_options",
    "new_repository",
    "relative_to",
    "setting",
]
