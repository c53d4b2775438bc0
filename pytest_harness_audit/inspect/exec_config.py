"""Files that run code, or switch the audit off, by being written: which they are, and what of
them counts as a change.

*Exec-config files* are the files a tool runs code from by itself, without the agent naming
that code again: git's hooks (``.git/hooks/<name>``, not the ``*.sample`` files git never
runs), git's configuration (``.git/config``, ``.git/config.worktree``, and ``.gitconfig``,
``.config/git/config`` in the workspace: only its *command keys* count, see
:func:`git_config_fingerprint`), ``.git/commondir`` (which moves git's configuration and hooks
to the folder it names) and Python's start-up files in a
``site-packages`` directory (``*.pth``, ``sitecustomize.py``, ``usercustomize.py``). The
start-up files of ``curl`` and ``wget`` (``.curlrc``, ``.config/curlrc``, ``.wgetrc``,
``.config/wget/wgetrc``) count too: their options (``upload-file = .env``, ``post-file``) make a
later plain ``curl URL`` send a file its text does not name.

*Host settings* are the files a coding agent's host reads its hooks and servers from: Claude
Code's ``.claude/settings.json`` and ``.claude/settings.local.json`` (which ``harness-audit hook
install`` writes) and the project's ``.mcp.json``. Writing them can switch the audit hooks off.
So do the host's *definitions*, any file under ``.claude/agents/``, ``.claude/commands/`` or
``.claude/skills/``: the host loads them as subagents, slash commands and skills, whose front
matter registers hooks, pre-approves tools (``allowed-tools``) or sets a subagent's
``permissionMode``, and whose ``!``-quoted commands the host runs itself when the skill is
invoked, outside every tool call (and so outside the gate). So do its hook scripts, any file
under ``.claude/hooks/`` (where the host's documentation puts the programs its hooks run): the
host runs them itself after a call. Other files the settings name as programs to run are
protected by name (:mod:`.host_programs`).

Both are protected files of a workspace snapshot (:class:`~.effects.Protection`): a call that
creates, changes or hard-links one is a ``protected_file_changed`` effect. The repository
configuration is the exception to "any change": ``git config user.name``, ``git remote add``
or ``git checkout -b`` rewrite it legitimately, so it counts as changed only when its command
keys changed.

A call whose whole text is a hook manager's install command (``pre-commit install``,
``lefthook install``, ``husky`` …) is expected to create hooks: those hooks are listed as
``installedHooks`` rather than as protected changes (the text rule ``warn-hook-install`` of the
safety preset warns about the call). A package installer (``pip install``, ``uv sync`` …)
likewise writes ``*.pth`` files: listed as ``installedStartup``.
"""

from __future__ import annotations

import hashlib
import json
import re

from pytest_harness_audit.policy.git_command_keys import ALIAS_RUNS, COMMAND_KEYS

#: ``.git/hooks/<name>`` (any ``.git`` directory), except git's ``*.sample`` files; and
#: ``.git/hooks`` itself (a snapshot keeps it as a file only when it is a symbolic link).
_HOOK = re.compile(r"(?:^|.*/)\.git/hooks(?:/(?![^/]*\.sample$)[^/]+)?")
#: git's configuration files: a repository's, and the global ones (the harness runs commands
#: with the workspace as HOME, so ``~/.gitconfig`` can be a workspace file).
_GIT_CONFIG = re.compile(
    r"(?:^|.*/)(?:\.git/config(?:\.worktree)?|\.gitconfig|\.config/git/config)"
)
#: ``.git/commondir``: git takes the configuration, hooks and refs from the folder it names (in
#: any repository, not only a linked worktree's), so writing it plants both.
_GIT_REDIRECT = re.compile(r"(?:^|.*/)\.git/commondir")
#: Python's start-up files, in a ``site-packages`` directory.
_STARTUP = re.compile(r"(?:^|.*/)site-packages/(?:[^/]+\.pth|sitecustomize\.py|usercustomize\.py)")
#: The start-up files of ``curl`` (``$HOME``/``$CURL_HOME``/``$XDG_CONFIG_HOME`` ``.curlrc``,
#: ``$HOME/.config/curlrc``, Windows ``_curlrc``) and ``wget``/``wget2``.
_CLIENT_RC = re.compile(r"(?:^|.*/)(?:[._]curlrc|\.config/curlrc|\.wgetrc|\.config/wget/wgetrc)")
_PTH = re.compile(r"(?:^|.*/)site-packages/[^/]+\.pth")
#: The coding agent host's own settings (hooks, MCP servers).
_HOST_SETTINGS = re.compile(r"(?:^|.*/)(?:\.claude/settings(?:\.local)?\.json|\.mcp\.json)")
#: The host's settings files that hold ``permissions`` (not ``.mcp.json``).
_PERMISSION_SETTINGS = re.compile(r"(?:^|.*/)\.claude/settings(?:\.local)?\.json")

