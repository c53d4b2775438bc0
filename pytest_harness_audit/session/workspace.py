"""Throw-away git workspaces seeded from templates, and what changed in them.

A workspace is a directory with a real git repository: the template's files, copied, and one
initial commit by a fixed author at a fixed date, so the same template always gives the same
commit id. :func:`changed_files` and :func:`diff` compare the working tree with that commit, so
changes the agent commits, stages or leaves untracked all count. The workspace holds no ref of
the auditor's: the commit, and the object store it is read from, are kept outside it
(:mod:`.bases`).

Templates are the directories of ``fixtures/workspaces/`` shipped with the package
(``python-service``, ``node-package``, ``empty``), or any directory given as a path. Every git
command here runs without the user's global and system git configuration, so settings such as
``core.autocrlf`` or ``diff.noprefix`` cannot change commit ids or diff output, and without the
programs the agent can name in the repository's configuration (``core.fsmonitor``, external
diff and text conversion: :mod:`pytest_harness_audit.inspect.git_env`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

import git

from pytest_harness_audit._data import data_dir
from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.inspect.credential_objects import credential_blob_ids, pack_all_but
from pytest_harness_audit.inspect.digests import tree_digest
from pytest_harness_audit.inspect.git_env import GIT_ISOLATION_ENV, without_filters
from pytest_harness_audit.inspect.learn import workspace_credentials
from pytest_harness_audit.inspect.own_reads import OWN_READS
from pytest_harness_audit.session import bases

HARNESS_AUTHOR_NAME = "Harness Audit"
HARNESS_AUTHOR_EMAIL = "harness@example.invalid"
HARNESS_COMMIT_DATE = "1704067200 +0000"
"""2024-01-01T00:00:00Z, the author and committer date of every initial commit."""

DEFAULT_BRANCH = "main"
"""The branch of every workspace."""
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""Git's empty tree: the base of a repository that has no commit yet."""

_COPY_IGNORED = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache")


_COMMIT_ENV = {
    "GIT_AUTHOR_NAME": HARNESS_AUTHOR_NAME,
    "GIT_AUTHOR_EMAIL": HARNESS_AUTHOR_EMAIL,
    "GIT_AUTHOR_DATE": HARNESS_COMMIT_DATE,
    "GIT_COMMITTER_NAME": HARNESS_AUTHOR_NAME,
    "GIT_COMMITTER_EMAIL": HARNESS_AUTHOR_EMAIL,
    "GIT_COMMITTER_DATE": HARNESS_COMMIT_DATE,
}


class WorkspaceError(HarnessAuditError):
    """A workspace cannot be created: unknown template, unusable destination, git failure."""


def templates_dir() -> Path:
    """The directory of the shipped workspace templates."""
    return data_dir("fixtures") / "workspaces"


def list_templates() -> list[str]:
    """Names of the shipped workspace templates, sorted."""
    return sorted(entry.name for entry in templates_dir().iterdir() if entry.is_dir())


def resolve_template(template: str | Path | None) -> tuple[Path, str]:
    """The directory of ``template`` and the name used in the initial commit message.

    ``None`` is the ``empty`` template; a string without a path separator names a shipped
    template; anything else is a directory path.
    """
    if template is None:
        template = "empty"
    if isinstance(template, str) and "/" not in template and os.sep not in template:
        if template in {"", ".", ".."}:
            raise WorkspaceError(f"invalid workspace template name {template!r}")
        shipped = templates_dir() / template
        if not shipped.is_dir():
            available = ", ".join(list_templates())
            raise WorkspaceError(
                f"unknown workspace template {template!r} (available: {available})"
            )
        return shipped, template
    path = Path(template).expanduser()
    if not path.is_dir():
        raise WorkspaceError(f"workspace template is not a directory: {template}")
    return path, path.resolve().name


def _git(repo_dir: Path) -> git.Git:
    command = git.Git(str(repo_dir))
    command.update_environment(**GIT_ISOLATION_ENV)
    return command


