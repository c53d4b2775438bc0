"""Target extraction: what a tool call acts on (DESIGN §4 "Targets").

A shell command (a ``command`` or ``cmd`` parameter) is read as the shell would run it
(:mod:`pytest_harness_audit.policy.shell`): its targets are the command text itself, then

* each simple command it runs, after expansion, as its words joined by spaces
  (``rm${IFS}-rf${IFS}app`` → ``rm -rf app``; ``/usr/bin/env rm -rf b`` → ``rm -rf b`` too);
* every file it reads, writes, deletes or destroys, as a path (matched like a file tool's path,
  in normalised form and through workspace symlinks);
* one *effect target* per effect, ``<kind>:<path>`` — ``write:SOUL.md``, ``delete:notes.txt``
  (one file removed: plain ``rm``, ``unlink``, a filtered ``find -delete``), ``destroy:build``
  (recursive or irrecoverable: ``rm -r``/``-f``, ``shred``, ``truncate -s0``, ``git clean -f``,
  ``git reset --hard``, ``rsync --delete``, ``dd`` onto a disk, ``find -delete``);
  ``note:history`` (a whole-history diff, ``git log -p``), ``note:opaque-delete`` (a command
  name that cannot be known, given deletion flags) and ``unreadable:<why>`` (a command that
  could not be read within bounds, or a shell fed a script that is not in the text).

A policy matches effect targets with anchored regexes (``^destroy:``); the ``safety`` preset
does. Only the file paths — not the command text — decide whether a command is a
``credential_access``, so a commit message that mentions ``.env`` is no credential read.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any, Final

# The one display form of a target lives with the records; re-exported here.
from pytest_harness_audit.audit.records import DISPLAY_LIMIT as DISPLAY_LIMIT
from pytest_harness_audit.audit.records import display_target as display_target
from pytest_harness_audit.policy.param_targets import (
    CONTENT_KEYS,
    JOINED_KEYS,
    argv_command,
    as_dict,
    leaf_paths,
)
from pytest_harness_audit.policy.path_forms import (
    PROC_CWD,
    file_uri_path,
    normalise_path,
    plain_path,
    windows_form,
)
from pytest_harness_audit.policy.path_forms import resolved_path as resolved_path
from pytest_harness_audit.policy.search_targets import search_forms
from pytest_harness_audit.policy.sensitive import folded_credential_path, is_credential_folder
from pytest_harness_audit.policy.shell import read_command
from pytest_harness_audit.policy.shell.code import code_paths

#: Parameter names in precedence order for the primary target.
PRIMARY_KEYS: Final = ("file_path", "path", "pattern", "command", "url", "to")
#: Further parameters whose string values are targets too (MCP servers use these).
EXTRA_KEYS: Final = (
    "repo_path", "source", "destination", "notebook_path", "glob", "cmd",
    "revision", "target", "rev", "ref", "commit", "script", "code", "argv",
)  # fmt: skip
#: Parameters holding file paths (matched also in normalised form).
FILE_KEYS: Final = frozenset({"file_path", "path", "repo_path", "source", "destination",
                              "notebook_path", "paths"})  # fmt: skip
#: Parameters naming a git revision, which may name a file (``HEAD:.env``) as MCP git tools take.
REVISION_KEYS: Final = frozenset({"revision", "target", "rev", "ref", "commit"})


def primary_target(params: Mapping[str, Any]) -> str | None:
    """First present string of ``file_path > path > pattern > command > url``."""
    for key in PRIMARY_KEYS:
        value = params.get(key)
        if type(value) is str:
            return value
    return None


def command_paths(command: str) -> list[str]:
    """Paths named inside program text that is not read as shell (inline code)."""
    return code_paths(command)


_FILE: Final = 1
_COMMAND: Final = 2
_OTHER: Final = 3
_REVISION: Final = 4
_CODE: Final = 5  # program text a tool runs (`code`): read as `python3 -c CODE` is
_KEY_KINDS: Final = {
    "file_path": _FILE,
    "path": _FILE,
    "pattern": _OTHER,
    "command": _COMMAND,
    "url": _OTHER,
    "to": _OTHER,
    "repo_path": _FILE,
    "source": _FILE,
    "destination": _FILE,
    "notebook_path": _FILE,
    "glob": _OTHER,
    "cmd": _COMMAND,
    "revision": _REVISION,
    "target": _REVISION,
    "rev": _REVISION,
    "ref": _REVISION,
    "commit": _REVISION,
    "script": _COMMAND,
    "code": _CODE,
    "argv": _COMMAND,
}
#: The kind of each target parameter, by name (read by the engine's prefilter).
KEY_KINDS: Final = _KEY_KINDS
#: The kind of a file parameter (``file_path``, ``path`` …) in :data:`KEY_KINDS`.
FILE_KIND: Final = _FILE
#: The kind of a parameter whose value is its only target form (``pattern``, ``url``, ``to``).
OTHER_KIND: Final = _OTHER
#: The kinds of a parameter holding a shell command or program text (read on the full path).
COMMAND_KIND: Final = _COMMAND
CODE_KIND: Final = _CODE
_KEY_ORDER: Final = {key: index for index, key in enumerate((*PRIMARY_KEYS, *EXTRA_KEYS))}
_PATTERN_ORDER: Final = _KEY_ORDER["pattern"]
_WITH_ARGS: Final = {**_KEY_KINDS, "args": _COMMAND}  # a command's `args` are read with it


def all_targets(params: Mapping[str, Any], root: str | None = None) -> list[str]:
    """Every target of a call, de-duplicated in order: primary first, then the rest.

    File parameters add their normalised form; a command adds what its reading finds (see the
    module docstring); a revision (``HEAD:.env``) adds the path it names; a ``paths`` list adds
    each of its strings. A path naming a fixed-name credential file in another case (``.ENV``)
    adds its lower-case form; a ``file:`` URI or a Windows spelling adds the path it opens
    (:mod:`~.path_forms`); a search's glob or folder adds the sensitive files it names
    (:mod:`~.search_targets`). With a workspace ``root``, a file path that leads elsewhere
    through a symlink also adds where it leads (:func:`resolved_path`).
    """
    return call_targets(params, root)[0]


#: Parameters whose value, of any type, may add targets; content text never does.
_ACTIVE_KEYS: Final = JOINED_KEYS | {"paths", "args"}
_INERT_KEYS: Final = CONTENT_KEYS - _ACTIVE_KEYS


def lone_target(params: dict[str, Any]) -> tuple[str, int] | None:
    """The value and kind of the one target parameter of a call whose other parameters add no
    target (content text, numbers, flags: ``{"command": …, "description": …, "timeout": …}``,
    ``{"file_path": …, "offset": …}``); ``None`` for any other call. Not a ``pattern`` or
    ``glob``: a search's forms need the full derivation."""
    found: str | None = None
    found_kind = 0
    for key, value in params.items():
        kind = _KEY_KINDS.get(key, 0)
        if kind == 0:
            if key in _INERT_KEYS:
                continue
            kind_of_value = type(value)
            if (
                value is None
                or kind_of_value is int
                or kind_of_value is float
                or kind_of_value is bool
            ) and key not in _ACTIVE_KEYS:
                continue
            return None
        if found is not None or type(value) is not str or key == "pattern" or key == "glob":
            return None
        found = value
        found_kind = kind
    return None if found is None else (found, found_kind)


