"""Archives extracted: each member is a file the command writes.

``tar -xf x.tar -C .git/hooks``, ``unzip -o x.zip -d .git``, ``cd .git && cpio -idm < x.cpio``,
``python -m zipfile -e x.zip .git/hooks``: an extraction writes its members under its folder
(``tar -C DIR``/``--directory``, ``unzip -d DIR``, ``7z x -oDIR``, ``cpio -D DIR``, ``python -m
zipfile -e ARCHIVE DIR``, ``python -m tarfile -e ARCHIVE [DIR]``; where the command runs without
one), as ``cp`` writes its destination.

* An archive of the workspace that can be read (a tar file, compressed by gzip, bzip2 or xz, or
  a zip file; at most :data:`MAX_ARCHIVE` bytes read, :data:`MAX_MEMBERS` members) is listed,
  and each member's path under the folder is a write, as the extractor names it (a leading
  ``/`` dropped, ``--strip-components=N`` applied, ``unzip -j`` and ``7z e`` keeping the base
  name).
* A member named on the command line (``tar xf x.tar SOUL.md``, ``tar -T FILE`` of known names,
  ``unzip x.zip SOUL.md``, ``7z x x.7z SOUL.md``, ``cpio -i SOUL.md``) is a write under the
  folder whether or not the archive can be listed; one given as a pattern (``unzip x.zip
  '*.md'``, ``tar --wildcards``, ``bsdtar``) is not one file, and is left to the listing.
* An archive whose members cannot be known (read from the standard input, made or fetched by
  the same command, of another format, renamed by ``--transform``) extracted into a folder
  where git or Python take code from (inside a ``.git`` folder, the home folder, a
  ``site-packages`` folder) is read as writing the files there that run code: ``config``,
  ``hooks/*``, ``.gitconfig`` … under it. Elsewhere its members are left to the effect
  inspection (protected files changed), and what the same command runs afterwards is unknown
  (:mod:`.rewrites`).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import posixpath
import re
import tarfile
import zipfile
from typing import IO, Final

from pytest_harness_audit.policy.shell.code_places import CODE_FILES, takes_code
from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.option_words import split_options
from pytest_harness_audit.policy.shell.rewrites import rewrites_tree
from pytest_harness_audit.policy.shell.tar_words import TARS, tar_words
from pytest_harness_audit.policy.shell.tools import option_value

#: Most bytes of one archive read (after decompression) to list its members.
MAX_ARCHIVE: Final = 64 * 1024 * 1024
#: Most members of one archive read as writes.
MAX_MEMBERS: Final = 4096
#: The commands read here (the cheap test before any parsing); ``python -m zipfile``/``tarfile``
#: too.
EXTRACTORS: Final = frozenset(
    {"tar", "bsdtar", "gtar", "unzip", "7z", "7za", "7zz", "cpio", "jar", "ar"}
)
_UNZIP_VALUED: Final = frozenset({"-d", "-x", "-P", "-I", "-O"})
_CPIO_VALUED: Final = frozenset(
    {"-F", "--file", "-H", "--format", "-O", "-I", "-E", "-R", "-C", "-M", "-D", "--directory",
     "--pattern-file", "--owner", "--io-size", "--message"}
)  # fmt: skip
_Stream = IO[bytes] | io.BufferedIOBase
#: A name the extractor matches as a pattern (``unzip x.zip '*.md'``): not one file.
_WILDCARDS: Final = re.compile(r"[*?\[]")


class _Extraction:
    """One extraction: its archive (``None``: the standard input or not named), its folder as
    written (``moved``: the command's ``-C`` moves it, :mod:`.place`), and how member names
    change."""

    def __init__(self, archive: str | None, folder: str, moved: str = "") -> None:
        self.archive = archive
        self.folder = folder
        self.moved = moved
        self.strip = 0
        self.flat = False
        self.renamed = False
        self.absolute = False
        self.named: list[str] = []
        self.patterns = True


def extracted(name: str, args: list[str], ctx: Context) -> None:
    """Record the files ``name args`` writes by extracting an archive (module doc)."""
    if name in TARS:
        found = _tar(name, args, ctx)
    elif name == "unzip":
        found = _unzip(args)
    elif name in ("7z", "7za", "7zz"):
        found = _seven(args)
    elif name == "cpio":
        found = _cpio(args, ctx)
    elif name in ("jar", "ar"):
        found = _jar_or_ar(name, args)
    elif name.startswith("python"):
        found = _python(args)
    else:
        found = None
    if found is None:
        return
    members = None if found.renamed else _members(found.archive, ctx)
    writes = ctx.reading.writes
    if not found.renamed:  # `tar xf x.tar SOUL.md`: a member named is written, known or not
        for member in found.named:
            path = _member_path(member, found)
            if path and not (found.patterns and _WILDCARDS.search(path)):
                writes.append(posixpath.normpath(posixpath.join(found.folder, path)))
    if members is None:
        place = posixpath.join(found.moved, found.folder) if found.moved else found.folder
        if takes_code(place, ctx):
            writes.extend(posixpath.join(found.folder, name) for name in CODE_FILES)
        elif ctx.workspace_root is None:  # where the command runs is not known: from `.git`?
            writes.extend(posixpath.join(found.folder, name) for name in CODE_FILES[:3])
        return
    real = ctx.real_path(posixpath.join(found.moved, found.folder) if found.moved else found.folder)
    for member in members:
        path = _member_path(member, found)
        if path:
            writes.append(posixpath.normpath(posixpath.join(found.folder, path)))
            if real is not None:  # and where it lands, through the links of the workspace
                writes.append(os.path.realpath(os.path.join(real, path)))


def _member_path(member: str, found: _Extraction) -> str:
    if found.absolute and member.startswith("/"):
        return posixpath.normpath(member)  # `tar -P`: where it says
    parts = [p for p in member.split("/") if p and p != "."]
    if found.flat:
        return parts[-1] if parts else ""
    return "/".join(parts[found.strip :])


def _tar(name: str, args: list[str], ctx: Context) -> _Extraction | None:
    if not rewrites_tree(name, args):
        return None
    words = tar_words(name, args)
    if not words.extracts():
        return None
    archive = None if words.archive == "-" else words.archive
    found = _Extraction(archive, ".", words.value("-C", "--directory") or "")
    strip = words.value("--strip-components", "--strip")
    if strip is not None:
        found.strip = int(strip) if strip.isdigit() and len(strip) < 4 else -1
    found.absolute = any(w in ("-P", "--absolute-names") for w in words.flags)
    renames = words.all_values("--transform", "--xform", "--one-top-level")
    renames += words.all_values("-s") if name == "bsdtar" else []  # GNU's `-s`: same order
    found.renamed = found.strip < 0 or bool(renames) or "--one-top-level" in words.flags
    found.named = list(words.operands)
    for listing in words.all_values("-T", "--files-from"):  # `tar xf x.tar -T names.txt`
        text = ctx.stdin_text if listing in ("-", "/dev/stdin") else ctx.workspace_text(listing)
        found.named.extend(line.strip() for line in (text or "").splitlines()[:MAX_MEMBERS])
    found.patterns = name == "bsdtar" or "--wildcards" in words.flags
    return found


def _unzip(args: list[str]) -> _Extraction | None:
    """``unzip [-opts] ARCHIVE [MEMBER…] [-x EXCLUDED…] [-d DIR]`` (options anywhere)."""
    if not rewrites_tree("unzip", args):
        return None
    options: list[str] = []
    operands: list[str] = []
    excluding = False
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word[:1] == "-" and len(word) > 1:
            options.append(word)
            excluding = word == "-x"
            if word in _UNZIP_VALUED and word != "-x" and index < len(args):
                options.append(args[index])
                index += 1
        elif not excluding or not operands:
            operands.append(word)
    letters = "".join(o[1:] for o in options if o[:1] == "-" and o[1:2] != "-")
    if set(letters) & set("pcz"):  # to the standard output, or the comment shown: no file
        return None
    found = _Extraction(operands[0] if operands else None, option_value(options, ("-d",)) or ".")
    found.flat = "j" in letters
    found.named = operands[1:]
    return found


def _seven(args: list[str]) -> _Extraction | None:
    if args[:1] not in (["x"], ["e"]):
        return None
    operands = [a for a in args[1:] if not a.startswith(("-", "@"))]
    folder = next((a[2:] for a in args if a.startswith("-o") and len(a) > 2), ".")
    found = _Extraction(operands[0] if operands else None, folder)
    found.flat = args[0] == "e"
    found.renamed = any(a.startswith("-si") for a in args)
    # `7z x x.7z SOUL.md`, `-i!SOUL.md`, `-ir!SOUL.md` (recursed: any folder's)
    included = [a.partition("!")[2] for a in args if a.startswith("-i") and "!" in a]
    found.named = operands[1:] + included
    return found


def _cpio(args: list[str], ctx: Context) -> _Extraction | None:
    """``cpio -i [PATTERN…] < ARCHIVE``: no reader of its formats here, so its members are not
    known; the patterns it is given are (``-f``: all but those; ``-t``: listed, not written)."""
    if not rewrites_tree("cpio", args):
        return None
    options, operands = split_options(args, _CPIO_VALUED)
    letters = "".join(o[1:] for o in options if o[:1] == "-" and o[1:2] != "-")
    if "t" in letters or "--list" in options:
        return None
    found = _Extraction(None, option_value(options, ("-D", "--directory")) or ".")
    found.renamed = "r" in letters or "--rename" in options
    if "f" not in letters and "--nonmatching" not in options:
        found.named = operands
        listing = option_value(options, ("-E", "--pattern-file"))  # a file of patterns
        text = ctx.workspace_text(listing) if listing else None
        found.named.extend(line.strip() for line in (text or "").splitlines()[:MAX_MEMBERS])
    return found


def _jar_or_ar(name: str, args: list[str]) -> _Extraction | None:
    """``jar xf ARCHIVE [MEMBER…]`` and ``ar x ARCHIVE [MEMBER…]``: the members named (their
    archives are not listed here)."""
    key = args[0].lstrip("-") if args else ""
    if "x" not in key:
        return None
    operands = [a for a in args[1:] if not a.startswith("-")]
    found = _Extraction(None, ".")
    on_input = name == "jar" and "f" not in key  # `jar x MEMBER < x.jar`
    found.named = operands if on_input else operands[1:]
    found.patterns = False
    found.flat = name == "ar"  # `ar x` writes each member by its base name
    return found


def _python(args: list[str]) -> _Extraction | None:
    """``python -m zipfile -e ARCHIVE DIR``, ``python -m tarfile -e ARCHIVE [DIR]``."""
    if "-m" not in args[:8]:
        return None
    at = args.index("-m")
    module, rest = args[at + 1 : at + 2], args[at + 2 :]
    if module not in (["zipfile"], ["tarfile"]) or rest[:1] not in (["-e"], ["--extract"]):
        return None
    operands = rest[1:]
    return _Extraction(operands[0] if operands else None, operands[1] if len(operands) > 1 else ".")


def _members(archive: str | None, ctx: Context) -> list[str] | None:
    """The member names of a workspace ``archive`` (``None``: not known)."""
    if archive is None or "$" in archive:
        return None
    real = ctx.workspace_folder(archive)
    if real is None or not os.path.isfile(real) or archive in ctx.reading.writes:
        return None  # (one written by the same command: its text on disk is not the one used)
    try:
        with open(real, "rb") as raw:
            head = raw.read(6)
            raw.seek(0)
            if head[:4] == b"PK\x03\x04" or head[:4] == b"PK\x05\x06":
                with zipfile.ZipFile(raw) as archive_file:
                    infos = archive_file.infolist()
                    if len(infos) > MAX_MEMBERS:
                        return None
                    return [info.filename for info in infos]
            return _tar_members(_decompressed(raw, head))
    except (OSError, EOFError, ValueError, tarfile.TarError, zipfile.BadZipFile, lzma.LZMAError):
        return None


def _decompressed(raw: IO[bytes], head: bytes) -> _Stream:
    if head[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw)
    if head[:3] == b"BZh":
        return bz2.BZ2File(raw)
    if head[:6] == b"\xfd7zXZ\x00":
        return lzma.LZMAFile(raw)
    return raw


class _Bounded(io.RawIOBase):
    """A stream that fails once more than :data:`MAX_ARCHIVE` bytes have been read."""

    def __init__(self, inner: _Stream) -> None:
        self.inner = inner
        self.left = MAX_ARCHIVE

    def readable(self) -> bool:
        """A readable stream."""
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        """Read into ``buffer``, failing past the bound."""
        data = self.inner.read(min(len(buffer), self.left + 1))
        self.left -= len(data)
        if self.left < 0:
            raise ValueError("archive too large to list")
        buffer[: len(data)] = data
        return len(data)


def _tar_members(stream: _Stream) -> list[str] | None:
    names: list[str] = []
    with tarfile.open(fileobj=io.BufferedReader(_Bounded(stream)), mode="r|") as archive:
        for info in archive:
            names.append(info.name)
            if len(names) > MAX_MEMBERS:
                return None
    return names


__all__ = ["EXTRACTORS", "MAX_ARCHIVE", "MAX_MEMBERS", "extracted"]