def create_workspace(dest: Path, template: str | Path | None = None) -> git.Repo:
    """Copy ``template`` to ``dest``, ``git init`` it and make the initial commit; return the repo.

    ``dest`` must not exist or be an empty directory. The branch is ``main``; author and committer
    are ``Harness Audit <harness@example.invalid>`` at 2024-01-01T00:00:00Z; the repository's own
    configuration carries that identity too, so commits made later in the workspace work.
    The returned repo runs its git commands without global or system git configuration.

    The first workspace of a template in a process is built with git; later ones are copies of
    it (repository included), which is several times faster and gives the same commit.
    """
    source, label = resolve_template(template)
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise WorkspaceError(f"workspace destination exists and is not empty: {dest}")
    # The copy is checked, not the seed before it: a command of a live session can change the
    # seed while it is being copied.
    for _attempt in range(2):
        seed, expected, commit = _SEEDS.seed_for(source, label)
        try:
            with OWN_READS.reading(str(seed)):
                shutil.copytree(seed, dest, symlinks=True, dirs_exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(
                f"cannot copy workspace template {label!r} to {dest}: {exc}"
            ) from None
        if tree_digest(dest) == expected:
            break
        _clear(dest)
        _SEEDS.drop(seed, label)
    else:
        raise WorkspaceError(f"the seed of workspace template {label!r} keeps changing")
    bases.record(dest, bases.Base(commit, str(seed)))
    repo = git.Repo(str(dest))
    repo.git.update_environment(**GIT_ISOLATION_ENV)
    return repo


def template_origins(template: str | Path | None = None) -> tuple[Path, ...]:
    """The copies the auditor keeps of ``template`` outside any workspace: its seed (when this
    process made one) and the template itself. Their credential files are watched as the
    workspace's are (:mod:`pytest_harness_audit.inspect.credential_reads`)."""
    source, label = resolve_template(template)
    seed = _SEEDS.current(source, label)
    source = source.resolve()
    return (source,) if seed is None else (seed, source)


def _clear(folder: Path) -> None:
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def _template_fingerprint(source: Path) -> tuple[tuple[str, int, int, int], ...]:
    entries: list[tuple[str, int, int, int]] = []
    for directory, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if not _COPY_IGNORED(directory, [d]))
        for name in sorted(filenames):
            info = os.lstat(os.path.join(directory, name))
            relative = os.path.relpath(os.path.join(directory, name), source)
            entries.append((relative, info.st_size, info.st_mtime_ns, info.st_mode))
    return tuple(entries)


class SeedChangedWarning(UserWarning):
    """A template's seed no longer matched what was built: it was dropped and built again."""


_Key = tuple[str, str, tuple[tuple[str, int, int, int], ...]]


class _SeedCache:
    """Initialised template repositories of this process, kept in a temporary directory, each
    with the digest of its tree (``.git`` included) as it was built (:func:`tree_digest`)."""

    def __init__(self) -> None:
        self._root: Path | None = None
        self._seeds: dict[_Key, tuple[Path, str, str]] = {}
        self._built = 0
        self._lock = threading.RLock()
        #: Seeds found changed, as ``(template label, seed path)``.
        self.changed: list[tuple[str, str]] = []

    def seed_for(self, source: Path, label: str) -> tuple[Path, str, str]:
        """The seed of ``source``, its digest when built and its commit (built now when there is
        none)."""
        key = (str(source.resolve()), label, _template_fingerprint(source))
        with self._lock:
            found = self._seeds.get(key)
            if found is not None and (found[0] / ".git").is_dir():
                return found
            if self._root is None or not self._root.is_dir():
                self._root = Path(tempfile.mkdtemp(prefix="harness-audit-seeds-"))
                atexit.register(shutil.rmtree, self._root, ignore_errors=True)
            # a new folder each time: a session watching the old one's files sees no new ones
            seed = self._root / str(self._built)
            self._built += 1
            if seed.exists():
                shutil.rmtree(seed)
            # only the copy reads the template: other processes' watches wait for no git run
            with OWN_READS.reading(str(source.resolve()), shared=True):
                _copy_template(source, seed, label)
            commit = _build_repository(seed, label)
            self._seeds[key] = (seed, tree_digest(seed), commit)
            return self._seeds[key]

    def current(self, source: Path, label: str) -> Path | None:
        """The seed of ``source`` now, without building one."""
        key = (str(source.resolve()), label, _template_fingerprint(source))
        with self._lock:
            found = self._seeds.get(key)
        return None if found is None else found[0]

    def drop(self, seed: Path, label: str) -> None:
        """Forget ``seed`` (it no longer matches its digest) and remove it; warn."""
        with self._lock:
            for key, (path, _digest, _commit) in list(self._seeds.items()):
                if path == seed:
                    del self._seeds[key]
            self.changed.append((label, str(seed)))
        shutil.rmtree(seed, ignore_errors=True)
        warnings.warn(
            SeedChangedWarning(
                f"the seed of workspace template {label!r} was changed since it was built "
                f"({seed}): it is built again from the template"
            ),
            stacklevel=3,
        )

    def seeds(self) -> dict[str, str]:
        """The path of each seed now → its template label."""
        with self._lock:
            return {str(path): key[1] for key, (path, _digest, _commit) in self._seeds.items()}


