"""The lookups of a command's reading context: workspace files it runs or loads (each once,
within bounds), and names searched in lists of folders: a command name in
``PATH`` (:mod:`.searchpath`), a Python module in ``PYTHONPATH`` and ``sys.path`` folders, a
Node module in ``NODE_PATH`` (:mod:`.pymodules`, :mod:`.imports`).

Such a list is known from a command's environment (``PATH=bin:$PATH x``, ``env …``), or from
an assignment earlier in the script (``export PYTHONPATH=lib``), its unknown parts kept as
their ``$NAME`` text; a nested script a command runs (``PATH=bin sh -c x``, a script file)
looks names up in the lists the command was given.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.context import HeldReads, Record
from pytest_harness_audit.policy.shell.expand import (
    SCRIPT_FILE_LIMIT,
    Expander,
    descriptor_path,
    file_key,
)
from pytest_harness_audit.policy.shell.gitcommand import existing_text
from pytest_harness_audit.policy.shell.gitcontext import GitReadings
from pytest_harness_audit.policy.shell.imported import judge_imports
from pytest_harness_audit.policy.shell.imports import MAX_LOADED, MAX_LOADED_TEXT
from pytest_harness_audit.policy.shell.load_time import (
    INTERPRETERS,
    load_time_code,
    module_language,
)
from pytest_harness_audit.policy.shell.nodes import Command
from pytest_harness_audit.policy.shell.program_files import program_text
from pytest_harness_audit.policy.shell.projects import Runner, program_file
from pytest_harness_audit.policy.shell.pymodules import (
    add_folders,
    module_files,
    sys_path_folders,
)
from pytest_harness_audit.policy.shell.searchpath import (
    PATH_LISTS,
    SHELL_BUILTINS,
    candidates,
    unknown_entry,
    workspace_entries,
)

#: Files Python imports at start from each ``PYTHONPATH`` folder (the ``site`` module).
_STARTUP_MODULES: Final = ("sitecustomize", "usercustomize")


#: Redirections that send a command's output to a file.
_OUTPUT_OPS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})


#: Most commands a reading records (as :data:`.reading.MAX_COMMANDS`).
_MAX_COMMANDS: Final = 512


class _Host(Runner, Protocol):
    """What the lookups need of the context they are part of."""

    env: dict[str, str | None]
    made: Expander | None

    @property
    def expander(self) -> Expander:
        """The script's expander (made when first asked for)."""
        ...

    @property
    def workspace_root(self) -> str | None:
        """The workspace the command runs in, when known."""
        ...

    @property
    def reading(self) -> Record:
        """The reading to record into."""
        ...

    _root: str | None
    command: Command | None

    def load_code(self, path: str) -> None:
        """Read a workspace file program text loads, once per command."""
        ...

    def unknown(self, why: str) -> None:
        """What the command runs cannot be known."""
        ...

    def script_file(self, path: str, code: bool) -> None:
        """A shell (``code``: an interpreter) runs the file ``path``: read its text."""
        ...


