"""Commands a program runs from its environment or from a configuration file it is pointed at.

``GIT_EXTERNAL_DIFF='sh -c "cp .env /tmp/x"' git diff``, ``GIT_PAGER=…``, ``GIT_SSH_COMMAND=…``,
``EDITOR=…``, ``BASH_ENV=…``: the value of such a variable is a command the program runs, so it
is read as a script. ``GIT_CONFIG_GLOBAL=x.cfg git status``, ``HOME=dir``/``XDG_CONFIG_HOME=dir``
and ``git config include.path ../x.cfg`` point git at a configuration file; its command-running
keys (``core.fsmonitor``, ``core.pager``, ``alias.x = !cmd``, filters, ``core.hooksPath`` …:
:func:`~.embedded.git_config_value`) are read when the file's text is known (a workspace file,
or one written earlier in the same command).

Configuration given in the environment is read as ``git -c key=value`` is:
``GIT_CONFIG_COUNT=N`` with ``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>`` (paired for
``n < N``; a value whose key cannot be known is read as a script), and
``GIT_CONFIG_PARAMETERS`` (git's own ``'key'='value'`` list). ``GIT_DIR=dir`` runs the hooks and
reads the configuration of another repository; ``GIT_TEMPLATE_DIR=dir`` gives ``git init`` the
hooks of ``dir/hooks``; ``GIT_EXEC_PATH`` makes git run its programs from a folder (unknown).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from typing import Final

from pytest_harness_audit.policy.shell.embedded import (
    GIT_ALWAYS_NETWORK,
    GIT_NETWORK,
    Runner,
    git_config_value,
    git_hooks,
    git_key_runs,
    git_template,
)
from pytest_harness_audit.policy.shell.native_loaders import NATIVE_ENV, native_environment
from pytest_harness_audit.policy.shell.node_config import is_node_variable, node_environment
from pytest_harness_audit.policy.shell.subscript_code import PROMPT_VARIABLES, subscript_code

#: Variables whose value a program runs as a command.
COMMAND_ENV: Final = frozenset(
    {"GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "EDITOR", "VISUAL", "GIT_SEQUENCE_EDITOR",
     "GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS",
     "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "BASH_ENV", "ENV", "PROMPT_COMMAND",
     "SYSTEMD_PAGER", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH", "SVN_SSH", "SUDO_ASKPASS",
     "BROWSER", "FCEDIT", "SVN_EDITOR", "HGEDITOR", "GH_EDITOR", "GH_PAGER", "GH_BROWSER",
     "DELTA_PAGER", "BAT_PAGER"}
)  # fmt: skip
#: Variables a program takes options from, as if given first (``TAR_OPTIONS``), by program
#: (``make`` without its makefile: only the text of the options counts, not its recipes).
OPTION_ENV = {
    "TAR_OPTIONS": "tar", "MAKEFLAGS": "make -f /dev/null", "GNUMAKEFLAGS": "make -f /dev/null",
    "MFLAGS": "make -f /dev/null", "ZIPOPT": "zip", "LESS": "less", "MANOPT": "man",
}  # fmt: skip
#: Variables naming a configuration file git reads.
CONFIG_FILE_ENV: Final = frozenset({"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"})
#: Variables naming a folder git takes configuration, hooks or programs from.
FOLDER_ENV: Final = frozenset(
    {"GIT_DIR", "GIT_COMMON_DIR", "GIT_TEMPLATE_DIR", "GIT_EXEC_PATH", "HOME", "XDG_CONFIG_HOME"}
)
_CONFIG_PREFIX: Final = "GIT_CONFIG_"
_VALUE_PREFIX: Final = "GIT_CONFIG_VALUE_"
#: Keys git runs only when it talks to a remote (read for such a subcommand only: a repository
#: set up with ``core.sshCommand = ssh -i key`` is no network exchange on ``git status``).
_REMOTE_KEYS: Final = re.compile(
    r"core\.(?:sshcommand|gitproxy|askpass)|credential\.|remote\.|protocol\.|url\.|http\."
    r"|sendemail\."
)
_REMOTE_SUBCOMMANDS = GIT_NETWORK | GIT_ALWAYS_NETWORK | {"remote", "submodule"}
#: Most ``GIT_CONFIG_KEY_<n>`` pairs read.
_MAX_PAIRS: Final = 64
_INCLUDE: Final = re.compile(r"(?i)include\.path|includeif\..+\.path")
_SECTION: Final = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_ENTRY: Final = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
#: Most lines of a configuration file read, and how deep includes are followed.
_MAX_LINES: Final = 2048
_MAX_INCLUDES: Final = 8
_MAX_INCLUDED: Final = 32

FileText = Callable[[str], "str | None"]


def _option_words(value: str) -> str:
    """An options variable's words, quoted for a shell (split as the program splits them)."""
    try:
        words = shlex.split(value)
    except ValueError:
        words = value.split()
    return shlex.join(words)


