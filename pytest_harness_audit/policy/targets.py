"""Target extraction: what a tool call acts on (DESIGN §4 "Targets").

A shell command is judged by its text, so the extraction adds what the shell would make of it
before it runs: the text after quote removal and the paths a glob word expands to. Variables,
brace expansion and command substitution are not evaluated.
"""

from __future__ import annotations

import fnmatch
import functools
import glob
import itertools
import os
import posixpath
import re
from collections.abc import Iterator, Mapping
from typing import Any

from pytest_harness_audit.policy.sensitive import folded_credential_path

#: Parameter names in precedence order for the primary target.
PRIMARY_KEYS = ("file_path", "path", "pattern", "command", "url", "to")
#: Further parameters whose string values are targets too (MCP servers use these).
EXTRA_KEYS = ("repo_path", "source", "destination", "notebook_path", "glob")
#: Parameters holding file paths (matched also in normalised form).
FILE_KEYS = frozenset(
    {"file_path", "path", "repo_path", "source", "destination", "notebook_path", "paths"}
)
DISPLAY_LIMIT = 80

# A token inside a shell command that names a file: absolute, ./ ../ ~/ ~user/ $VAR/ ${VAR}/
# relative, or a dotfile / a relative path with a slash. Quotes and shell punctuation are not
# part of it; `@` starts one too (`curl -d @/p/.env`).
_PATH_CHAR = r"""[^\s'"`;|&<>()$]"""
_SHELL_PATH = re.compile(
    r"""(?:^|[\s=<>|&;(`'"@])("""
    rf"""(?:~[\w.-]*|\.{{1,2}}|\$\{{?[A-Za-z_]\w*\}}?)?/{_PATH_CHAR}*"""
    rf"""|\.[^\s'"`;|&<>()$/]+(?:/{_PATH_CHAR}*)?"""
    rf"""|[A-Za-z0-9_][^\s'"`;|&<>()$=]*/{_PATH_CHAR}*"""
    # a bare file name with an extension (`cat credentials.json`)
    r"""|[A-Za-z0-9_][\w-]*(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}(?=$|[\s'"`;|&<>)])"""
    r")"
)
_SYSTEM_PREFIXES = ("/dev/", "/proc/", "/sys/")

# Shell quoting: a single-quoted string, a double-quoted one (backslash escapes inside), or one
# backslash-escaped character. Each alternative starts with its own character, so a scan is linear.
_QUOTING = re.compile(r"""'[^']*'|"[^"\\]*(?:\\.[^"\\]*)*"|\\.""", re.DOTALL)
# With every quoting replaced by NUL: quoting glued to a word character or to further quoting.
# Whitespace, shell punctuation and `=` end a word.
# (The NUL comes first so that a search skips to it at once.)
_GLUED = re.compile("\x00(?:(?<=[^\\s;&|<>()`=]\x00)|(?=[^\\s;&|<>()`]))")

# An unquoted shell word with a glob character (`.e*`, `./.en?`, `$HOME/.e*`), standing alone
# between separators. Flags (`--include=*.py`) and quoted words (`'*.pyc'`) are not expanded by
# the shell's pathname expansion, so they are left out.
_GLOB_WORD = re.compile(
    r"""(?<![^\s;&|<>(])(?!-)([^\s'"`;&|<>()*?\[]*[*?\[][^\s'"`;&|<>()]*)(?![^\s;&|<>)])"""
)
# A glob in a dot-something (`.e*`, `./.en?`) or inside a credential directory (`~/.ssh/*`).
# The run after the dot stops at a separator or a slash, so a hostile command scans in linear time.
_DOT_GLOB = re.compile(r"(?:^|[\s;&|<>(/])\.(?:ssh/|aws/|docker/|kube/)?[^\s;&|<>()/]*[*?\[]")
_GLOB_CHARS = re.compile(r"[*?\[]")
#: Most paths one glob word adds as targets (a workspace listing stays bounded).
GLOB_MATCH_LIMIT = 64
#: Most glob words of one command expanded against the workspace (the rest are judged by name).
GLOB_LISTING_LIMIT = 16
_GLOB_MAX_WILD_PARTS = 2  # `*/.env`, `*/*.py`: one directory level of listing at most
# Without a workspace to list, a glob is judged by the credential files it could name: dotfiles
# (only a glob that spells out the dot and a further character: `.e*`, not `.*`) and the files in
# credential directories.
_CREDENTIAL_DOTFILES = (".env", ".netrc", ".pgpass", ".npmrc", ".pypirc", ".my.cnf")
_CREDENTIAL_DIRS = {
    ".ssh": ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "config"),
    ".aws": ("credentials", "config"),
    ".docker": ("config.json",),
    ".kube": ("config",),
}


