"""Tracked files whose content is lost to their owner while the files stay: ``emptied`` and
``unreadable``.

A tracked file that had content is lost as a deleted one is when it is left

* empty (``: > f``, ``open(f, "w")``), or holding nothing but NUL bytes and white space
  (``truncate`` to its size, zeros or blanks written over it in place) where git's copy of it
  (in ``HEAD`` or in the index) held more, or binary (a NUL byte in its first
  :data:`BINARY_TEST` bytes, as git tells, or mostly bytes no UTF-8 text holds) where git's
  copy was text other than a Git LFS pointer: noise written over it, or its content encrypted
  in place (a file re-encoded in Latin-1 stays text);
* unreadable by its owner (the owner's read bit cleared: ``chmod 000``, ``chmod a-r``), or, for
  a file git records as executable (mode ``100755``, in its index or in ``HEAD``), no longer
  runnable by its owner (the owner's execute bit cleared);
* inside a folder its owner can no longer list or enter (:func:`is_locked`: ``chmod 000 app``,
  ``chmod a-x app``: :func:`locked_at`), the workspace itself included, or moved into one.

Modes are judged by the owner's bits, whoever runs the check (a superuser reads any file): the
owner is who works in the workspace. ``chmod +x``, ``chmod 644`` of a file that is no script,
and dropping an execute bit git does not record leave every file usable.
"""

from __future__ import annotations

import codecs
import contextlib
import itertools
import os
import stat
import subprocess
from collections.abc import Iterable, Mapping, Sequence

from pytest_harness_audit.inspect import scrambled
from pytest_harness_audit.inspect.tracked import GIT_ENV, tracked_executables

#: ``(size, time_ns, inode, mode)``, as a snapshot keeps it (see :func:`stat_key`).
_Stat = tuple[int, int, int, int]


def stat_key(info: os.stat_result) -> _Stat:
    """What a snapshot keeps of a file's stat: its size, the later of its modification and
    change times (a rewrite whose modification time was set back still moves the change time,
    which nothing sets back), its inode and its mode."""
    return (info.st_size, max(info.st_mtime_ns, info.st_ctime_ns), info.st_ino, info.st_mode)


#: A file holding only NULs and white space is read this far at most; a longer one keeps content.
MAX_BLANK_BYTES = 8 << 20
#: A file with a NUL byte this near its start is binary, as git tells text from binary.
BINARY_TEST = 8000
#: The share of a non-UTF-8 file's bytes that, high or control, make it binary.
NOISE_SHARE = 0.3
_NOISE_BYTES = (
    bytes(range(0x80, 0x100))
    + bytes(b for b in range(0x20) if b not in b"\t\n\r\f\b\x1b")
    + b"\x7f"
)
#: How a Git LFS pointer starts: git holds that text, the checkout the (binary) object itself.
LFS_POINTER = b"version https://git-lfs.github.com/spec/"
_BLANK = b"\0 \t\n\r\v\f"
_CHUNK = 1 << 16
_OWNER_DIR = stat.S_IRUSR | stat.S_IXUSR


def is_locked(mode: int) -> bool:
    """Whether a folder of ``mode`` cannot be listed or entered by its owner."""
    return mode & _OWNER_DIR != _OWNER_DIR


def locked_at(path: str) -> bool:
    """Whether the folder at ``path`` (not followed) cannot be listed or entered by its owner."""
    try:
        return is_locked(os.lstat(path).st_mode)
    except OSError:
        return False


def _binary(head: bytes) -> bool:
    """Whether the start ``head`` of a file is binary: a NUL in its first :data:`BINARY_TEST`
    bytes, or bytes no UTF-8 text holds (a character cut at its end is no sign) making up more
    than :data:`NOISE_SHARE` of it with the control characters (an accented letter in Latin-1
    is text; noise or ciphertext is mostly such bytes)."""
    if b"\0" in head[:BINARY_TEST]:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        sample = head[:BINARY_TEST]
        noise = len(sample) - len(sample.translate(None, _NOISE_BYTES))
        return noise > NOISE_SHARE * len(sample)
    return False