def seed_cache() -> _SeedCache:
    """This process's seed cache."""
    return _SEEDS


_SEEDS = _SeedCache()


def _copy_template(source: Path, dest: Path, label: str) -> None:
    try:
        shutil.copytree(source, dest, symlinks=True, ignore=_COPY_IGNORED)
    except OSError as exc:
        raise WorkspaceError(f"cannot copy workspace template {label!r}: {exc}") from None


def _build_repository(dest: Path, label: str) -> str:
    """Make the copy ``dest`` of a template a seed: its repository; return its commit."""
    command = _git(dest)
    try:
        # --template= : no sample hooks or other files from the user's git templates.
        command.init("--quiet", "--template=")
        command.symbolic_ref("HEAD", f"refs/heads/{DEFAULT_BRANCH}")
        command.config("user.name", HARNESS_AUTHOR_NAME)
        command.config("user.email", HARNESS_AUTHOR_EMAIL)
        command.config("commit.gpgsign", "false")
        command.add("--all")
        message = f"Initial commit: {label} workspace"
        commit: str = command.commit_tree(command.write_tree(), "-m", message, env=_COMMIT_ENV)
        # The branch's reflog entry has the time it was made, as any commit's has: at the
        # commit's fixed date it would be years old, and `git gc` expires such entries.
        command.update_ref(
            "-m", f"commit (initial): {message}", f"refs/heads/{DEFAULT_BRANCH}", commit, ""
        )
        # One pack instead of a directory per object: the seed is copied for every workspace.
        # The blobs of credential files stay loose: a read of one is then seen by the kernel
        # (inspect.credential_objects).
        sources = [relative for relative, values in workspace_credentials(dest) if values]
        kept = credential_blob_ids(str(dest), sources) if sources else {}
        if not kept or not pack_all_but(str(dest), kept):
            command.repack("-a", "-d", "-q")
    except git.GitCommandError as exc:
        stderr = (exc.stderr or "").strip()
        raise WorkspaceError(
            f"git failed while creating a workspace from template {label!r}: {stderr or exc}"
        ) from None
    return commit


def base_revision(repo: git.Repo) -> str:
    """The commit changes are counted from: the initial commit of a workspace
    :func:`create_workspace` made (:mod:`.bases`), else ``HEAD``, else git's empty tree. A
    session reads it once, when it begins: the agent can move ``HEAD``."""
    base = bases.recorded(repo.working_tree_dir)
    if base is not None:
        return base.commit
    try:
        sha: str = repo.git.rev_parse("--verify", "--quiet", "HEAD^{commit}", env=GIT_ISOLATION_ENV)
        return sha
    except git.GitCommandError:
        return EMPTY_TREE


def session_base(root: Path, repo: git.Repo | None = None) -> str | None:
    """:func:`base_revision` of the repository at ``root`` (``repo`` when given), read now, when
    a session begins; ``None`` where ``root`` holds no repository (it is read when compared)."""
    if repo is None:
        if not os.path.lexists(root / ".git"):
            return None
        try:
            repo = git.Repo(str(root))
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            return None
    return base_revision(repo)


#: Seconds one git command of a comparison may take: the agent can leave a FIFO where git reads.
COMPARE_TIMEOUT_S = 60.0


def _untracked(repo: git.Repo, env: dict[str, str]) -> list[str]:
    listing: str = repo.git.ls_files(
        "--others",
        "--exclude-per-directory=.gitignore",
        "-z",
        env=env,
        kill_after_timeout=COMPARE_TIMEOUT_S,
    )
    return sorted(path for path in listing.split("\0") if path)