#: Any of the above, as one search: the same names, anchored at a path part.
_ANY_KIND = re.compile(
    r"(?:^|/)(?:\.git/hooks(?:/(?![^/]*\.sample$)[^/]+)?"
    r"|\.git/config(?:\.worktree)?|\.git/commondir|\.gitconfig|\.config/git/config"
    r"|site-packages/(?:[^/]+\.pth|sitecustomize\.py|usercustomize\.py)"
    r"|\.claude/settings(?:\.local)?\.json|\.mcp\.json"
    r"|\.claude/(?:agents|commands|skills|hooks)/.+"
    r"|[._]curlrc|\.config/curlrc|\.wgetrc|\.config/wget/wgetrc)$"
)
#: A hook manager's install command, the whole text of the call (one simple command).
_HOOK_INSTALL = re.compile(
    r"\s*(?:(?:npx|pnpm(?:\s+exec)?|yarn|bunx|uvx|pipx\s+run)\s+)?"
    r"(?:pre-commit\s+install(?:-hooks)?|prek\s+install|lefthook\s+install|husky(?:\s+install)?"
    r"|overcommit\s+--(?:un)?install|git\s+lfs\s+(?:un)?install|(?:pre-commit|prek|lefthook)\s+uninstall)"
    r"(?:\s+[-\w./=:]+)*\s*"
)
#: A package installer command, the whole text of the call (one simple command).
_PACKAGE_INSTALL = re.compile(
    r"\s*(?:\S*/)?(?:(?:python[0-9.]*\s+-m\s+)?pip[0-9.]*\s+install|uv\s+(?:pip\s+install|sync|add)"
    r"|poetry\s+(?:install|add)|pipenv\s+(?:install|sync)|pdm\s+(?:install|add|sync)"
    r"|python[0-9.]*\s+-m\s+venv|virtualenv|conda\s+(?:install|create))"
    r"(?:\s+[-\w./=:<>\[\],~!@+]+)*\s*"
)


def is_hook(relative: str) -> bool:
    """Whether ``relative`` is a git hook git would run (not a ``*.sample``)."""
    return _HOOK.fullmatch(relative) is not None


def is_git_config(relative: str) -> bool:
    """Whether ``relative`` is a git configuration file (a repository's or a global one)."""
    return _GIT_CONFIG.fullmatch(relative) is not None


def is_host_settings(relative: str) -> bool:
    """Whether ``relative`` is the coding agent host's settings (``.claude/settings*.json``,
    ``.mcp.json``)."""
    return _HOST_SETTINGS.fullmatch(relative) is not None


def is_exec_config(relative: str) -> bool:
    """Whether ``relative`` is a file git or Python runs code from, or a ``curl``/``wget``
    start-up file (see the module doc)."""
    return (
        is_hook(relative)
        or is_git_config(relative)
        or _GIT_REDIRECT.fullmatch(relative) is not None
        or _STARTUP.fullmatch(relative) is not None
        or _CLIENT_RC.fullmatch(relative) is not None
    )


def is_protected_by_kind(relative: str) -> bool:
    """Whether ``relative`` is protected as an exec-config file or the host's settings."""
    # a snapshot asks this of every file it walks: most names contain none of these
    if (
        "git" not in relative
        and "json" not in relative
        and "site-packages" not in relative
        and ".claude/" not in relative
        and "rc" not in relative.rsplit("/", 1)[-1]
    ):
        return False
    return _ANY_KIND.search(relative) is not None


def installs_hooks(command: str) -> bool:
    """Whether ``command`` is nothing but a hook manager's install command."""
    return _HOOK_INSTALL.fullmatch(command) is not None