def relevant(name: str) -> bool:
    """Whether a variable in a command's environment may make it run something."""
    return (
        name in COMMAND_ENV
        or name in PROMPT_VARIABLES
        or name in OPTION_ENV
        or name in CONFIG_FILE_ENV
        or name in FOLDER_ENV
        or name.startswith(_CONFIG_PREFIX)
        or is_node_variable(name)
        or name in NATIVE_ENV
        or name == "PERL5DB"
    )


def environment(
    variables: Mapping[str, str | None],
    inherited: Mapping[str, str],
    runner: Runner,
    file_text: FileText,
) -> None:
    """What a command given ``variables`` in its environment (``None``: a value not known), on
    top of the ``inherited`` ones (exported earlier), may run."""
    configured = False
    for name, value in variables.items():
        configured = configured or name.startswith(_CONFIG_PREFIX)
        if name in NATIVE_ENV:  # `LD_PRELOAD=./x.so ls`: native code (:mod:`.native_loaders`)
            native_environment(name, value, runner, file_text)
            continue
        if value is None:
            if is_node_variable(name):
                runner.unknown(f"node or npm runs a program named at run time ({name})")
            continue
        if name in ("BASH_ENV", "ENV"):  # a file the shell sources first, not a command
            if value.strip():
                runner.script(f". {shlex.quote(value)}")
        elif name in COMMAND_ENV:
            if value.strip():
                runner.script(value)
        elif name in OPTION_ENV:  # `TAR_OPTIONS=--to-command=CMD tar -x`: its options
            if value.strip():
                runner.script(f"{OPTION_ENV[name]} {_option_words(value)}")
        elif name in PROMPT_VARIABLES:  # `PS4='$(cat .env >&2)'; set -x`: expanded as a prompt
            for body in subscript_code([value], prompt=True):
                runner.script(body)
        elif name in CONFIG_FILE_ENV:
            if value:
                config_file(file_text(value), runner, file_text, 0, posixpath.dirname(value))
        elif name in FOLDER_ENV and value:
            _folder(name, value, runner, file_text)
        elif is_node_variable(name):
            node_environment(name, value, runner, file_text)
        elif name == "PERL5DB":  # `perl -d` runs it first: Perl code
            runner.script(f"perl -e {shlex.quote(value)}")
    if not configured:
        return
    seen: dict[str, str | None] = {
        k: v for k, v in inherited.items() if k.startswith(_CONFIG_PREFIX)
    }
    seen.update(variables)
    pairs, loose = environment_settings(seen)
    for key, value in pairs:
        if key.lower().startswith("alias.") and not value.startswith("!"):
            runner.script(f"git {value}")  # what a later `git NAME` runs
        elif not include(key, value, runner, file_text):
            git_config_value(key, value, runner)
    for name in loose:
        text = variables.get(name)
        if text is not None and text.strip():
            runner.script(text)  # its key is not known: the value may be a command
    for name, unknown in variables.items():
        if unknown is None and name.startswith(_VALUE_PREFIX):
            named = seen.get(f"GIT_CONFIG_KEY_{name[len(_VALUE_PREFIX) :]}")
            if named is None or git_key_runs(named):
                runner.unknown("git takes a configuration value built at run time")
    given = variables.get("GIT_CONFIG_PARAMETERS")
    if given is not None and parameters(given) is None:
        runner.unknown("git takes configuration it cannot read from GIT_CONFIG_PARAMETERS")