def display_target(target: str | None) -> str | None:
    """The display form: the first 80 characters and ``…`` when longer. Never used to match."""
    if target is None or len(target) <= DISPLAY_LIMIT:
        return target
    return target[:DISPLAY_LIMIT] + "…"


def primary_target(params: Mapping[str, Any]) -> str | None:
    """First present string of ``file_path > path > pattern > command > url``."""
    for key in PRIMARY_KEYS:
        value = params.get(key)
        if type(value) is str:
            return value
    return None


def normalise_path(path: str, root: str | None) -> str:
    """Lexically normalise a path (``a/../.env`` → ``.env``), relative to ``root`` inside it.

    ``root`` is an absolute directory (a trailing slash is tolerated).
    """
    if "/." in path or "//" in path or path[:1] == ".":
        path = posixpath.normpath(path)
        # normpath keeps a leading "//" (POSIX); matching wants one canonical form
        if path.startswith("//"):
            path = path[1:]
    if root and path.startswith(root):
        rest = path[len(root) :]
        if not rest:
            return "."
        if rest[0] == "/" or root[-1] == "/":  # tolerate a root given with a trailing slash
            return rest.lstrip("/") or "."
    return path


@functools.lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    try:
        return os.path.realpath(root)
    except (OSError, ValueError):
        return root


_PATH_MAX = 4096


def resolved_path(path: str, root: str) -> str | None:
    """Where ``path`` leads with every symlink followed, when that differs from its lexical form.

    ``path`` is taken relative to the workspace ``root`` (``~`` is the root, as for the tools);
    the answer is relative to the root when inside it, else absolute. ``None`` when nothing
    changes or the path cannot be resolved. A symlink in the workspace (``notes.txt`` → ``.env``)
    is so judged as the file it opens.
    """
    if path == "~" or path.startswith("~/"):
        path = path[2:]
    joined = path if path.startswith("/") else os.path.join(root, path)
    if len(joined) > _PATH_MAX:
        return None  # no system call opens it: nothing to resolve, and no time spent trying
    try:
        real = os.path.realpath(joined)
    except (OSError, ValueError):  # an embedded NUL byte, a name too long
        return None
    resolved = normalise_path(real, _real_root(root))
    return None if resolved == normalise_path(joined, root) else resolved


def command_paths(command: str) -> list[str]:
    """Paths named inside a shell command (absolute, ``./``, ``../``, ``~/``, dotfiles, a/b)."""
    found = []
    for token in _SHELL_PATH.findall(command):
        token = token.rstrip(".,:")
        if len(token) > 1 and not token.startswith(_SYSTEM_PREFIXES) and "://" not in token:
            found.append(token)
    return found


def shell_unquoted(command: str) -> str | None:
    """``command`` after shell quote removal, when quoting is glued inside a word.

    The shell joins ``.e""nv`` into ``.env`` and ``r"m"`` or ``'r'm`` into ``rm``; this is the
    text it runs. ``None`` when the command has no quoting glued to a word (a whole quoted word
    such as ``"fix bug"`` changes nothing a rule reads), the common case. Quotes are removed
    wherever they stand; an unbalanced quote is left as it is.
    """
    if "'" not in command and '"' not in command and "\\" not in command:
        return None
    if _GLUED.search(_QUOTING.sub("\x00", command)) is None:
        return None
    return _QUOTING.sub(_unquote, command)


