"""Where a session's files live under one storage directory, and safe session ids.

<storage>/audit/<sessionId>.jsonl     the chain, one compact JSON record per line
<storage>/audit/<sessionId>.lock      the lock appenders serialise through
<storage>/sessions/<sessionId>.json   metadata (Soft LCT, level, repairs, anchor snapshot)
<storage>/sessions/<sessionId>.anchor the anchor: record count, byte size and head hash
<storage>/checkpoints/<sessionId>.jsonl signed checkpoints (see ``checkpoint``)
<storage>/.gitignore                  ``*``, written when this package creates the directory

``default_storage`` is where the command line keeps chains when told nothing: a per-user state
directory outside the project, so that an agent working in the project does not hold its own
evidence.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_harness_audit.audit.errors import AuditError

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_MAX_ID_LENGTH = 96


def sanitize_session_id(session_id: str) -> str:
    """Map ``session_id`` to a file-name-safe id (``[A-Za-z0-9_.-]``, no leading dot).

    Safe ids are returned unchanged. Otherwise unsafe characters become ``_`` and a short hash of
    the original is appended, so two different ids never share a file (``a/b`` ≠ ``a_b``).
    """
    if not isinstance(session_id, str) or not session_id:
        raise AuditError(f"session id must be a non-empty string, got {session_id!r}")
    safe = _UNSAFE.sub("_", session_id).lstrip(".")
    if safe == session_id and len(safe) <= _MAX_ID_LENGTH:
        return safe
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe[:_MAX_ID_LENGTH] or 'session'}-{digest}"


@dataclass(frozen=True)
class SessionPaths:
    """The four files of one session."""

    session_id: str
    chain: Path
    lock: Path
    session_file: Path
    anchor: Path


@dataclass(frozen=True)
class StorageLayout:
    """The storage directory and the paths derived from it."""

    root: Path

    @classmethod
    def at(cls, storage_dir: str | os.PathLike[str]) -> StorageLayout:
        """Layout rooted at ``storage_dir``."""
        return cls(Path(storage_dir))

    @property
    def audit_dir(self) -> Path:
        """``<storage>/audit``."""
        return self.root / "audit"

    @property
    def sessions_dir(self) -> Path:
        """``<storage>/sessions``."""
        return self.root / "sessions"

    def paths(self, session_id: str) -> SessionPaths:
        """Paths for ``session_id`` (sanitised first)."""
        sid = sanitize_session_id(session_id)
        return SessionPaths(
            session_id=sid,
            chain=self.audit_dir / f"{sid}.jsonl",
            lock=self.audit_dir / f"{sid}.lock",
            session_file=self.sessions_dir / f"{sid}.json",
            anchor=self.sessions_dir / f"{sid}.anchor",
        )

    @property
    def checkpoints_dir(self) -> Path:
        """``<storage>/checkpoints``."""
        return self.root / "checkpoints"

    def ensure_dirs(self) -> None:
        """Create the audit and sessions directories (refusing symbolic links for them).

        A storage directory created here gets a ``.gitignore`` of ``*``, as pytest's cache
        does, so that chains never end up in a commit.
        """
        if not self.root.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            ignore = self.root / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# created by pytest-harness-audit\n*\n", encoding="utf-8")
        for directory in (self.audit_dir, self.sessions_dir):
            if directory.is_symlink():
                raise AuditError(f"{directory}: is a symbolic link; refusing to write through it")
            directory.mkdir(parents=True, exist_ok=True)


def project_id(project: str | os.PathLike[str]) -> str:
    """A readable, stable name for a project directory: ``<name>-<8 hex of its path>``."""
    path = os.path.abspath(os.fspath(project))
    name = _UNSAFE.sub("_", os.path.basename(path.rstrip(os.sep)) or "root").lstrip(".")
    digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{name[:40] or 'project'}-{digest}"


def choose_storage(
    given: str | os.PathLike[str] | None = None,
    *,
    configured: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """Where records go: ``given`` (a ``--storage`` option), else ``$HARNESS_AUDIT_DIR``, else
    ``configured`` (a config file's ``storagePath``), else :func:`default_storage`. ``~`` is
    expanded in each."""
    env = os.environ if environ is None else environ
    for chosen in (given, env.get("HARNESS_AUDIT_DIR") or None, configured):
        if chosen is not None and os.fspath(chosen):
            return Path(os.fspath(chosen)).expanduser()
    return default_storage(environ=env)


def default_storage(
    project: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """``$HARNESS_AUDIT_DIR``, else ``$XDG_STATE_HOME/harness-audit/<project-id>``.

    ``$XDG_STATE_HOME`` defaults to ``~/.local/state``; the project is, unless given,
    ``$CLAUDE_PROJECT_DIR`` (the agent host sets it for its hook commands, which run in the
    host's current directory: a ``cd src`` must not start a second store for the same session),
    else the current directory. Never a directory inside the project.
    """
    env = os.environ if environ is None else environ
    chosen = env.get("HARNESS_AUDIT_DIR")
    if chosen:
        return Path(chosen)
    state = env.get("XDG_STATE_HOME") or ""
    if not os.path.isabs(state):  # the XDG spec: a relative value is ignored
        home = env.get("HOME") or os.path.expanduser("~")
        state = os.path.join(home, ".local", "state")
    if project is None:
        host_project = env.get("CLAUDE_PROJECT_DIR") or ""
        project = host_project if os.path.isabs(host_project) else os.getcwd()
    return Path(state) / "harness-audit" / project_id(project)


def list_sessions(storage_dir: str | os.PathLike[str]) -> list[str]:
    """Session ids present in ``storage_dir`` (a chain, session file or anchor), sorted."""
    layout = StorageLayout.at(storage_dir)
    found: set[str] = set()
    for directory, suffixes in (
        (layout.audit_dir, (".jsonl",)),
        (layout.sessions_dir, (".json", ".anchor")),
    ):
        if not directory.is_dir():
            continue
        for entry in directory.iterdir():
            if entry.suffix in suffixes and entry.is_file():
                found.add(entry.name[: -len(entry.suffix)])
    return sorted(found)