@contextmanager
def _comparing(
    repo: git.Repo, base: str | None
) -> Iterator[tuple[str, dict[str, str], str | None]]:
    """The base commit, the environment of a git that compares the working tree with it and the
    seed it is read from (``None`` for a repository :func:`create_workspace` did not make).

    What the agent can write in the repository must not hide a change: the comparison uses an
    index of its own, read from the base (the repository's index can mark files
    ``--assume-unchanged`` or ``--skip-worktree``, which a diff then skips); untracked files are
    found by the ``.gitignore`` files alone (not ``.git/info/exclude``); no filter driver the
    configuration names runs (the agent can name its own program there); and no replacement ref
    (``git replace``) stands for an object of the base. The initial commit of a workspace
    :func:`create_workspace` made is read from its seed's object store alone (:mod:`.bases`): no
    ref or object of the workspace's counts, and a seed gone is a :class:`WorkspaceError`.
    """
    base = base or base_revision(repo)
    recorded = bases.recorded(repo.working_tree_dir)
    store: dict[str, str] = {}
    seed = None
    if recorded is not None and recorded.commit == base:
        found = bases.store_env(recorded)
        if found is None:
            raise WorkspaceError(
                f"cannot compare the workspace {repo.working_tree_dir} with its base: the copy "
                f"of its initial commit the auditor kept is gone ({recorded.seed}; a seed found "
                "changed is dropped)"
            )
        store, seed = found, recorded.seed
    _status, listing, _stderr = repo.git.config(
        "-z",
        "--get-regexp",
        r"^filter[.]",
        env=GIT_ISOLATION_ENV,
        with_extended_output=True,
        with_exceptions=False,
    )
    with tempfile.TemporaryDirectory(prefix="harness-index-") as folder:
        env = {
            **without_filters(str(listing)),
            **store,
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_INDEX_FILE": os.path.join(folder, "index"),
        }
        try:
            with _seed_read(seed):
                repo.git.read_tree(base, env=env, kill_after_timeout=COMPARE_TIMEOUT_S)
            yield base, env, seed
        except git.GitCommandError as exc:
            # a FIFO where git reads (a `.gitignore`) stops it for good: it is killed
            detail = " ".join(str(exc.stderr or "").split()) or f"exit {exc.status}"
            raise WorkspaceError(
                f"git could not compare the workspace with its base: {detail}"
            ) from None


def _seed_read(seed: str | None) -> AbstractContextManager[None]:
    """A git reading ``seed``'s objects: the auditor's own read of it (:mod:`.own_reads`)."""
    return nullcontext() if seed is None else OWN_READS.reading(seed)


def changed_files(repo: git.Repo, base: str | None = None) -> list[str]:
    """Paths changed since ``base`` (default :func:`base_revision`): modified, added, deleted
    and untracked.

    Relative posix paths, sorted. Files ignored by the workspace's ``.gitignore`` do not count.
    """
    with _comparing(repo, base) as (commit, env, seed), _seed_read(seed):
        listing: str = repo.git.diff(
            "--name-only",
            "-z",
            "--no-renames",
            commit,
            "--",
            env=env,
            kill_after_timeout=COMPARE_TIMEOUT_S,
        )
        tracked = {path for path in listing.split("\0") if path}
        return sorted(tracked.union(_untracked(repo, env)))


def diff(repo: git.Repo, base: str | None = None) -> str:
    """The unified diff from ``base`` (default :func:`base_revision`) to the working tree,
    untracked files included.

    Changes to tracked files come first (in git's path order), then each untracked file as an
    addition (``--- /dev/null``), by path. Empty when nothing changed.
    """
    options = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")
    with _comparing(repo, base) as (commit, env, seed):
        with _seed_read(seed):
            tracked: str = repo.git.diff(
                *options,
                commit,
                "--",
                env=env,
                strip_newline_in_stdout=False,
                kill_after_timeout=COMPARE_TIMEOUT_S,
            )
        return _diff_text(repo, tracked, env, options)


def _diff_text(repo: git.Repo, tracked: str, env: dict[str, str], options: tuple[str, ...]) -> str:
    parts: list[str] = []
    if tracked:
        parts.append(tracked)
    for path in _untracked(repo, env):
        # `git diff --no-index` exits 1 when the files differ, which is always the case here.
        _status, added, _stderr = repo.git.diff(
            *options,
            "--no-index",
            "--",
            os.devnull,
            path,
            env=env,
            with_extended_output=True,
            with_exceptions=False,
            strip_newline_in_stdout=False,
            kill_after_timeout=COMPARE_TIMEOUT_S,
        )
        parts.append(added)
    return "".join(parts)