def _unquote(match: re.Match[str]) -> str:
    text = match.group()
    return text[1:] if text[0] == "\\" else text[1:-1]


def glob_paths(command: str, root: str | None = None) -> list[str]:
    """Paths that the glob words of a shell command (``cat .e*``) may expand to.

    Every glob is judged by the credential files it could name (``.e*`` → ``.env``,
    ``~/.ssh/*`` → ``~/.ssh/id_rsa`` …; a dotfile glob must spell out the dot and one more
    character, so ``.*`` is not): the directory the shell runs in is not known, and no disk
    outside the workspace is listed. With a workspace ``root``, a relative glob (or an absolute
    one inside the workspace, with at most two wildcard parts and no ``..`` or ``$``) is also
    expanded against the workspace the way the shell does (``*`` skips dotfiles, ``**`` is
    ``*``), at most :data:`GLOB_MATCH_LIMIT` paths per word and :data:`GLOB_LISTING_LIMIT` words
    per command, so ``cat note*`` is judged as the files it reads.
    """
    if not root and _DOT_GLOB.search(command) is None:
        return []  # without a root only a dot-something glob can name a credential file
    found: list[str] = []
    seen: set[str] = set()
    listings = 0
    for match in _GLOB_WORD.finditer(command):
        word = match.group(1)
        if word in seen or word in ("[", "[[") or "://" in word:
            continue
        seen.add(word)
        if root and listings < GLOB_LISTING_LIMIT:
            relative = _inside_workspace(word, root)
            if relative is not None:
                listings += 1
                found.extend(itertools.islice(_expand(relative, root), GLOB_MATCH_LIMIT))
        found.extend(_credential_candidates(word))
    return found


def _inside_workspace(word: str, root: str) -> str | None:
    """``word`` relative to the workspace root, when it is a glob to list there."""
    if word[:1] == "~" or "$" in word:  # the shell's home or a variable: not the workspace
        return None
    if word.startswith("/"):
        if not word.startswith(root.rstrip("/") + "/"):
            return None
        word = word[len(root.rstrip("/")) + 1 :]
    parts = word.split("/")
    if ".." in parts or sum(1 for part in parts if _GLOB_CHARS.search(part)) > _GLOB_MAX_WILD_PARTS:
        return None
    return word


def _expand(pattern: str, root: str) -> Iterator[str]:
    try:
        yield from glob.iglob(pattern, root_dir=root)
    except (OSError, ValueError):  # an unreadable directory, an embedded NUL byte
        return


def _credential_candidates(word: str) -> list[str]:
    head, slash, last = word.rpartition("/")
    folder = head.rpartition("/")[2]
    names = _CREDENTIAL_DIRS.get(folder)
    if names is None:
        if len(last) < 2 or last[0] != "." or last[1] in "*?[":
            return []
        names = _CREDENTIAL_DOTFILES
    return [head + slash + name for name in names if fnmatch.fnmatchcase(name, last)]


_FILE = 1
_COMMAND = 2
_OTHER = 3
_KEY_KINDS = {
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
}
_KEY_ORDER = {key: index for index, key in enumerate((*PRIMARY_KEYS, *EXTRA_KEYS))}
_PATTERN_ORDER = _KEY_ORDER["pattern"]