def call_targets(
    params: Mapping[str, Any], root: str | None = None
) -> tuple[list[str], list[str] | None]:
    """:func:`all_targets` and the file paths among them.

    The second item lists the paths a command's reading found (``None`` when the call has no
    command: then every target is a path or a pattern), for the ``credential_access`` check.
    """
    lone = lone_target(args := as_dict(params))  # (a dict: read directly when compiled)
    if lone is not None:  # the commonest shape: one file_path, path or command, and content
        value, kind = lone
        if kind in (_COMMAND, _CODE):
            targets = [value]
            files: list[str] = []
            text = value if kind == _COMMAND else f"python3 -c {shlex.quote(value)}"
            _add_command_forms(targets, files, text, root)
            return targets, files
        return lone_forms(value, kind, root), None
    return _derived_targets(args, root)


def lone_forms(value: str, kind: int, root: str | None) -> list[str]:
    """The targets (and :func:`prefilter_forms`) of a call whose one target parameter, of
    ``kind`` (no command), holds ``value``: the value and, for a path, its other forms."""
    forms = [value]
    if kind != _FILE:
        _add_other_forms(forms, value, kind, root)
    elif root or not plain_path(value):  # a symlink, a dot part, another spelling
        _add_path_forms(forms, value, root)
    return forms


