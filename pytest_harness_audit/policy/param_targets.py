"""Targets a call names outside the fixed target parameters (DESIGN §4 "Targets").

A tool may take its file under any name (``filename``, ``src``, ``dest``, ``input_file``, ``uri``,
``from``), in a list (``files: [...]``), nested (``options: {"path": ...}``) or inside a model
argument (recorded in its JSON form). Every *path-like* string leaf of the parameters, outside
the fixed target keys and the keys that hold content (:data:`CONTENT_KEYS`), is a file target
too, after the targets of the fixed keys. Path-like: no white space, at most
:data:`MAX_PATH_LEAF` characters, and a path or a file name — it holds ``/``, starts with ``.``
or ``~``, or ends in a dot extension (``notes.txt``, ``.env``, ``a/b``).

A command may be given as an argv list (``command: ["curl", "-d", "@.env", URL]``, ``argv``):
its words are quoted for the shell and read as the command (:func:`argv_command`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

#: Parameters whose value is text a tool writes, searches for or sends, never a file it acts on
#: (a one-word ``new_string`` of ``config.yml`` is no target).
CONTENT_KEYS: Final = frozenset(
    {
        "content", "contents", "new_string", "old_string", "new_str", "old_str", "newText",
        "oldText", "new_source", "file_text", "insert_text", "text", "body", "message",
        "description", "prompt", "query", "title", "subject", "comment", "summary", "question",
        "answer", "instructions", "replacement", "activeForm", "data", "input", "stdin",
    }
)  # fmt: skip
#: The parameters a tool with no category may run as a shell command (read as ``Bash``'s are).
COMMAND_KEYS: Final = ("command", "cmd", "script", "argv")
#: Other names a tool's shell command goes by (compared without case, ``_`` and ``-``:
#: ``command_line``, ``commandLine``, ``shell_command`` …, and ``Command``, ``CMD``, ``Script``),
#: read as its ``command`` for a tool with no category.
COMMAND_ALIASES: Final = frozenset(
    {
        "command", "cmd", "script", "commandline", "cmdline", "shellcommand", "shellcmd",
        "bashcommand", "commandstring", "cmdstring", "commandtext", "terminalcommand", "shell",
        "bash", "sh", "pwsh", "powershell",
    }
)  # fmt: skip


#: Other names for program text a tool runs (``code``), folded as :data:`COMMAND_ALIASES`: a
#: Jupyter server's cell (``cell_source``), a code interpreter's ``python_code``.
CODE_ALIASES: Final = frozenset(
    {"cell", "cellsource", "cellcode", "codecell", "sourcecode", "pythoncode", "pycode",
     "ipythoncode", "programcode", "codesnippet"}
)  # fmt: skip


def is_code_alias(key: str) -> bool:
    """Whether a parameter named ``key`` is another name for program text (``code``)."""
    return key.lower().replace("_", "").replace("-", "") in CODE_ALIASES


def is_command_alias(key: str) -> bool:
    """Whether a parameter named ``key`` is another name for a shell ``command``."""
    return key.lower().replace("_", "").replace("-", "") in COMMAND_ALIASES


#: Longest string read as a path.
MAX_PATH_LEAF: Final = 4096
#: Most values looked at in one call's parameters (far beyond what one request carries), and
#: most distinct leaves taken from them. A call with more is not judged by a part of it: the
#: leaves end with :data:`UNREAD_PARAMETERS`, and the gate refuses the call (fails closed), so
#: padding a list with harmless values or names cannot push the one that matters past a cap.
MAX_VALUES: Final = 1 << 22
MAX_LEAVES: Final = 1 << 16
#: The target that says a call's parameters were not all read (:func:`leaf_paths`).
UNREAD_PARAMETERS: Final = "unreadable:parameters too many to read"
_MAX_DEPTH: Final = 1024
_READ_WHOLE: Final = frozenset({"command", "cmd", "argv", "script", "args"})
_EXTENSION: Final = re.compile(r"\.[A-Za-z0-9_-]{1,16}$")
_FILE_WORDS: Final = (
    "file",
    "files",
    "filename",
    "filenames",
    "filepath",
    "filepaths",
    "path",
    "paths",
)
_FOLDER_KEYS: Final = frozenset(
    {"path", "dir", "directory", "folder", "cwd", "root", "repo_path", "base", "base_dir",
     "basedir", "base_path", "parent", "location"}
)  # fmt: skip
_NAME_KEYS: Final = frozenset(
    {"name", "filename", "file_name", "fileName", "file", "basename", "base_name", "key"}
)
#: Parameters naming a folder or a file name in one (:func:`joined_paths`).
JOINED_KEYS: Final = _FOLDER_KEYS | _NAME_KEYS
_MAX_JOINED: Final = 4
#: A revision a git object name starts with: HEAD and its kin, an abbreviated hash, with
#: ancestry (`~2`, `^`) or a reflog entry (`@{1}`).
_REVISION: Final = re.compile(
    r"(?:HEAD|@|FETCH_HEAD|ORIG_HEAD|MERGE_HEAD|[0-9a-fA-F]{7,64})(?:[~^][0-9]*|@\{[^{}]*\})*"
)


def is_path_like(text: str, *, named: bool = False) -> bool:
    """Whether ``text`` reads as one path or file name (see the module docstring); ``named``:
    it is the value of a key that names a file (:func:`names_file`), so any one word is."""
    if not text or len(text) > MAX_PATH_LEAF or (text[:1] in "-@" and "/" not in text):
        return False
    if (
        not named
        and "/" not in text
        and text[:1] not in ".~"
        and ("." not in text or _EXTENSION.search(text) is None)
    ):
        return False
    return not any(character.isspace() or character == "\x00" for character in text)


#: Value types that are never mappings: :func:`is_mapping` answers for them without the ABC.
_NOT_MAPPINGS: Final = frozenset({str, int, float, bool, type(None), list, tuple, bytes})


def is_mapping(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """``isinstance(value, Mapping)``, answered without the ABC's check for the JSON types."""
    kind = type(value)
    return kind is dict or (kind not in _NOT_MAPPINGS and isinstance(value, Mapping))