def installs_packages(command: str) -> bool:
    """Whether ``command`` is nothing but a package installer's command."""
    return _PACKAGE_INSTALL.fullmatch(command) is not None


def expected_by(command: str, path: str) -> bool:
    """Whether the call ``command`` is expected to create or change ``path`` (a hook by a hook
    manager's install, a ``*.pth`` file by a package installer)."""
    if is_hook(path) or is_git_config(path):  # husky sets core.hooksPath, git lfs its filters
        return installs_hooks(command)
    if _PTH.fullmatch(path) is not None:
        return installs_packages(command)
    return False


# -- git configuration -------------------------------------------------------------------------

#: Fingerprints of configuration texts already read (texts up to :data:`_CACHED_BYTES`, at most
#: :data:`_CACHED_TEXTS` of them).
_FINGERPRINTS: dict[bytes, bytes] = {}
_CACHED_BYTES = 65_536
_CACHED_TEXTS = 256
_SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)')
_ENTRY = re.compile(r"([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?")


def git_config_entries(text: str) -> list[str]:
    """The command entries of a git configuration text (see
    :data:`~pytest_harness_audit.policy.git_command_keys.COMMAND_KEYS`), as ``key=value`` lines
    in file order; a line that cannot be read is kept whole (so a form the
    reading does not know counts as a change rather than as nothing)."""
    entries: list[str] = []
    section = ""
    pending = ""
    for raw in text.splitlines():
        line = pending + raw
        pending = ""
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        stripped = line.strip()
        if stripped.startswith("["):
            header = _SECTION.match(stripped)
            if header is None:
                entries.append(f"?{stripped}")
                continue
            name, sub, rest = header.groups()
            section = name.lower() + (f".{sub.lower()}" if sub is not None else "")
            stripped = rest.strip()
        if not stripped or stripped[0] in "#;":
            continue
        entry = _ENTRY.fullmatch(stripped)
        if entry is None or not section:
            entries.append(f"?{section}:{stripped}")
            continue
        key = f"{section}.{entry.group(1).lower()}"
        value = (entry.group(2) or "").strip()
        if COMMAND_KEYS.fullmatch(key) and (not key.startswith("alias.") or _runs(value)):
            entries.append(f"{key}={value}")
    return entries


def _runs(alias: str) -> bool:
    return ALIAS_RUNS.search(alias) is not None


def git_config_fingerprint(data: bytes) -> bytes:
    """A digest of a git configuration's command entries: unchanged by ``git config
    user.name``, a new remote or branch, changed by a new ``core.fsmonitor``, hook path, alias,
    filter, include … A text read before is not read again (snapshots before and after every
    call fingerprint the same few files)."""
    known = _FINGERPRINTS.get(data)
    if known is not None:
        return known
    lines = git_config_entries(data.decode("utf-8", "surrogateescape"))
    joined = "\n".join(lines).encode("utf-8", "surrogateescape")
    fingerprint = hashlib.blake2b(joined, digest_size=16).digest()
    if len(data) <= _CACHED_BYTES:
        if len(_FINGERPRINTS) >= _CACHED_TEXTS:
            _FINGERPRINTS.clear()
        _FINGERPRINTS[data] = fingerprint
    return fingerprint


#: The fingerprint of a configuration without command entries.
NO_COMMANDS = git_config_fingerprint(b"")


def holds_permissions(relative: str) -> bool:
    """Whether ``relative`` is a host settings file with ``permissions`` (``.claude/settings.json``,
    ``.claude/settings.local.json``): the host itself writes an ``allow`` rule there when the
    user allows a tool for good at its prompt."""
    return _PERMISSION_SETTINGS.fullmatch(relative) is not None


def settings_fingerprint(data: bytes) -> bytes:
    """A digest of a host settings file without its ``permissions`` (judged apart, by what a
    change adds: the hook door's :mod:`~pytest_harness_audit.doors.hook_host_permissions`).
    A file that is not a JSON object is digested whole."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        document = None
    if not isinstance(document, dict):
        return hashlib.blake2b(b"raw\0" + data, digest_size=16).digest()
    rest = {key: value for key, value in document.items() if key != "permissions"}
    text = json.dumps(rest, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


#: The fingerprint of host settings with nothing but ``permissions`` (or nothing at all).
NO_SETTINGS = settings_fingerprint(b"{}")