def _derived_targets(
    params: dict[str, Any], root: str | None
) -> tuple[list[str], list[str] | None]:
    """:func:`call_targets` of any call, every parameter looked at (no shortcut)."""
    params = as_dict(params)  # (read through a lone wrapping object, as call_targets does)
    found: list[tuple[int, str, int]] = []
    paths: Any = None
    for key, value in params.items():
        kind = _KEY_KINDS.get(key)
        if kind is not None:
            if type(value) is str:
                if kind == _COMMAND:
                    value = _with_args(value, params.get("args"))
                found.append((_KEY_ORDER[key], value, kind))
            elif kind == _COMMAND and (argv := argv_command(value)) is not None:
                found.append((_KEY_ORDER[key], _with_args(argv, params.get("args")), kind))
        elif key == "paths":
            paths = value
    if "pattern" in params and (
        type(params.get("file_path")) is str or type(params.get("path")) is str
    ):
        # beside a path, `pattern` is what to search for (Grep) or a filter inside the path
        # (Glob), not a file the call acts on
        found = [item for item in found if item[0] != _PATTERN_ORDER]
    if len(found) > 1:
        found.sort()
    targets: list[str] = []
    command_files: list[str] | None = None
    for _, value, kind in found:
        if value not in targets:
            targets.append(value)
        if kind == _FILE:
            _add_path_forms(targets, value, root)
        elif kind in (_COMMAND, _CODE):
            if command_files is None:
                command_files = []
            text = value if kind == _COMMAND else f"python3 -c {shlex.quote(value)}"
            _add_command_forms(targets, command_files, text, root)
        else:
            _add_other_forms(targets, value, kind, root)
    for value in _search_forms(params, root):
        if value not in targets:
            targets.append(value)
    present = set(targets)
    if isinstance(paths, (list, tuple)):
        _merge_path_forms(targets, present, [v for v in paths if type(v) is str], root)
    args = params.get("args")
    if command_files is None and isinstance(args, (list, tuple)):
        # an MCP git tool's arguments (`["HEAD:.env"]`)
        named = [v.partition(":")[2] for v in args if type(v) is str and ":" in v and v[:1] != "-"]
        _merge_path_forms(targets, present, named, root)
    # any other parameter's path-like strings, after (policy/param_targets.py)
    leaves = leaf_paths(params, _KEY_KINDS if command_files is None else _WITH_ARGS)
    _merge_path_forms(targets, present, leaves, root, command_files)
    return targets, command_files


def _merge_path_forms(
    targets: list[str],
    present: set[str],
    values: list[str],
    root: str | None,
    files: list[str] | None = None,
) -> None:
    """Append each of ``values`` not among the targets yet (``present``: their set) and its
    forms (:func:`_add_path_forms`), in one pass: thousands of paths stay linear. ``files``
    (a command's) takes each value appended."""
    for value in values:
        if value in present:
            continue
        forms = [value]
        _add_path_forms(forms, value, root)
        for form in forms:
            if form not in present:
                present.add(form)
                targets.append(form)
        if files is not None:
            files.append(value)


def _add_other_forms(targets: list[str], value: str, kind: int, root: str | None) -> None:
    """Append the path a revision (``HEAD:.env``) or a ``file:`` URL or recipient names."""
    if kind == _REVISION:
        if ":" in value:
            _add_path_forms(targets, value.partition(":")[2], root)
    elif value[:5].lower() == "file:":  # a `url` or `to` that is a local file
        _add_path_forms(targets, value, root)


