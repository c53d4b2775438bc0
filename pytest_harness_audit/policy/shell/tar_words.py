"""A ``tar`` command line read as ``tar`` reads it: its mode, its archive and its member names.

``tar xzf x.tgz ./SOUL.md`` (old-style letters, each letter that takes a value taking the next
word in turn), ``tar -xf x.tar -C . SOUL.md`` (short options, ``-fFILE`` attached, a cluster's
first letter that takes a value taking the rest of the cluster or the next word), ``tar
--extract --file=x.tar SOUL.md`` and ``--file x.tar`` (long options, an unambiguous prefix too),
options after the operands (GNU ``tar`` permutes them) and ``--`` ending the options. The words
that are no option nor value of one are the member names (the files packed, when creating).
"""

from __future__ import annotations

from typing import Final

#: The programs read here.
TARS: Final = frozenset({"tar", "bsdtar", "gtar"})
#: Short options that take a value, by program (``bsdtar -s PATTERN``; GNU ``-s`` takes none).
_SHORT_VALUED: Final = {"tar": "fCbTXKNgHILVF", "bsdtar": "fCbTXIs"}
#: Long options whose value may be the next word (``--file x.tar``).
_LONG_VALUED: Final = frozenset(
    {"--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--starting-file",
     "--newer", "--after-date", "--newer-mtime", "--listed-incremental", "--format",
     "--use-compress-program", "--tape-length", "--label", "--info-script", "--new-volume-script",
     "--blocking-factor", "--record-size", "--owner", "--group", "--mode", "--mtime",
     "--transform", "--xform", "--to-command", "--checkpoint-action", "--rsh-command",
     "--rmt-command", "--strip-components", "--suffix", "--index-file", "--volno-file",
     "--level", "--quoting-style", "--sort", "--warning", "--hole-detection", "--owner-map",
     "--group-map", "--xattrs-include", "--xattrs-exclude", "--exclude-tag",
     "--exclude-tag-all", "--exclude-tag-under", "--occurrence", "--options", "--names-from"}
)  # fmt: skip
#: Long options taking no value whose prefix a valued one shares (``--ex`` is ambiguous).
_LONG_FLAGS: Final = frozenset(
    {"--extract", "--exclude-vcs", "--exclude-caches", "--exclude-caches-all",
     "--exclude-caches-under", "--exclude-backups", "--exclude-vcs-ignores", "--to-stdout",
     "--overwrite", "--overwrite-dir", "--checkpoint", "--wildcards", "--no-wildcards"}
)  # fmt: skip
#: Letters of the modes, old style or short (``c`` create, ``r`` append, ``u`` update ...).
_MODES: Final = "AcdrtuxY"
_LONG_MODES: Final = {"--create": "c", "--append": "r", "--update": "u", "--extract": "x",
                      "--get": "x", "--list": "t", "--diff": "d", "--compare": "d",
                      "--concatenate": "A", "--catenate": "A", "--delete": "D"}  # fmt: skip

_LONG_UNVALUED: Final = _LONG_FLAGS | frozenset(_LONG_MODES)


class TarWords:
    """What a ``tar`` command line says (module doc): ``modes`` (its mode letters), ``values``
    (each option that took a value, as ``(option, value)``, ``-f`` as ``-f``, ``--file=X`` as
    ``--file``), and ``operands`` (the member names)."""

    def __init__(self) -> None:
        self.modes = ""
        self.values: list[tuple[str, str]] = []
        self.operands: list[str] = []
        self.flags: list[str] = []

    def value(self, *names: str) -> str | None:
        """The last value given to one of the options ``names`` (``None``: not given)."""
        found = [value for option, value in self.values if option in names]
        return found[-1] if found else None

    def all_values(self, *names: str) -> list[str]:
        """Every value given to one of the options ``names``, in order."""
        return [value for option, value in self.values if option in names]

    @property
    def archive(self) -> str | None:
        """The archive file (``-f``/``--file``); ``None``: none named (a tape, the standard
        input or output)."""
        return self.value("-f", "--file")

    def creates(self) -> bool:
        """Whether the archive is written: create, append, update, concatenate or delete."""
        return any(mode in self.modes for mode in "cruAD")

    def extracts(self) -> bool:
        """Whether members are extracted into files (not to the standard output)."""
        return "x" in self.modes and not any(f in ("-O", "--to-stdout") for f in self.flags)


def _long(word: str) -> tuple[str, bool]:
    """The long option ``word`` names (``--fil`` → ``--file``) and whether it takes a value."""
    option = word.partition("=")[0]
    if option in _LONG_VALUED or option in _LONG_MODES or option in _LONG_FLAGS:
        return option, option in _LONG_VALUED
    valued = [name for name in _LONG_VALUED if name.startswith(option)]
    others = [name for name in _LONG_UNVALUED if name.startswith(option)]
    if len(option) > 3 and len(valued) == 1 and not others:
        return valued[0], True
    if len(option) > 3 and len(others) == 1 and not valued:
        return others[0], False
    return option, False


def tar_words(name: str, args: list[str]) -> TarWords:
    """Read ``name args`` (``tar``, ``gtar``, ``bsdtar``) as that program reads them."""
    short_valued = _SHORT_VALUED["bsdtar" if name == "bsdtar" else "tar"]
    words = TarWords()
    index = 0
    if args and args[0][:1] not in ("-", ""):  # `tar xzf x.tgz`: old-style letters
        letters, index = args[0], 1
        for letter in letters:
            if letter in _MODES:
                words.modes += letter
            elif letter in short_valued and index < len(args):
                words.values.append(("-" + letter, args[index]))
                index += 1
            else:
                words.flags.append("-" + letter)
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            words.operands.extend(args[index:])
            break
        if word.startswith("--"):
            option, valued = _long(word)
            if option in _LONG_MODES:
                words.modes += _LONG_MODES[option]
            elif "=" in word:
                words.values.append((option, word.partition("=")[2]))
            elif valued and index < len(args):
                words.values.append((option, args[index]))
                index += 1
            else:
                words.flags.append(option)
        elif word[:1] == "-" and len(word) > 1:
            for at in range(1, len(word)):
                letter = word[at]
                if letter in _MODES:
                    words.modes += letter
                elif letter in short_valued:
                    value = word[at + 1 :]
                    if not value and index < len(args):
                        value, index = args[index], index + 1
                    words.values.append(("-" + letter, value))
                    break
                else:
                    words.flags.append("-" + letter)
        else:
            words.operands.append(word)
    return words


__all__ = ["TARS", "TarWords", "tar_words"]