#: Most levels of lone wrapping objects read through (:func:`as_dict`).
_MAX_WRAPPERS: Final = 4


def as_dict(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` as a dict (itself, when it is one): a compiled build reads a dict directly,
    where any other mapping takes a method call for each look-up.

    A call whose one parameter is an object of named fields (a function tool taking one model,
    ``{"args": {"command": …}}``; an MCP tool's ``{"input": {"path": …}}``) is read as those
    fields, up to :data:`_MAX_WRAPPERS` levels deep: the wrapper is no target, what it holds is.
    """
    args = params if isinstance(params, dict) else dict(params)
    if len(args) == 1:
        for inner in args.values():
            if type(inner) is not str:  # a lone text parameter (a path, a command) wraps nothing
                return _unwrapped(args)
    return args


def _unwrapped(args: dict[str, Any]) -> dict[str, Any]:
    """``args`` read through its lone wrapping objects (:func:`as_dict`)."""
    for _ in range(_MAX_WRAPPERS):
        if len(args) != 1:
            break
        inner = next(iter(args.values()))
        if not isinstance(inner, Mapping) or not inner or any(type(k) is not str for k in inner):
            break
        args = inner if isinstance(inner, dict) else dict(inner)
    return args


#: The types an argv list's words may have besides strings: a tool that runs the list makes
#: each its text (``["rm", "-rf", "app", 1]`` runs ``rm -rf app 1``).
_WORD_SCALARS: Final = (int, float, bool)


def argv_command(value: Any) -> str | None:
    """An argv list (every item a string, or a number or flag a tool writes as a word, the
    first a string) as a shell command, each word quoted; else ``None``."""
    if not isinstance(value, (list, tuple)) or not value or type(value[0]) is not str:
        return None
    if all(type(item) is str or type(item) in _WORD_SCALARS for item in value):
        return " ".join(shlex.quote(str(item)) for item in value)
    return None


def names_file(key: str) -> bool:
    """Whether a parameter's name says its value is a file (``filename``, ``file``,
    ``input_path``, ``srcFile``, ``files``): then a bare name (``id_rsa``) is a path too."""
    word = key.lower().replace("_", "").replace("-", "")
    return word.endswith(_FILE_WORDS)


def joined_paths(params: Mapping[str, Any]) -> list[str]:
    """A folder and a file name given apart (``{"dir": ".aws", "name": "credentials"}``), as the
    one path a tool joins them into (``.aws/credentials``)."""
    folders = [value for key, value in params.items() if key in _FOLDER_KEYS and type(value) is str]
    if not folders:
        return []
    names = [
        value
        for key, value in params.items()
        if key in _NAME_KEYS and type(value) is str and is_path_like(value, named=True)
    ]
    if not names:
        return []
    return [
        f"{folder.rstrip('/')}/{name}"
        for folder in folders[:_MAX_JOINED]
        for name in names[:_MAX_JOINED]
        if folder and len(folder) <= MAX_PATH_LEAF and not name.startswith(("/", "~"))
    ]


def _revision_path(text: str) -> str | None:
    """The path of a git object name (``HEAD:id_rsa``, ``HEAD~2:keys/id_rsa``), which a git tool
    shows under any parameter name (``spec``, ``object``); else ``None``."""
    if ":" not in text or len(text) > MAX_PATH_LEAF:
        return None
    head, _, path = text.partition(":")
    if path and _REVISION.fullmatch(head) is not None and is_path_like(path, named=True):
        return path
    return None


def _take(found: dict[str, None], text: str, named: bool) -> None:
    """Add ``text`` to ``found`` when it reads as a path, and the path of a git object name."""
    if is_path_like(text, named=named):
        found[text] = None
    path = _revision_path(text)
    if path is not None:
        found[path] = None


def leaf_paths(params: Mapping[str, Any], skipped: Mapping[str, Any]) -> list[str]:
    """The path-like string leaves of ``params``, in order, outside :data:`CONTENT_KEYS` (at any
    depth) and the values already read as targets: a string under a key of ``skipped``, a
    command's argv list (``args`` when ``skipped`` holds it); each once, at most
    :data:`MAX_LEAVES`, and :data:`UNREAD_PARAMETERS` last when more than that, more than
    :data:`MAX_VALUES` values, or values nested deeper than it reads, were left unread. Under
    a key that names a file (:func:`names_file`), any one word is a leaf; a folder and a name
    given apart add their join (:func:`joined_paths`)."""
    found: dict[str, None] = {}  # (in order, each once: repeating a name fills no cap)
    budget = MAX_VALUES
    too_deep = False
    stack: list[tuple[Any, int, bool]] = []
    for key, value in params.items():
        if key in CONTENT_KEYS or value is None:
            continue
        if key in skipped and (type(value) is str or key in _READ_WHOLE):
            continue  # read already: a target key's string, a command's argv list
        named = names_file(key)
        if type(value) is str:
            _take(found, value, named)
            continue
        kind = type(value)
        if kind is not dict and kind is not list and not isinstance(value, (Mapping, list, tuple)):
            continue
        stack.append((value, 0, named))
        while stack:
            item, depth, named = stack.pop()
            budget -= 1
            if budget < 0 or len(found) > MAX_LEAVES:
                return [*list(found)[:MAX_LEAVES], UNREAD_PARAMETERS]
            if type(item) is str:
                _take(found, item, named)
            elif depth < _MAX_DEPTH:
                if type(item) is dict or isinstance(item, Mapping):
                    stack.extend(
                        (inner, depth + 1, names_file(name) if type(name) is str else False)
                        for name, inner in reversed(list(item.items()))
                        if name not in CONTENT_KEYS
                    )
                elif isinstance(item, (list, tuple)):
                    # after `--` an argv's words are paths (`git show HEAD -- id_rsa`)
                    words: list[Any] = list(item)
                    after = words.index("--") if "--" in words else len(words)
                    for index in range(len(words) - 1, -1, -1):
                        stack.append((words[index], depth + 1, named or index > after))
            elif isinstance(item, (Mapping, list, tuple)) and item:
                too_deep = True  # not read: the call is not judged by a part of it
    for path in joined_paths(params):
        found[path] = None
    if too_deep or len(found) > MAX_LEAVES:
        return [*list(found)[:MAX_LEAVES], UNREAD_PARAMETERS]
    return list(found)