def _folder(name: str, value: str, runner: Runner, file_text: FileText) -> None:
    """``GIT_DIR``/``GIT_COMMON_DIR`` (another repository), ``GIT_TEMPLATE_DIR``,
    ``GIT_EXEC_PATH``, ``HOME`` and ``XDG_CONFIG_HOME`` (the global configuration)."""
    base = value.rstrip("/") or "/"
    if name in ("GIT_DIR", "GIT_COMMON_DIR"):
        repository(base, runner, file_text)
    elif name == "GIT_TEMPLATE_DIR":
        git_template(base, runner)
    elif name == "GIT_EXEC_PATH":
        runner.unknown("git runs its programs from a folder the command names (GIT_EXEC_PATH)")
    elif name == "HOME":
        config_file(file_text(f"{base}/.gitconfig"), runner, file_text, 0, base)
        config_file(file_text(f"{base}/.config/git/config"), runner, file_text, 0, base)
    else:
        config_file(file_text(f"{base}/git/config"), runner, file_text, 0, f"{base}/git")


def repository(git_dir: str, runner: Runner, file_text: FileText) -> None:
    """Git works in the repository ``git_dir`` (``GIT_DIR``, ``--git-dir``): its hooks run and
    its configuration holds keys git runs."""
    base = git_dir.rstrip("/") or "/"
    git_hooks(f"{base}/hooks", runner)
    config_file(file_text(f"{base}/config"), runner, file_text, 0, base)
    config_file(file_text(f"{base}/config.worktree"), runner, file_text, 0, base)


def environment_settings(
    variables: Mapping[str, str | None],
) -> tuple[list[tuple[str, str]], list[str]]:
    """The ``(key, value)`` settings git takes from ``variables``, and the names of the
    ``GIT_CONFIG_VALUE_<n>`` whose key cannot be known.

    A pair counts for ``n < GIT_CONFIG_COUNT``; with no count known (not given here: it may
    come from elsewhere, or not a number), every pair counts. A value with no key, a key not
    known, or ``n`` past the count is loose."""
    count_text = variables.get("GIT_CONFIG_COUNT")
    count = int(count_text) if count_text is not None and count_text.strip().isdigit() else None
    pairs: list[tuple[str, str]] = []
    loose: list[str] = []
    for name, value in variables.items():
        if not name.startswith(_VALUE_PREFIX) or value is None:
            continue
        number = name[len(_VALUE_PREFIX) :]
        key = variables.get(f"GIT_CONFIG_KEY_{number}")
        canonical = number.isdigit() and str(int(number)) == number
        if key and canonical and (count is None or int(number) < count):
            pairs.append((key.strip(), value))
        else:
            loose.append(name)
        if len(pairs) >= _MAX_PAIRS:
            break
    pairs.extend(parameters(variables.get("GIT_CONFIG_PARAMETERS") or "") or [])
    return pairs, loose


def parameters(text: str) -> list[tuple[str, str]] | None:
    """The settings of ``GIT_CONFIG_PARAMETERS`` (``'key'='value' 'key2=value2'``, as git
    quotes them); ``None`` when the text cannot be read."""
    if not text.strip():
        return []
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    return [
        (key.strip(), value) for key, _, value in (w.partition("=") for w in words[:_MAX_PAIRS])
    ]


def command_settings(variable: Callable[[str], str | None]) -> list[tuple[str, str]]:
    """The settings a ``git`` command takes from the variables it sees (``variable(name)``):
    ``GIT_CONFIG_COUNT`` with its pairs, and ``GIT_CONFIG_PARAMETERS``."""
    count = variable("GIT_CONFIG_COUNT")
    given = variable("GIT_CONFIG_PARAMETERS")
    if count is None and given is None:
        return []
    pairs: list[tuple[str, str]] = []
    if count is not None and count.strip().isdigit():
        for number in range(min(int(count), _MAX_PAIRS)):
            key, value = variable(f"GIT_CONFIG_KEY_{number}"), variable(f"{_VALUE_PREFIX}{number}")
            if key and value is not None:
                pairs.append((key.strip(), value))
    return pairs + (parameters(given or "") or [])


def include(key: str, value: str, runner: Runner, file_text: FileText) -> bool:
    """``include.path``/``includeIf.….path`` set on git's command line or in its configuration:
    read the included file (a relative path is taken from ``.git/``); whether ``key`` was one."""
    if not _INCLUDE.fullmatch(key):
        return False
    for path in _include_paths(value):
        config_file(file_text(path), runner, file_text, 0, posixpath.dirname(path))
    return True


