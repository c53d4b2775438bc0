"""Long options given by an unambiguous start, as GNU tools take them (``getopt_long``).

``date --fil=.env`` is ``date --file=.env``, ``env --split 'cat .env'`` is ``env
--split-string``, ``tar --use-comp=CMD`` is ``--use-compress-program``, ``sed --in -e d F`` is
``sed --in-place``: the readings test whole option names, so an abbreviation walked past them.
For the tools whose long options the reading acts on, a word that starts one of those options
(and is none of the tool's options itself) is read as that option in full. The table of each
tool holds the options the reading acts on and the tool's other options that start the same
way, so ``tar --file`` stays ``--file`` and is not taken for ``--files-from``. An abbreviation
the tool finds ambiguous makes it stop with an error: it is left as it is.
"""

from __future__ import annotations

from pytest_harness_audit.policy.shell.launchers import WRAPPER_OPTIONS

_COPIES = (
    "--target-directory", "--suffix", "--remove-destination", "--backup", "--no-target-directory"
)  # fmt: skip
_TABLES: dict[str, tuple[str, ...]] = {
    "date": ("--file", "--date", "--reference", "--set"),
    "du": ("--files0-from", "--exclude-from", "--exclude", "--max-depth", "--block-size",
           "--threshold", "--time", "--time-style", "--all"),
    "wc": ("--files0-from",),
    "sort": ("--files0-from", "--field-separator", "--compress-program", "--check", "--output",
             "--random-source"),
    "shuf": ("--output", "--random-source", "--input-range", "--echo"),
    "sed": ("--in-place", "--expression", "--file", "--follow-symlinks", "--separate",
            "--sandbox", "--silent"),
    "grep": ("--file", "--fixed-strings", "--files-with-matches", "--files-without-match",
             "--regexp", "--recursive", "--dereference-recursive", "--exclude", "--exclude-from",
             "--exclude-dir", "--include"),
    "tee": ("--append", "--ignore-interrupts", "--output-error"),
    "split": ("--filter", "--lines", "--line-bytes"),
    "tar": ("--file", "--files-from", "--to-stdout", "--to-command", "--checkpoint",
            "--checkpoint-action", "--use-compress-program", "--info-script", "--index-file",
            "--new-volume-script", "--newer", "--newer-mtime", "--rsh-command", "--rmt-command",
            "--remove-files", "--record-size", "--recursion", "--recursive-unlink",
            "--directory", "--exclude", "--exclude-from", "--extract", "--create", "--append"),
    "zip": ("--unzip-command", "--update", "--test", "--temp-path"),
    "man": ("--pager", "--html", "--prompt", "--path"),
    "script": ("--command", "--append", "--echo"),
    "awk": ("--source", "--file", "--exec", "--include", "--load", "--assign"),
    "cp": _COPIES,
    "mv": _COPIES,
    "ln": (*_COPIES, "--symbolic"),
    "install": (*_COPIES, "--strip", "--strip-program", "--mode", "--owner", "--group"),
    "xargs": ("--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines",
              "--max-chars", "--replace", "--eof", "--null", "--no-run-if-empty", "--interactive",
              "--open-tty", "--process-slot-var", "--exit", "--verbose", "--show-limits"),
    "env": ("--chdir", "--split-string", "--unset", "--ignore-environment", "--null",
            "--default-signal", "--ignore-signal", "--block-signal", "--list-signal-handling",
            "--debug"),
    "timeout": ("--kill-after", "--signal", "--foreground", "--preserve-status", "--verbose"),
}  # fmt: skip
_TABLES["gawk"] = _TABLES["awk"]
_TABLES["gsed"] = _TABLES["sed"]
for _name in ("egrep", "fgrep"):
    _TABLES[_name] = _TABLES["grep"]
for _name, (_valued, _) in WRAPPER_OPTIONS.items():
    _TABLES[_name] = tuple(dict.fromkeys([*_TABLES.get(_name, ()), *sorted(_valued)]))
#: Every name read here (the cheap test before any work).
ABBREVIATING = frozenset(_TABLES)


def full_options(name: str, args: list[str]) -> list[str]:
    """``args`` of tool ``name`` (one of :data:`ABBREVIATING`) with each abbreviated long
    option written in full (up to ``--``)."""
    table = _TABLES[name]
    done: list[str] = []
    for index, word in enumerate(args):
        if word == "--":
            return done + args[index:]
        if word[:2] == "--" and len(word) > 2 and word[2] != "=":
            option, equals, value = word.partition("=")
            if option not in table:
                matches = [full for full in table if full.startswith(option)]
                if len(matches) == 1:
                    word = matches[0] + equals + value
        done.append(word)
    return done


__all__ = ["ABBREVIATING", "full_options"]