def all_targets(params: Mapping[str, Any], root: str | None = None) -> list[str]:
    """Every target of a call, de-duplicated in order: primary first, then the rest.

    File parameters add their normalised form; a ``command`` adds the paths inside it, the text
    the shell runs after quote removal (:func:`shell_unquoted`) with its paths, and the paths its
    glob words may expand to (:func:`glob_paths`); a ``paths`` list adds each of its strings. A
    path naming a fixed-name credential file in another case (``.ENV``) adds its lower-case form.
    With a workspace ``root``, a file path that leads elsewhere through a symlink also adds where
    it leads (:func:`resolved_path`).
    """
    if len(params) == 1:  # the commonest shape: one file_path, path or command
        ((key, value),) = params.items()
        kind = _KEY_KINDS.get(key)
        if kind == _FILE and type(value) is str:
            if root:  # where a workspace symlink leads counts too
                forms = [value]
                _add_path_forms(forms, value, root)
                return forms
            if "/." in value or value[:1] == ".":  # a dot part: `./`, `../`, a dotfile
                normal = normalise_path(value, root)
                forms = [value] if normal == value else [value, normal]
                folded = folded_credential_path(normal)
                if folded is not None:
                    forms.append(folded)
                return forms
            if "//" in value:
                normal = normalise_path(value, root)
                return [value] if normal == value else [value, normal]
            return [value]  # no dot part, no doubled slash: already in normal form
    found: list[tuple[int, str, int]] = []
    paths: Any = None
    for key, value in params.items():
        kind = _KEY_KINDS.get(key)
        if kind is not None:
            if type(value) is str:
                found.append((_KEY_ORDER[key], value, kind))
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
    for _, value, kind in found:
        if value not in targets:
            targets.append(value)
        if kind == _FILE:
            _add_path_forms(targets, value, root)
        elif kind == _COMMAND:
            _add_command_forms(targets, value, root)
    if isinstance(paths, (list, tuple)):
        for value in paths:
            if type(value) is str and value not in targets:
                targets.append(value)
                _add_path_forms(targets, value, root)
    return targets


def _add_command_forms(targets: list[str], command: str, root: str | None) -> None:
    """Append what a shell command acts on: the paths in it, the text the shell runs after
    quote removal (and its paths) and the paths its glob words expand to."""
    paths = command_paths(command)
    if len(paths) <= _FEW_PATHS:
        for path in paths:
            if path not in targets:
                targets.append(path)
            _add_path_forms(targets, path, root)
    else:
        _add_many_paths(targets, paths, root)
    if "'" in command or '"' in command or "\\" in command:
        unquoted = shell_unquoted(command)
        if unquoted is not None:
            if unquoted not in targets:
                targets.append(unquoted)
            _add_many_paths(targets, command_paths(unquoted), root)
            command = unquoted
    if "*" in command or "?" in command or "[" in command:
        _add_many_paths(targets, glob_paths(command, root), root)


_FEW_PATHS = 16


def _add_many_paths(targets: list[str], paths: list[str], root: str | None) -> None:
    """Append ``paths`` and their forms in one pass with a set: thousands of paths in a hostile
    command stay linear."""
    if not paths:
        return
    forms: list[str] = []
    for path in paths:
        forms.append(path)
        dotted = "/." in path or path[:1] == "."
        normal = normalise_path(path, root) if dotted or root or "//" in path else path
        forms.append(normal)
        if dotted:
            folded = folded_credential_path(normal)
            if folded is not None:
                forms.append(folded)
        if root:
            resolved = resolved_path(path, root)
            if resolved is not None:
                forms.append(resolved)
    present = set(targets)
    targets.extend(form for form in dict.fromkeys(forms) if form not in present)


def _add_path_forms(targets: list[str], path: str, root: str | None) -> None:
    """Append the normalised form of ``path``, its case-folded form when it names a credential
    file in another case, and, with a root, where a symlink leads it."""
    dotted = "/." in path or path[:1] == "."  # `./`, `../`, a dotfile or a dot-directory
    normal = normalise_path(path, root) if dotted or root or "//" in path else path
    if normal not in targets:
        targets.append(normal)
    if dotted:  # a credential file in another case is a dotfile or in a dot-directory
        folded = folded_credential_path(normal)
        if folded is not None and folded not in targets:
            targets.append(folded)
    if root:
        resolved = resolved_path(path, root)
        if resolved is not None and resolved not in targets:
            targets.append(resolved)