def _include_paths(value: str, folder: str = "") -> list[str]:
    """Where an included file may be: from the folder of the file that includes it (as git
    takes a relative path), from ``.git/`` (a repository's configuration) and, as the reading
    writes ``$PWD`` as ``.``, from the workspace too."""
    if value.startswith(("/", "~")):
        return [value]
    found = [posixpath.normpath(posixpath.join(folder, value))] if folder else []
    found += [posixpath.normpath(f".git/{value}"), posixpath.normpath(value)]
    return list(dict.fromkeys(found))


def config_file(
    text: str | None, runner: Runner, file_text: FileText, depth: int, folder: str = ""
) -> None:
    """Read the command-running keys of a git configuration file's ``text`` (``folder``: the
    file's folder, where its relative includes are)."""
    for key, value in config_entries(text, file_text, depth, folder=folder):
        if key:
            git_config_value(key, value, runner)
        else:
            runner.unknown(value)


def repository_config(
    sub: str, folder: str, runner: Runner, file_text: FileText, levels: int = 0, home: str = ""
) -> None:
    """``git SUB`` run in ``folder`` (``-C``; ``""``: where the command is): the repository it
    works in may be another than the workspace's (a ``.git`` file saying ``gitdir: DIR``, a
    bare repository), whose hooks run; and the keys of its configuration that git runs by
    itself (hooks of ``core.hooksPath``, ``core.fsmonitor``, filters, included files …) may
    have been set by an earlier call whose folder or file has changed since. An alias is read
    only when ``SUB`` is that alias (a user's own ``!`` aliases are not run by other
    commands); keys used with a remote only for a subcommand that talks to one.

    As git does, the repository is looked for in ``folder`` and then in each folder above it,
    ``levels`` of them up to the workspace root (``cd sub && git commit`` works in the
    repository of the root); one found below the root is another repository, whose hooks are
    read too. A worktree's ``config.worktree`` is read beside ``config``; the global files are
    those of ``home`` (the workspace root, from where the command is)."""
    prefix = f"{folder.rstrip('/')}/" if folder else ""
    for level in range(levels + 1):
        top = prefix + "../" * level
        if _repository(top, sub, runner, file_text, nested=level < levels):
            break
    _repository_file(f"{home}.gitconfig", sub, prefix, runner, file_text)
    _repository_file(f"{home}.config/git/config", sub, prefix, runner, file_text)


def _repository(top: str, sub: str, runner: Runner, file_text: FileText, nested: bool) -> bool:
    """Read the repository whose working tree is ``top`` (``""`` or ending in ``/``), if there
    is one there; ``nested``: one below the workspace root (its ``.git/hooks`` are read)."""
    if (config := _repository_file(f"{top}.git/config", sub, top, runner, file_text)) is not None:
        # the usual layout: a `.git` folder (no `gitdir:` file, no bare repository)
        _worktree_file(config, f"{top}.git", sub, top, runner, file_text)
        if nested:
            git_hooks(f"{top}.git/hooks", runner, sub)
        if (common := (file_text(f"{top}.git/commondir") or "").strip()) and "\n" not in common:
            # git takes its configuration and hooks from there, in any repository
            shared = common if common.startswith("/") else f"{top}.git/{common}"
            git_hooks(f"{shared}/hooks", runner, sub)
            _repository_file(f"{shared}/config", sub, top, runner, file_text)
    elif (pointer := file_text(f"{top}.git")) is not None and pointer.startswith("gitdir:"):
        target = pointer[len("gitdir:") :].strip().split("\n", 1)[0]
        base = target if target.startswith("/") else top + target
        # a linked worktree's git directory names, in `commondir`, the repository's: its hooks
        # and configuration are git's there
        common = (file_text(f"{base}/commondir") or "").strip().split("\n", 1)[0]
        shared = (common if common.startswith("/") else f"{base}/{common}") if common else base
        git_hooks(f"{shared}/hooks", runner, sub)
        config = _repository_file(f"{shared}/config", sub, top, runner, file_text)
        _worktree_file(config, base, sub, top, runner, file_text)
    elif (file_text(f"{top}HEAD") or "").startswith("ref:"):  # a bare repository
        git_hooks(f"{top}hooks", runner, sub)
        _repository_file(f"{top}config", sub, top, runner, file_text)
    else:
        return False
    return True