def _reading(path: str) -> str | None:
    """``"blank"`` when the regular file at ``path`` holds nothing but NULs and white space,
    ``"binary"`` when its start is binary (:func:`_binary`), else ``None``."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with contextlib.closing(os.fdopen(handle, "rb")) as stream:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        read = 0
        while read < MAX_BLANK_BYTES:
            chunk = stream.read(_CHUNK if read else BINARY_TEST)
            if not chunk:
                return "blank"
            if chunk.strip(_BLANK):
                return "binary" if read == 0 and _binary(chunk) else None
            read += len(chunk)
    return None


def _copies(root: str, requests: list[str]) -> list[bytes | None] | None:
    """The content of each object ``requests`` names (``"HEAD:a.py"``, ``":a.py"``), ``None``
    for one git does not have; ``None`` when git cannot be asked."""
    try:
        done = subprocess.run(
            ["git", "cat-file", "--batch"],
            input="".join(f"{name}\n" for name in requests).encode("utf-8", "surrogateescape"),
            cwd=root,
            capture_output=True,
            timeout=30,
            check=False,
            env={**os.environ, **GIT_ENV},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    out, at = done.stdout, 0
    copies: list[bytes | None] = []
    for _ in requests:  # "<sha> <type> <size>\n<content>\n" or "<name> missing\n"
        end = out.find(b"\n", at)
        header = out[at:end].split(b" ")
        if end < 0 or len(header) != 3 or not header[2].isdigit():
            copies.append(None)
            at = end + 1 if end >= 0 else len(out)
            continue
        copies.append(out[end + 1 : end + 1 + int(header[2])])
        at = end + 1 + int(header[2]) + 1
    return copies


def _committed(root: str, paths: list[str]) -> dict[str, tuple[bool, bool]]:
    """For each of ``paths``, whether git's copy of it (in ``HEAD`` or in the index: staging the
    new content hides nothing) holds more than NULs and white space, and whether such a copy is
    UTF-8 text (not :func:`_binary`, nor a Git LFS pointer, whose checkout is binary); both
    true when git cannot tell (judged as lost)."""
    judged = {path: (True, True) for path in paths}
    copies = _copies(root, [f"{rev}:{path}" for path in paths for rev in ("HEAD", "")])
    if copies is None:
        return judged
    for index, path in enumerate(paths):
        held = [c for c in copies[2 * index : 2 * index + 2] if c is not None and c.strip(_BLANK)]
        if any(c is not None for c in copies[2 * index : 2 * index + 2]):
            text = any(not _binary(c[:_CHUNK]) and not c.startswith(LFS_POINTER) for c in held)
            judged[path] = (bool(held), text)
    return judged


def _unusable(before: _Stat, after: _Stat, executable: bool) -> bool:
    if not (stat.S_ISREG(before[3]) and stat.S_ISREG(after[3])):
        return False
    lost = before[3] & ~after[3]
    return bool(lost & stat.S_IRUSR or (executable and lost & stat.S_IXUSR))


def _under(folder: str, path: str) -> bool:
    return not folder or path.startswith(folder + "/")


def _executables(root: str) -> frozenset[str]:
    """The tracked paths git records as executable in its index or in ``HEAD`` (a mode change
    staged by the same call does not hide one)."""
    found = set(tracked_executables(root))
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            ["git", "ls-tree", "-r", "-z", "HEAD"],
            cwd=root,
            capture_output=True,
            timeout=30,
            check=False,
            env={**os.environ, **GIT_ENV},
        )
        for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
            meta, tab, path = entry.partition("\t")  # "<mode> <type> <object>\t<path>"
            if tab and meta.startswith("100755 "):
                found.add(path)
    return frozenset(found)


def lost_files(
    root: str,
    old: Mapping[str, _Stat],
    new: Mapping[str, _Stat],
    modified: Iterable[str],
    tracked: frozenset[str],
    locked: Iterable[str] = (),
    renamed: Iterable[tuple[str, str]] = (),
    locked_now: Iterable[str] = (),
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(emptied, unreadable)``: the tracked files among ``modified`` that had content and are
    now empty, blank or binary (see the module doc), and those left unusable by their mode or
    inside a folder newly ``locked`` (relative paths, ``""`` the workspace itself), or
    ``renamed`` (``(before, now)`` pairs) to a path where they are unusable so, or into a folder
    ``locked_now``; sorted, every unreadable file emptied too."""
    emptied: set[str] = set()
    unreadable: set[str] = set()
    readings: dict[str, str] = {}
    texts: list[str] = []  # still text: judged against git's copy when several were rewritten
    executables: frozenset[str] | None = None
    moves = list(renamed)
    for source, path in [(p, p) for p in modified] + moves:
        before, after = old.get(source), new.get(path)
        if source not in tracked or before is None or after is None or before[0] == 0:
            continue
        if after[0] == 0:
            emptied.add(source)
        elif before[3] & ~after[3] & (stat.S_IRUSR | stat.S_IXUSR):
            if executables is None and before[3] & ~after[3] & stat.S_IXUSR:
                executables = _executables(root)
            if _unusable(before, after, source in (executables or ())):
                unreadable.add(source)
        if source == path and path not in emptied and stat.S_ISREG(after[3]):
            reading = _reading(os.path.join(root, path))
            if reading is not None:
                readings[path] = reading
            else:
                texts.append(path)
    if readings:
        for path, (held, text) in _committed(root, sorted(readings)).items():
            if held and (readings[path] == "blank" or text):
                emptied.add(path)
    rewritten = [p for p in texts if p not in readings and p not in emptied]
    if len(rewritten) >= scrambled.MIN_FILES:  # `tr`, base64 of ciphertext, `x` over each
        emptied |= scrambled.scrambled(root, sorted(rewritten), _copies)
    for folder in locked:
        unreadable.update(p for p in tracked if _under(folder, p) and old.get(p, (0,))[0] > 0)
    folders = tuple(locked_now)
    for source, path in moves if folders else ():
        if source in tracked and old[source][0] > 0 and any(_under(f, path) for f in folders):
            unreadable.add(source)
    emptied |= unreadable
    return tuple(sorted(emptied)), tuple(sorted(unreadable))