def prefilter_forms(params: Mapping[str, Any], root: str | None = None) -> list[str] | None:
    """The text a prefilter scans for a call without a command: every string that can be a
    target of :func:`call_targets` (a superset: a ``pattern`` beside a path is kept) — each
    target parameter's value and the forms of each path. ``None`` for a call whose targets need
    the full derivation (a command, a ``paths`` or an ``args`` list)."""
    return screen_forms(params, root)[0]


def screen_forms(params: Mapping[str, Any], root: str | None) -> tuple[list[str] | None, bool]:
    """:func:`prefilter_forms`, and whether they are exactly the call's :func:`call_targets`
    (one target parameter, no command): then the full path can take them as they are."""
    lone = lone_target(args := as_dict(params))
    if lone is None:
        return derived_forms(args, root), False
    value, kind = lone
    return (None, False) if kind in (_COMMAND, _CODE) else (lone_forms(value, kind, root), True)


def derived_forms(params: dict[str, Any], root: str | None) -> list[str] | None:
    """:func:`prefilter_forms` of any call, every parameter looked at (no shortcut)."""
    params = as_dict(params)
    forms = []
    for key, value in params.items():
        kind = _KEY_KINDS.get(key)
        if kind is None:
            if key == "paths" or key == "args":
                return None
        elif type(value) is str:
            if kind in (_COMMAND, _CODE):
                return None
            forms.append(value)
            if kind == _FILE:
                _add_path_forms(forms, value, root)
            elif kind == _REVISION and ":" in value:
                _add_path_forms(forms, value.partition(":")[2], root)
            elif value[:5].lower() == "file:":
                _add_path_forms(forms, value, root)
        elif kind == _COMMAND and argv_command(value) is not None:
            return None
    forms.extend(_search_forms(params, root))
    for value in leaf_paths(params, _KEY_KINDS):
        each = [value]  # (its own list: checking every form against all of them is quadratic)
        _add_path_forms(each, value, root)
        forms.extend(each)
    return forms


def _search_forms(params: dict[str, Any], root: str | None) -> list[str]:
    """The sensitive files a search's glob or folder names (:mod:`.search_targets`)."""
    if "pattern" not in params and "glob" not in params:
        return []
    path = params.get("path")
    if (
        root is None
        and type(params.get("glob")) is not str
        and (type(path) is not str or (plain_path(path) and not is_credential_folder(path)))
    ):
        return []  # no file filter, and no folder whose files are named (search_forms)
    folders: list[str] = []
    if type(path) is str:
        folders = [path, normalise_path(path, root)]
        resolved = resolved_path(path, root) if root else None
        if resolved is not None:
            folders.append(resolved)
    forms = search_forms(params, dict.fromkeys(folders))
    glob = params.get("glob")
    if root and type(glob) is str and not any(c in glob for c in "*?[{"):
        # a file filter naming one file (`notes.txt`): where a workspace symlink leads it
        leads = resolved_path(f"{path}/{glob}" if type(path) is str else glob, root)
        if leads is not None:
            forms.append(leads)
    return forms


#: The types of an MCP shell tool's ``args`` items written as words (a number, a flag: text).
_ARG_TYPES: Final = (str, int, float, bool)


def _with_args(command: str, args: Any) -> str:
    """``command`` with an MCP shell tool's ``args`` list appended, quoted for the shell."""
    if isinstance(args, (list, tuple)) and args and all(type(a) in _ARG_TYPES for a in args):
        return " ".join([command, *(shlex.quote(str(a)) for a in args)])
    return command