class Lookups(GitReadings):
    """Folder-list lookups of a command's context, after its git readings (a mixin: the
    context holds the state; one line of bases, as the compiled build needs)."""

    __slots__ = ()

    def path_list(self: _Host, name: str) -> str | None:
        """The value of ``PATH``/``PYTHONPATH``/``NODE_PATH`` the command sees, when the
        command set it (unknown parts as their ``$NAME`` text)."""
        env = self.env
        if name in env:
            return env[name]
        made = self.made
        return made.path_lists.get(name) if made is not None else None

    @property
    def looks_up(self: _Host) -> bool:
        """Whether a command name may be a workspace program: the command set a ``PATH`` or
        hashed a name (``hash -p FILE NAME``)."""
        if "PATH" in self.env:
            return True
        made = self.made
        return made is not None and ("PATH" in made.path_lists or bool(made.hashed))

    def path_program(self: _Host, name: str) -> None:
        """The command ``name`` may be a workspace program found through the ``PATH`` the
        command set (:mod:`.searchpath`) or hashed (``hash -p FILE NAME``): read each such file
        as the program it is."""
        expander = self.expander
        hashed = expander.hashed.get(name)
        if hashed is not None:
            self.reading.reads.append(hashed)
            program_file(hashed, self)
            return  # the shell runs the file hashed, whatever PATH says
        value = self.env["PATH"] if "PATH" in self.env else expander.path_lists.get("PATH")
        root = self.workspace_root
        if value is None or root is None:
            return
        if unknown_entry(value, expander.built) and name not in SHELL_BUILTINS:
            self.unknown(f"{name} is looked up in a PATH folder built at run time")
            return
        here = expander.place.here or ""
        bases = (here,) if "PATH" in self.env else (here, expander.search_base)
        for found in candidates(name, value, root, bases):
            path = posixpath.relpath(found, here) if here else found  # from where the script is
            if expander.file_text(path) is not None or expander.is_unknown(expander.key(path)):
                self.reading.reads.append(path)
                program_file(path, self)

    def with_lists(self: _Host, read: Callable[[], None]) -> None:
        """Run ``read`` (a nested script's reading) with the folder lists the command was given
        as the script's own (``PATH=bin:$PATH sh -c x`` looks ``x`` up in ``bin``)."""
        given = {name: self.env[name] for name in PATH_LISTS if name in self.env}
        if not given:
            read()
            return
        lists = self.expander.path_lists
        saved = dict(lists)
        lists.update({name: value for name, value in given.items() if value is not None})
        try:
            read()
        finally:
            lists.clear()
            lists.update(saved)

    def python_folders(self: _Host, code: str, folder: str) -> list[str]:
        """The folders besides its own that program text of ``folder`` imports Python modules
        from: the ``PYTHONPATH`` given and the ``sys.path`` folders program text added."""
        expander = self.expander
        known = expander.python_folders
        value = self.env.get("PYTHONPATH") or expander.path_lists.get("PYTHONPATH")
        if value:
            root = self.workspace_root or "/"
            add_folders(known, _relative(workspace_entries(value, root), root))
        add_folders(known, sys_path_folders(code, folder))
        return known

    def node_folders(self: _Host) -> list[str]:
        """The ``NODE_PATH`` folders Node resolves a bare module name in, when given."""
        value = self.env.get("NODE_PATH") or self.expander.path_lists.get("NODE_PATH")
        if not value:
            return []
        root = self.workspace_root or "/"
        return _relative(workspace_entries(value, root), root)

    def settings_text(self: _Host, path: str) -> str | None:
        """The text of a settings file many commands look for (``pyproject.toml``,
        ``pytest.ini`` …): a missing one costs one ``stat``, one unchanged since it was last
        read is not read again (:func:`~.gitcommand.existing_text`)."""
        if self.made is None and self._root is None:
            return None
        return existing_text(self.expander, self.workspace_text)(path)

    def python_startup(self: _Host) -> None:
        """Python imports ``sitecustomize``/``usercustomize`` from its ``PYTHONPATH`` folders
        before anything else: read them when the command gives such folders."""
        value = self.env.get("PYTHONPATH") or (
            self.made.path_lists.get("PYTHONPATH") if self.made is not None else None
        )
        if not value or self.workspace_root is None:
            return
        root = self.workspace_root
        folders = _relative(workspace_entries(value, root), root)
        for module in _STARTUP_MODULES:
            for path in module_files(module, folders):
                if self.workspace_text(path) is not None:
                    self.load_code(path)

    @property
    def in_substitution(self: _Host) -> bool:
        """Whether this command's output becomes part of another command's text."""
        return self.command is not None and self.command.in_substitution

    @property
    def output_redirected(self: _Host) -> bool:
        """Whether this command's standard output goes to a file (``> FILE``, ``&> FILE``)."""
        command = self.command
        return command is not None and any(
            redirect.op in _OUTPUT_OPS and redirect.fd in ("", "1")
            for redirect in command.redirects
        )

    @property
    def stdin_source(self: _Host) -> str | None:
        """The file this command's own ``< FILE`` gives its standard input (``None``: none)."""
        command = self.command
        for redirect in reversed(command.redirects if command is not None else []):
            if redirect.fd in ("", "0") and redirect.op == "<" and redirect.target:
                fields = self.expander.expand(redirect.target)
                return fields[0].text if len(fields) == 1 else None
        return None

    def hold_reads(self: _Host, held: HeldReads) -> None:
        """Keep the files a piped search read until the command it pipes into is known."""
        command = self.command
        if command is not None and held.files:
            # out of a compound command whose output is piped: held for the pipe's reader
            self.expander.held_reads[id(command.pipe or command)] = held

    def take_held_reads(self: _Host) -> HeldReads | None:
        """The files the command piping into this one read and held (:meth:`hold_reads`)."""
        source = self.command.stdin if self.command is not None else None
        if source is None or not self.expander.held_reads:
            return None
        return self.expander.held_reads.pop(id(source), None)

    def files_rewritten(self: _Host) -> None:
        """A command rewrote workspace files with a text not known (:mod:`.rewrites`)."""
        self.expander.rewrite_pending = True  # for the commands after this one

    def real_path(self: _Host, path: str) -> str | None:
        """The real path of ``path`` from where the command runs (:meth:`Expander.real_path`)."""
        return self.expander.real_path(path)

    def workspace_folder(self: _Host, folder: str) -> str | None:
        """The real path of a workspace folder (:meth:`Expander.workspace_folder`)."""
        return self.expander.workspace_folder(folder)

    def opaque_programs(self: _Host) -> list[str]:
        """The programs whose output substitutions left unknown (:class:`.Context`)."""
        return self.expander.opaque

    def load_code(self: _Host, path: str) -> None:
        """Read a workspace file program text loads, once per command (:mod:`.imports`)."""
        loaded = self.expander.loaded
        key = file_key(path)
        if key in loaded:
            return
        if len(loaded) >= MAX_LOADED:
            self.unknown(f"its program loads more than {MAX_LOADED} workspace files")
            return
        loaded.add(key)
        pending = self.expander.pending_loads  # breadth first: no recursion per import
        pending.append(path)
        if len(pending) > 1:
            return  # the outer call reads it
        modules: list[tuple[str, str]] = []
        while pending:
            if sum(map(len, self.reading.code)) > MAX_LOADED_TEXT:
                self.unknown(f"its program loads more than {MAX_LOADED_TEXT >> 20} MiB of code")
                pending.clear()
                return
            path = pending[0]
            self.script_file(path, code=True)
            language = "python" if path.endswith(".py") else module_language(path)
            text = self.workspace_text(path) if language else None
            if text and language == "python":
                modules.append((path, text))
            elif (
                text
                and language
                and len(self.reading.commands) < _MAX_COMMANDS
                and "/node_modules/" not in f"/{path}"
            ):
                # what loading it runs is judged as program text (:mod:`.load_time`); an
                # installed package's code is judged by its effects, as a package's bundle is
                # read for its paths only (:meth:`workspace_text`)
                code = program_text(load_time_code(text, language), language)
                self.reading.commands.append([INTERPRETERS[language], "-e", code])
            pending.pop(0)
        # what importing each runs, and what the code importing it calls of it, is judged as
        # program text (:mod:`.import_time`), again as more code importing it is read
        judge_imports(self.expander.judged, modules, self.reading)

    def written_names(self: _Host, path: str) -> str | None:
        """The names a file written earlier in the command may hold (:class:`.Context`)."""
        made = self.made
        if made is None or not made.loose_files:
            return None
        return made.loose_files.get(made.key(descriptor_path(path)))

    def words_text(self: _Host, path: str) -> tuple[str | None, bool]:
        """The text of a file a command takes words from (:class:`.Context`)."""
        if self.made is None and self._root is None:
            return None, False
        expander = self.expander
        key = expander.key(path)
        if key in expander.files:
            return expander.files[key], False
        changed = file_key(path) in map(file_key, self.reading.writes)
        if changed or expander.is_unknown(key):
            return None, True
        return self.workspace_text(path), False

    def workspace_text(self: _Host, path: str) -> str | None:
        """The text of a workspace file a command runs (:meth:`Expander.file_text`); one too
        large to read makes the command unreadable."""
        if self.made is None and self._root is None:
            return None  # no workspace and nothing written yet: no expander made for it
        expander = self.expander
        if not expander.root and not expander.files:
            # no text can be known (:meth:`Expander.file_text`): only why, when it says so
            writes = self.reading.writes
            if writes and file_key(path) in map(file_key, writes):
                self.unknown(f"it runs a file changed earlier in the command: {path}")
            elif (expander.unknown_files or expander.tree_rewritten) and expander.is_unknown(
                expander.key(path)
            ):
                self.unknown(f"it runs a file written earlier in the command, text unknown: {path}")
            return None
        if expander.key(path) not in expander.files and file_key(path) in map(
            file_key, self.reading.writes
        ):
            self.unknown(f"it runs a file changed earlier in the command: {path}")
            return None  # `sed -i … s.sh && sh s.sh`: the text on disk is not what runs
        text = expander.file_text(path)
        if expander.followed:  # a symlink read through: its target is read (`justfile -> .env`)
            self.reading.reads.extend(expander.followed)
            expander.followed.clear()
        if text is None and path in expander.too_large and "/node_modules/" not in f"/{path}":
            # an installed package's large bundle (lodash, react) is left unread: a warning for
            # every program that loads one would stop ordinary work
            self.unknown(f"a file it runs is larger than {SCRIPT_FILE_LIMIT // 1024} KiB: {path}")
        elif text is None and expander.is_unknown(expander.key(path)):
            self.unknown(f"it runs a file written earlier in the command, text unknown: {path}")
        return text


def _relative(entries: list[str], root: str) -> list[str]:
    """The entries of :func:`~.searchpath.workspace_entries` as paths from the root."""
    top = root.rstrip("/") or "/"
    return [posixpath.relpath(entry, top) if entry.startswith("/") else entry for entry in entries]


__all__ = ["Lookups"]
