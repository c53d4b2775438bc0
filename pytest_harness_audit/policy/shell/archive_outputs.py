"""The files archivers and decompressors write by an operand or an option of their own.

A program's output file is a write like ``> FILE`` (:mod:`.output_files`); for these it is:

* the archive a ``tar``/``bsdtar``/``gtar`` (and ``cmake -E tar``) creates, appends to,
  updates or deletes from (``tar cf SOUL.md app``: ``-f``/``--file``, not ``-`` the standard
  output), and in any mode the files its own options write: ``--index-file=F`` (the listing),
  ``--volno-file=F``, and in create mode ``-g``/``--listed-incremental=F`` (the snapshot);
* the archive of ``7z a|u|d|rn ARCHIVE`` (``.7z`` added to a name without an extension), ``jar
  c|u`` with ``f`` (the next word), ``pax -w -f F``, ``ar`` ``r``/``q``/``d``/``m`` (its
  first operand), ``rar a|u|m|d``;
* the file a decompressor writes beside its operand: ``gunzip x.gz`` (``gzip -d``, ``bunzip2``,
  ``unxz``, ``xz -d``, ``unzstd``, ``zstd -d``, ``uncompress`` …) writes ``x`` (the suffix
  ``-S SUF`` names too; ``.tgz`` → ``.tar``), unless it writes to the standard output
  (``-c``), only tests or lists; ``zstd -d -o F`` and ``lz4 -d IN OUT`` write their output.

The name a gzip file stores and ``gunzip -N`` restores is not read: that write is left to the
effect inspection (protected files changed).
"""

from __future__ import annotations

import posixpath
from typing import Final

from pytest_harness_audit.policy.shell.option_words import split_options
from pytest_harness_audit.policy.shell.tar_words import TARS, tar_words
from pytest_harness_audit.policy.shell.tools import option_value

_SEVENS: Final = frozenset({"7z", "7za", "7zz"})
#: Decompressors, with the suffixes each takes off (``.tgz`` → ``.tar``), and whether they
#: decompress only when told (``-d``).
_SUFFIXES: Final = {
    "gzip": (".gz", "-gz", ".z", "-z", "_z", ".Z", ".tgz", ".taz"),
    "bzip2": (".bz2", ".bz", ".tbz2", ".tbz"),
    "xz": (".xz", ".lzma", ".txz", ".tlz"),
    "zstd": (".zst", ".zstd", ".tzst"),
    "lz4": (".lz4",),
    "compress": (".Z",),
    "brotli": (".br",),
}
_DECOMPRESSORS: Final = {
    "gunzip": "gzip", "zcat": "", "bunzip2": "bzip2", "unxz": "xz", "unlzma": "xz",
    "unzstd": "zstd", "uncompress": "compress", "unlz4": "lz4", "pigz": "gzip", "unpigz": "gzip",
    "gzip": "gzip", "bzip2": "bzip2", "xz": "xz", "lzma": "xz", "zstd": "zstd", "lz4": "lz4",
    "brotli": "brotli",
}  # fmt: skip
_ALWAYS: Final = frozenset({"gunzip", "bunzip2", "unxz", "unlzma", "unzstd", "uncompress",
                            "unlz4", "unpigz"})  # fmt: skip
_STDOUT: Final = frozenset({"-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list"})
_VALUED: Final = frozenset({"-S", "--suffix", "-o", "--output", "-T", "--threads", "-p",
                            "--processes", "-b", "-D", "--dict"})  # fmt: skip
#: The commands read here (the cheap test before any parsing).
ARCHIVE_PROGRAMS: Final = (
    TARS | _SEVENS | {"jar", "pax", "ar", "rar"} | frozenset(_DECOMPRESSORS)
)  # fmt: skip


def archive_outputs(name: str, args: list[str]) -> list[str]:
    """The files ``name args`` writes as an archiver or decompressor (module doc)."""
    if name in TARS:
        return tar_outputs(name, args)
    if name in _SEVENS:
        operands = [a for a in args if not a.startswith(("-", "@"))]
        if operands[:1] in (["a"], ["u"], ["d"], ["rn"]) and len(operands) > 1:
            archive = operands[1]
            return [archive if posixpath.splitext(archive)[1] else archive + ".7z"]
        return []
    if name == "jar":
        letters = args[0].lstrip("-") if args else ""
        if ("c" in letters or "u" in letters) and "f" in letters and len(args) > 1:
            return [args[1]] if args[1] != "-" else []
        return []
    if name == "pax":
        options, _operands = split_options(args, frozenset({"-f", "-s", "-o", "-x", "-b"}))
        writing = any(o[:1] == "-" and o[1:2] != "-" and "w" in o for o in options)
        output = option_value(options, ("-f",))
        return [output] if writing and output and output != "-" else []
    if name == "ar":  # `ar rc ARCHIVE FILE…`, `ar rb POSITION ARCHIVE FILE…`
        key = args[0].lstrip("-") if args else ""
        operands = [a for a in args[1:] if not a.startswith("-")]
        at = 1 if set(key) & set("abi") else 0
        return operands[at : at + 1] if set(key) & set("rqdm") else []
    if name == "rar":
        operands = [a for a in args if not a.startswith("-")]
        return operands[1:2] if operands[:1] in (["a"], ["u"], ["m"], ["d"]) else []
    return _decompressed(name, args)


def tar_outputs(name: str, args: list[str]) -> list[str]:
    """The files a ``tar`` command line writes besides the members it extracts."""
    words = tar_words(name, args)
    written = words.all_values("--index-file", "--volno-file")
    archive = words.archive
    if words.creates():
        if archive and archive != "-":
            written.append(archive)
        written.extend(words.all_values("-g", "--listed-incremental"))
    return [w for w in written if w and w != "-"]


def _decompressed(name: str, args: list[str]) -> list[str]:
    family = _DECOMPRESSORS.get(name, "")
    options, operands = split_options(args, _VALUED)
    letters = "".join(o[1:] for o in options if o[:1] == "-" and o[1:2] != "-")
    decompress = name in _ALWAYS or "d" in letters or "--decompress" in options
    decompress = decompress or "--uncompress" in options
    if not family or not decompress:
        return []
    if any(o in _STDOUT for o in options) or set(letters) & set("ctl"):
        return []
    output = option_value(options, ("-o", "--output"))
    if family in ("zstd", "brotli") and output:
        return [output] if output != "-" else []
    if family == "lz4" and len(operands) == 2:  # `lz4 -d IN OUT`
        return operands[1:]
    suffixes = _SUFFIXES[family]
    given = option_value(options, ("-S", "--suffix"))
    written: list[str] = []
    for operand in operands:
        if operand == "-":
            continue
        for suffix in ((given,) if given else ()) + suffixes:
            if operand.endswith(suffix) and len(operand) > len(suffix):
                stem = operand[: -len(suffix)]
                written.append(stem + ".tar" if suffix.startswith((".t", "-t")) else stem)
                break
    return written


__all__ = ["ARCHIVE_PROGRAMS", "archive_outputs", "tar_outputs"]