def _add_command_forms(
    targets: list[str], files: list[str], command: str, root: str | None
) -> None:
    """Append what a shell command does: its simple commands, the paths it acts on and its
    effect targets (module docstring); record the paths in ``files``."""
    reading = read_command(command, root)
    present = set(targets)
    for argv in reading.commands:
        text = " ".join(argv)
        if text not in present:
            present.add(text)
            targets.append(text)
    writes, deletes, destroys = reading.writes, reading.deletes, reading.destroys
    unreadable = reading.unreadable
    if writes or deletes or destroys or unreadable is not None:
        paths = [*reading.reads, *writes, *deletes, *destroys]
        if unreadable is not None:
            paths.extend(command_paths(command[:UNREADABLE_SCAN]))
    else:
        paths = reading.reads
    if paths:
        before = len(targets)
        _add_many_paths(targets, paths, root, present)
        files.extend(paths)
        files.extend(targets[before:])
    if not (writes or deletes or destroys or reading.notes or unreadable is not None):
        return  # the common case: a command that only reads
    effects: list[str] = []
    for kind, found in (
        ("write", reading.writes),
        ("delete", reading.deletes),
        ("destroy", reading.destroys),
    ):
        for path in found:
            effects.append(f"{kind}:{path}")
            normal = normalise_path(path, root) if path else path
            if normal != path:
                effects.append(f"{kind}:{normal}")
            if root and path and kind == "write":
                resolved = resolved_path(path, root)
                if resolved is not None:
                    effects.append(f"{kind}:{resolved}")
    effects.extend(f"note:{note}" for note in reading.notes)
    if reading.unreadable is not None:
        effects.append(f"unreadable:{reading.unreadable}")
    targets.extend(effect for effect in dict.fromkeys(effects) if effect not in present)


_FEW_PATHS: Final = 16
#: Most paths of one call followed through workspace symlinks (a system call each): more than a
#: command the shell reading can read names (past about a thousand words it is unreadable), so a
#: symlink to a credential file is never pushed out of reach by harmless names before it.
RESOLVE_LIMIT: Final = 4096
#: Most characters of an unreadable command searched for path-like words.
UNREADABLE_SCAN: Final = 16_384


def _add_many_paths(
    targets: list[str], paths: list[str], root: str | None, present: set[str]
) -> None:
    """Append ``paths`` and their forms in one pass with a set (``present``: the set of
    ``targets``, left as it is): thousands of paths in a hostile command stay linear."""
    forms: dict[str, None] = {}  # (in order, each once)
    resolvable = RESOLVE_LIMIT
    for path in dict.fromkeys(paths):
        forms.setdefault(path)
        dotted = "/." in path or path[:1] == "."
        if dotted or root or "//" in path:
            normal = normalise_path(path, root)
            forms.setdefault(normal)
            if dotted:
                folded = folded_credential_path(normal)
                if folded is not None:
                    forms.setdefault(folded)
        if root and resolvable > 0:  # a system call each: the first few thousand paths
            resolvable -= 1
            resolved = resolved_path(path, root)
            if resolved is not None:
                forms.setdefault(resolved)
    for form in forms:
        if form not in present:
            targets.append(form)


def _add_path_forms(targets: list[str], path: str, root: str | None) -> None:
    """Append the normalised form of ``path``, its case-folded form when it names a credential
    file in another case, its other spellings (:mod:`pytest_harness_audit.policy.path_forms`)
    and, with a root, where a symlink leads it."""
    if plain_path(path) and not root:
        if path not in targets:  # a revision's path (`HEAD:id_rsa`) is not in them yet
            targets.append(path)
        return
    local = file_uri_path(path)
    if local is not None:  # `file:///w/.env`: the path it opens, with all of that path's forms
        if local not in targets:
            targets.append(local)
        _add_path_forms(targets, local, root)
    dotted = "/." in path or path[:1] == "."  # `./`, `../`, a dotfile or a dot-directory
    normal = normalise_path(path, root)
    if normal not in targets:
        targets.append(normal)
    for form in (normal, windows_form(normal)):
        if form is None:
            continue
        if form is not normal:
            form = normalise_path(form, root)
            if form not in targets:
                targets.append(form)
        # a credential file in another case is a dotfile, in a dot-directory or an `id_*` key
        if dotted or "_" in form:
            folded = folded_credential_path(form)
            if folded is not None and folded not in targets:
                targets.append(folded)
    if root:
        resolved = resolved_path(path, root)
        if resolved is not None and resolved not in targets:
            targets.append(resolved)
        if path[:6] == "/proc/" and (cwd := PROC_CWD.match(path)) is not None:
            # an agent's tool runs in the workspace: its `/proc/self/cwd` is the root
            inside = path[cwd.end() :].lstrip("/") or "."
            for form in (normalise_path(inside, root), resolved_path(inside, root)):
                if form is not None and form not in targets:
                    targets.append(form)
