"""Git's stored copies of a workspace's credential files: loose objects the kernel can watch.

A credential file committed to the workspace's history is also stored by git, compressed, as a
blob; ``git cat-file -p HEAD:.env`` prints it without opening ``.env``. A program whose text
hides what it asks git for (a name built at run time, its output scrambled past the output
scan) reads the secret that way. The kernel tells it: while the blob is a *loose* object, a file
of its own under ``.git/objects``, git opens that file only to read that blob (a ``git log`` of
commits, ``git status`` with a fresh index or an existence check never do). Inside a pack it is
one object among all the others, and a pack is opened by any git command.

So the workspaces the harness builds keep their credential blobs loose
(:func:`pack_all_but`), and :func:`stored_objects` names the loose object files of a
workspace's credential files, for :mod:`.credential_reads` to watch. :func:`packed` tells
whether any pack holds one of them: a call that packed a credential blob (``git gc``) read it,
and hid the reads of later calls.

Not seen: a credential blob that was packed before the session began (a repository the
harness did not build), and blobs of older versions of a credential file, which hold no value
the session knows.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from bisect import bisect_left
from collections.abc import Iterable

from pytest_harness_audit.inspect.git_env import GIT_ISOLATION_ENV
from pytest_harness_audit.inspect.regular_files import read_regular

#: A credential file larger than this is not hashed (git's stored copy is then not watched).
_MAX_BYTES = 1 << 22
_PACK_INDEX_MAGIC = b"\377tOc"


def _objects_dir(root: str) -> str | None:
    objects = os.path.join(root, ".git", "objects")
    return objects if os.path.isdir(objects) else None


def _blob_ids(data: bytes) -> tuple[str, str]:
    """The object ids of a blob holding ``data`` in a SHA-1 and in a SHA-256 repository."""
    header = b"blob %d\0" % len(data)
    return hashlib.sha1(header + data).hexdigest(), hashlib.sha256(header + data).hexdigest()


def _git(root: str, *args: str, stdin: bytes | None = None) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            env={**os.environ, **GIT_ISOLATION_ENV},
            input=stdin,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def credential_blob_ids(root: str, sources: Iterable[str]) -> dict[str, str]:
    """Object id → credential file, for each of ``sources`` (relative to ``root``): the blob
    of its content now and the one of its committed version (``HEAD``)."""
    ids: dict[str, str] = {}
    wanted = list(dict.fromkeys(sources))
    for relative in wanted:
        data = read_regular(os.path.join(root, relative), _MAX_BYTES)
        if data is not None and len(data) <= _MAX_BYTES:
            for oid in _blob_ids(data):
                ids[oid] = relative
    listing = _git(root, "ls-tree", "-r", "-z", "HEAD", "--", *wanted) if wanted else None
    for entry in (listing or b"").split(b"\0"):
        meta, tab, path = entry.partition(b"\t")  # "<mode> blob <id>\t<path>"
        fields = meta.split()
        if tab and len(fields) == 3 and fields[1] == b"blob":
            ids.setdefault(fields[2].decode("ascii", "replace"), os.fsdecode(path))
    return ids


def stored_objects(root: str, sources: Iterable[str]) -> dict[str, str]:
    """The loose object files (relative to ``root``) holding a credential file's content, each
    with the credential file it stores."""
    objects = _objects_dir(root)
    if objects is None:
        return {}
    found: dict[str, str] = {}
    for oid, relative in credential_blob_ids(root, sources).items():
        path = os.path.join(objects, oid[:2], oid[2:])
        if os.path.isfile(path):
            found[os.path.relpath(path, root)] = relative
    return found


def object_id(path: str) -> str:
    """The object id of the loose object file at ``path`` (``…/objects/ab/cdef…``)."""
    folder, name = os.path.split(path)
    return os.path.basename(folder) + name


def packed(root: str, oids: Iterable[str]) -> frozenset[str]:
    """Which of ``oids`` a pack of the workspace's repository holds (by its index files)."""
    objects = _objects_dir(root)
    wanted = sorted({bytes.fromhex(oid) for oid in oids if _is_hex(oid)})
    if objects is None or not wanted:
        return frozenset()
    folder = os.path.join(objects, "pack")
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".idx")]
    except OSError:
        return frozenset()
    found: set[bytes] = set()
    for name in names:
        found |= _in_index(os.path.join(folder, name), wanted)
    return frozenset(raw.hex() for raw in found)


def holding_packs(root: str, oids: Iterable[str]) -> dict[str, str]:
    """Each pack file (relative to ``root``) holding one of ``oids``, with one it holds."""
    objects = _objects_dir(root)
    wanted = sorted({bytes.fromhex(oid) for oid in oids if _is_hex(oid)})
    if objects is None or not wanted:
        return {}
    folder = os.path.join(objects, "pack")
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".idx"))
    except OSError:
        return {}
    found: dict[str, str] = {}
    for name in names:
        held = _in_index(os.path.join(folder, name), wanted)
        if held:
            pack = os.path.join(folder, name[: -len(".idx")] + ".pack")
            found[os.path.relpath(pack, root)] = min(held).hex()
    return found


def _is_hex(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _in_index(path: str, wanted: list[bytes]) -> set[bytes]:
    """Which of ``wanted`` (sorted raw ids) the pack index (version 2) at ``path`` lists; an
    index that cannot be read lists all of them (what it holds cannot be told)."""
    try:
        with open(path, "rb") as index:
            header = index.read(8 + 256 * 4)
            if len(header) < 8 + 256 * 4 or header[:4] != _PACK_INDEX_MAGIC:
                return set(wanted)
            fanout = [int.from_bytes(header[8 + 4 * i : 12 + 4 * i], "big") for i in range(256)]
            found: set[bytes] = set()
            for raw in wanted:
                low = fanout[raw[0] - 1] if raw[0] else 0
                high = fanout[raw[0]]
                if high <= low:
                    continue
                index.seek(8 + 256 * 4 + low * len(raw))
                names = index.read((high - low) * len(raw))
                listed = [names[i : i + len(raw)] for i in range(0, len(names), len(raw))]
                at = bisect_left(listed, raw)
                if at < len(listed) and listed[at] == raw:
                    found.add(raw)
            return found
    except OSError:
        return set(wanted)


def pack_all_but(root: str, keep_loose: Iterable[str]) -> bool:
    """Pack every object reachable from the refs of the repository at ``root`` except the
    blobs ``keep_loose``, and delete the loose objects the pack holds: the ids kept out stay
    loose files. False when git failed (the repository is left as it was)."""
    kept = set(keep_loose)
    listing = _git(root, "rev-list", "--objects", "--all")
    if listing is None:
        return False
    lines = [line for line in listing.splitlines() if line[:64].split(b" ")[0].decode() not in kept]
    pack = os.path.join(".git", "objects", "pack", "pack")
    if _git(root, "pack-objects", "-q", pack, stdin=b"\n".join(lines) + b"\n") is None:
        return False
    return _git(root, "prune-packed", "-q") is not None


__all__ = [
    "credential_blob_ids",
    "holding_packs",
    "object_id",
    "pack_all_but",
    "packed",
    "stored_objects",
]
