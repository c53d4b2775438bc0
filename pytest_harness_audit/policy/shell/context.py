"""What the per-tool readings need of the reading: the record they write into and the reading
of the command's surroundings (its standard input, workspace files, nested scripts)."""

from __future__ import annotations

from typing import NamedTuple, Protocol


class HeldReads(NamedTuple):
    """The credential files a piped search read (``files``) and those its patterns may match
    (``matching``: what a count or a list of names of its output tells)."""

    files: list[str]
    matching: list[str]


class Context(Protocol):
    """Where :func:`classify` records, and what it knows of the command's surroundings."""

    @property
    def reading(self) -> Record:
        """The reading to record into."""
        ...

    @property
    def stdin_text(self) -> str | None:
        """The text on the command's standard input, when known."""
        ...

    @property
    def stdin_unknown(self) -> bool:
        """Whether the command reads a pipe from a command whose output cannot be known."""
        ...

    @property
    def output_consumed(self) -> bool:
        """Whether another command takes this one's output (a pipe, a substitution)."""
        ...

    @property
    def output_redirected(self) -> bool:
        """Whether this command's standard output goes to a file (``> FILE``, ``&> FILE``)."""
        ...

    @property
    def stdin_source(self) -> str | None:
        """The file the command's own ``< FILE`` gives its standard input (``None``: none)."""
        ...

    def script(self, text: str, args: list[str] | None = None) -> None:
        """Read ``text`` as a script run by a shell (``args``: its ``$0``, ``$1`` …)."""
        ...

    def stdin_script(self, runner: str) -> None:
        """A shell with no script operand runs its standard input."""
        ...

    def stdin_fields(self) -> list[str] | None:
        """The words on the standard input, when known."""
        ...

    def unknown(self, why: str) -> None:
        """A shell runs a script whose text is not in the command."""
        ...

    def script_file(self, path: str, code: bool) -> None:
        """A shell (``code``: an interpreter) runs the file ``path``: read its text."""
        ...

    def program_file(self, path: str) -> None:
        """The file ``path`` is run as a program: read its text by its ``#!`` line."""
        ...

    @property
    def looks_up(self) -> bool:
        """Whether a command name may be a workspace program: the command set a ``PATH`` or
        hashed a name (``hash -p FILE NAME``)."""
        ...

    def path_program(self, name: str) -> None:
        """The command ``name`` may be a workspace program found through that ``PATH``."""
        ...

    def python_folders(self, code: str, folder: str) -> list[str]:
        """The folders besides its own that Python program text imports modules from."""
        ...

    def node_folders(self) -> list[str]:
        """The ``NODE_PATH`` folders Node resolves a bare module name in."""
        ...

    def settings_text(self, path: str) -> str | None:
        """The text of a settings file many commands look for (cheap when missing)."""
        ...

    def python_startup(self) -> None:
        """Read the ``sitecustomize`` a ``PYTHONPATH`` the command gives holds."""
        ...

    def workspace_text(self, path: str) -> str | None:
        """The text of a workspace file, when the reading can see it."""
        ...

    def words_text(self, path: str) -> tuple[str | None, bool]:
        """The text of a file a command takes words from, not runs (``xargs -a F``), when the
        reading can see it; and whether it was changed earlier in the command with a text not
        known (its words are then as unknown as those of a pipe from an unknown command)."""
        ...

    def written_names(self, path: str) -> str | None:
        """The names a file written earlier in the command with a text not known may hold
        (``ls -a | awk … > l; xargs -a l cat``); ``None`` when none are known."""
        ...

    def read_text(self, text: str, code: bool) -> None:
        """Read the text of a file a shell (``code``: an interpreter) runs."""
        ...

    def environment(self, variables: dict[str, str | None]) -> None:
        """The command runs with ``variables`` added to its environment (:mod:`.gitenv`)."""
        ...

    def variable(self, name: str) -> str | None:
        """The value of a variable the command sees, when known."""
        ...

    def repository(self, git_dir: str) -> None:
        """Git works in the repository ``git_dir``: its hooks and configuration (:mod:`.gitenv`)."""
        ...

    def config_written(self, path: str, key: str, value: str) -> None:
        """``git config`` sets ``key`` in the file ``path`` (:mod:`.gitenv`)."""
        ...

    def repository_config(self, sub: str, folder: str) -> None:
        """``git SUB`` run in ``folder`` (``-C``): the repository's hooks and configuration
        (:mod:`.gitenv`)."""
        ...

    def config_include(self, key: str, value: str) -> bool:
        """A git configuration ``include.path``: read the included file (:mod:`.gitenv`)."""
        ...

    def note(self, note: str) -> None:
        """Record a note (``network`` …)."""
        ...

    def workspace_files(self, folder: str) -> list[str] | None:
        """The files under a workspace folder (``None``: too many to list)."""
        ...

    def hold_reads(self, held: HeldReads) -> None:
        """Keep the files a piped search read until the command it pipes into is known."""
        ...

    def take_held_reads(self) -> HeldReads | None:
        """The files the command piping into this one read and held."""
        ...

    @property
    def in_substitution(self) -> bool:
        """Whether this command's output becomes part of another command's text."""
        ...

    def real_path(self, path: str) -> str | None:
        """The real path of ``path`` from where the command runs (``None``: no workspace)."""
        ...

    @property
    def workspace_root(self) -> str | None:
        """The workspace the command runs in, when known."""
        ...

    def files_rewritten(self) -> None:
        """A command rewrote workspace files with a text not known (:mod:`.rewrites`)."""
        ...

    def workspace_folder(self, folder: str) -> str | None:
        """The real path of ``folder`` (from where the command runs) when it is in the
        workspace (``None``: no workspace, or a folder outside it)."""
        ...

    def load_code(self, path: str) -> None:
        """Read a workspace file program text loads, once per command (:mod:`.imports`)."""
        ...

    def opaque_programs(self) -> list[str]:
        """The programs whose output the command's substitutions left unknown (in order)."""
        ...

    @property
    def knows_files(self) -> bool:
        """Whether the reading can know any file's text: it has a workspace, or the command
        wrote a file with a known text (else file-based readings have nothing to read)."""
        ...

    def copied(self, name: str, args: list[str]) -> None:
        """``cp``/``mv``/``ln``/``install`` ran: the destination now holds the source's text."""
        ...


class Record(Protocol):
    commands: list[list[str]]
    reads: list[str]
    writes: list[str]
    deletes: list[str]
    destroys: list[str]
    notes: list[str]
    code: list[str]


__all__ = ["Context", "Record"]