def _worktree_file(
    config: str | None, git_dir: str, sub: str, top: str, runner: Runner, file_text: FileText
) -> None:
    """A worktree's ``config.worktree``, which git reads when ``extensions.worktreeConfig`` is
    set in ``config`` (looked for only then: one file fewer for every git command)."""
    if config is not None and "worktreeconfig" in config.lower():
        _repository_file(f"{git_dir}/config.worktree", sub, top, runner, file_text)


def _repository_file(
    path: str, sub: str, prefix: str, runner: Runner, file_text: FileText
) -> str | None:
    """Read the keys of the configuration file ``path`` that ``git SUB`` runs (see
    :func:`repository_config`; a relative hooks folder is in ``prefix``, the folder git runs
    in); its text (``None``: there is no such file)."""
    text = file_text(path)
    if text is None:
        return None
    remote = sub in _REMOTE_SUBCOMMANDS
    for key, value in config_entries(text, file_text, 0, folder=posixpath.dirname(path)):
        name = key.lower()
        if not name:
            runner.unknown(value)
        elif name == "core.hookspath":
            git_hooks(value if value.startswith("/") else prefix + value, runner, sub)
        elif not name.startswith("alias."):
            if remote or not _REMOTE_KEYS.match(name):
                git_config_value(key, value, runner)
        elif name == f"alias.{sub.lower()}":
            runner.script(value[1:] if value.startswith("!") else f"git {value}")
    return text


def config_entries(
    text: str | None,
    file_text: FileText,
    depth: int,
    seen: set[str] | None = None,
    folder: str = "",
) -> Iterator[tuple[str, str]]:
    """The ``(key, value)`` entries of a git configuration file's ``text`` and of the files it
    includes (each once, at most :data:`_MAX_INCLUDES` deep and :data:`_MAX_INCLUDED` files),
    read as git reads them (lines end at a newline only; a backslash at the end continues the
    line; a byte-order mark is no text). What is beyond the bounds yields the entry
    ``("", why)``: the reading says it cannot follow, rather than ignore it."""
    if text is None:
        return
    seen = set() if seen is None else seen
    lines = _config_lines(text)
    if len(lines) > _MAX_LINES:
        yield "", f"a git configuration file is longer than {_MAX_LINES} lines"
    section = ""
    for line in lines[:_MAX_LINES]:
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        header = _SECTION.match(stripped)
        if header is not None:
            name, sub, rest = header.groups()
            section = name.lower() + (f".{sub}" if sub is not None else "")
            stripped = rest.strip()
            if not stripped:
                continue
        entry = _ENTRY.match(stripped)
        if entry is None or not section:
            continue
        key, value = f"{section}.{entry.group(1)}", _unquote(entry.group(2) or "")
        if not _INCLUDE.fullmatch(key):
            yield key, value
            continue
        if depth >= _MAX_INCLUDES or len(seen) >= _MAX_INCLUDED:
            yield "", "git configuration files include others too deep or too many"
            continue
        for path in _include_paths(value, folder):
            if path not in seen:
                seen.add(path)
                yield from config_entries(
                    file_text(path), file_text, depth + 1, seen, posixpath.dirname(path)
                )


def _config_lines(text: str) -> list[str]:
    """The lines of a configuration file as git reads them: split at ``\\n`` only (not at a
    lone CR or a Unicode line separator), a trailing backslash joining the next line."""
    lines: list[str] = []
    pending = ""
    for line in text.removeprefix("\ufeff").split("\n"):
        line = pending + line.removesuffix("\r")
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:
            pending = line[:-1]
            continue
        pending = ""
        lines.append(line)
    if pending:
        lines.append(pending)
    return lines


def _unquote(value: str) -> str:
    """A configuration value without its comment and its double quotes."""
    out: list[str] = []
    quoted = False
    index = 0
    while index < len(value):
        char = value[index]
        if char == "\\" and index + 1 < len(value):
            out.append(value[index + 1])
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()


__all__ = [
    "COMMAND_ENV",
    "CONFIG_FILE_ENV",
    "FOLDER_ENV",
    "OPTION_ENV",
    "command_settings",
    "config_entries",
    "config_file",
    "environment",
    "environment_settings",
    "include",
    "parameters",
    "relevant",
    "repository",
    "repository_config",
]