def _top_level(paths: Iterable[str]) -> tuple[str, ...]:
    kept: list[str] = []
    for path in sorted(paths):
        if not kept or not path.startswith(kept[-1] + "/"):
            kept.append(path)
    return tuple(kept)


def lost_dirs(gone: Iterable[str], lost: Sequence[str], moved: set[str]) -> tuple[str, ...]:
    """Directories gone with a file lost in them, or empty ones (not those only renamed), the
    top-most of each tree."""
    kept = []
    for directory in gone:
        prefix = directory + "/"
        if any(path.startswith(prefix) for path in lost) or not any(
            path.startswith(prefix) for path in moved
        ):
            kept.append(directory)
    return _top_level(kept)


def stat_paths(
    root: str,
    paths: Iterable[str],
    files: dict[str, _Stat],
    skip: str | None = None,
    limit: int | None = None,
) -> None:
    """Add to ``files`` the stat (not followed) of each of ``paths`` (relative to ``root``) that
    exists and is no folder, except in ``.git`` or under ``skip``: the tracked files a walk
    stopped before reaching (the first ``limit`` of them)."""
    for path in itertools.islice(paths, limit):
        if ".git/" in f"/{path}" or (skip and f"{path}/".startswith(f"{skip}/")):
            continue
        try:
            info = os.lstat(os.path.join(root, path))
        except (OSError, ValueError):
            continue
        if not stat.S_ISDIR(info.st_mode):
            files[path] = stat_key(info)
