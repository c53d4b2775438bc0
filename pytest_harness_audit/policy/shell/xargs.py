"""The command ``xargs`` runs: its words, then the names on its input (or ``-a FILE``'s).

``echo .env | xargs cat`` runs ``cat .env`` (``-0``/``-d X``: the items between NULs, between
``X``s, a line with its blanks whole: ``echo 'rm -rf app' | xargs -0 sh -c``); ``ls -a | xargs
-I % sh -c 'cat %'`` runs the command once a name with ``%`` replaced by the name: each such
command is read as a script (at most :data:`_MAX_RUNS` of them, names that look like credential
files first). ``parallel CMD ::: ARGS`` runs its command template once an argument.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.option_files import option_files
from pytest_harness_audit.policy.shell.projects import INTERPRETERS, SHELLS

#: Most commands of ``xargs -I`` read one by one (the names after them join the last one).
_MAX_RUNS: Final = 16
#: ``xargs``'s and ``parallel``'s option naming the file whose words are the arguments.
_ARG_FILE: Final = frozenset({"-a", "--arg-file"})
#: ``xargs``'s other options with a value (``-0a F``: ``F`` is ``-a``'s).
_XARGS_VALUED: Final = frozenset({"-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P",
                           "--max-procs", "-s", "--max-chars", "--process-slot-var"})  # fmt: skip
#: ``parallel``'s options with a value that may come up before its command.
_PARALLEL_VALUED: Final = frozenset({"-j", "--jobs", "-S", "--sshlogin", "-d", "--delimiter", "-n",
                              "--max-args", "-N", "-I", "--colsep", "-C", "--results", "--joblog",
                              "--tmpdir", "--timeout", "--delay", "-E", "-s", "--max-chars",
                              "-L", "--max-lines", "-P", "--max-procs"})  # fmt: skip
#: The name ``xargs -I`` is read as giving its command when the names on its input are not
#: known (it runs the command all the same: ``… | xargs -I{} rm -rf {}`` deletes them).
UNKNOWN_NAME: Final = "{unknown}"


def xargs_command(options: list[str], rest: list[str], ctx: Context) -> list[str] | None:
    """The argv ``xargs OPTIONS REST`` runs (``None``: read here, one script a name); the file
    ``-a FILE`` names is read, as ``cat`` reads it (``xargs -a .env echo`` prints its words)."""
    found = option_files(options, _ARG_FILE, _XARGS_VALUED)
    if not found and rest:  # `-0a F`: a cluster whose last flag takes the word after it
        found = option_files([*options, rest[0]], _ARG_FILE, _XARGS_VALUED)
        rest = rest[1:] if found else rest
    path = found[0] if found else None
    if path in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
        path = None  # `xargs -a /dev/stdin`: its standard input
    unknown = False
    if path is not None:
        ctx.reading.reads.append(path)
        text = ctx.written_names(path)  # `ls -a | awk … > l`: the names it may hold
        if text is None:  # `ls app/*.py > l`: words not known, as those of a pipe
            text, unknown = ctx.words_text(path)
        names = text.split() if text is not None else []
    else:
        # `-0`'s items, and the words too: a listing's names are read a line each
        whole = _delimited(options, ctx.stdin_text) or []
        names = list(dict.fromkeys([*whole, *(ctx.stdin_fields() or [])]))
        unknown = not names and ctx.stdin_unknown
    command = rest or ["echo"]
    marker = _replace_string(options)
    if unknown and path is not None and _runs_words(command, marker):
        ctx.unknown(f"xargs runs words of a file written earlier in the command: {path}")
    if marker is None or not any(marker in word for word in command):
        return command + names  # none known: the command alone (`… | xargs git add -f`)
    if not names and marker is not None and (path is not None or ctx.stdin_text is not None):
        # `ls .. | xargs -I{} chmod -R 000 ../{}`: a listing outside the workspace names only
        # its credential files; the names it prints are not known, and each runs the command
        unknown = True
    if unknown:
        names = [UNKNOWN_NAME]  # `curl … | xargs -I{} rm -rf {}`: a name not known runs it
    names = sorted(names, key=lambda name: not name.startswith("."))  # dotfiles first
    for name in names[:_MAX_RUNS]:
        ctx.script(shlex.join([word.replace(marker, name) for word in command]))
    if len(names) > _MAX_RUNS:
        joined = " ".join(shlex.quote(name) for name in names[_MAX_RUNS:])
        ctx.script(shlex.join(command).replace(marker, joined))
    return None


#: Programs that run their arguments (as a program, a script or code), not only read them.
_RUNNERS = SHELLS | {"env", "sudo", "doas", "su", "runuser", "eval", "exec", "command", "nohup",
                     "nice", "ionice", "timeout", "time", "stdbuf", "setsid", "busybox", "xargs",
                     "parallel", "watch", "flock", "chroot", "unshare", "script"}  # fmt: skip


def _delimited(options: list[str], text: str | None) -> list[str] | None:
    """The items ``xargs -0`` (the input between NULs: a line whole, its newline included) or
    ``-d X`` (between ``X``s) takes from a known input ``text``; ``None``: blanks split it."""
    if text is None:
        return None
    delimiter = None
    for index, word in enumerate(options):
        if word == "--null" or re.fullmatch(r"-[rtpx]*0[rtpx0]*", word):
            delimiter = "\0"
        elif word in ("-d", "--delimiter") and index + 1 < len(options):
            delimiter = options[index + 1]
        elif word.startswith(("--delimiter=", "-d")) and word not in ("-d", "--delimiter"):
            delimiter = word.removeprefix("--delimiter=").removeprefix("-d")
    if delimiter is None:
        return None
    delimiter = {"\\n": "\n", "\\t": "\t", "\\0": "\0"}.get(delimiter, delimiter)[:1] or "\0"
    items = text.split(delimiter)
    return items[:-1] if items and not items[-1] else items


def _runs_words(command: list[str], marker: str | None) -> bool:
    """Whether ``command``, given words not known, may run them as a program or code (``sh
    -c``, ``env``, ``python``, ``-I{} {}``)."""
    if not command:
        return False
    name = command[0].rsplit("/", 1)[-1]
    return (
        name in _RUNNERS
        or INTERPRETERS.fullmatch(name) is not None
        or (marker is not None and marker in command[0])
    )


def _replace_string(options: list[str]) -> str | None:
    """The replace string of ``-I R``/``-IR``/``-i[R]``/``--replace[=R]`` (``{}`` by default)."""
    for index, word in enumerate(options):
        if word == "-I" and index + 1 < len(options):
            return options[index + 1]
        if word.startswith("-I") and len(word) > 2:
            return word[2:]
        if word.startswith("-i") or word == "--replace":
            return word[2:] or "{}"
        if word.startswith("--replace="):
            return word.partition("=")[2] or "{}"
    return None


def parallel(argv: list[str], ctx: Context) -> None:
    """``parallel CMD ::: ARGS``: each argument in turn into the command template (``-a FILE``:
    the lines of ``FILE``, which is read)."""
    words = argv[1:]
    given: list[str] = []
    while words and words[0].startswith("-"):
        option = words.pop(0)
        if option == "--":
            break
        files = option_files([option, *words[:1]], _ARG_FILE, _PARALLEL_VALUED)
        given.extend(files)
        if option in _ARG_FILE or option in _PARALLEL_VALUED:
            words = words[1:]  # its value
    ctx.reading.reads.extend(given)
    template: list[str] = []
    while words and words[0] not in (":::", "::::", ":::+"):
        template.append(words.pop(0))
    values = [w for w in words if w not in (":::", "::::", ":::+")]
    if given:  # `parallel -a l cat`: the names in the files given
        values += [
            n
            for v in given[:16]
            for n in (ctx.written_names(v) or ctx.workspace_text(v) or "").split()
        ]
    values = values or ctx.stdin_fields() or [""]
    if "::::" in words:  # `parallel cat :::: <(ls -a)`: the names in the files given
        values = [
            n
            for v in values[:16]
            for n in (ctx.written_names(v) or ctx.workspace_text(v) or v).split()
        ]
    text = " ".join(template)
    for value in values[:16]:
        script = text.replace("{}", value) if "{}" in text else f"{text} {value}"
        ctx.script(script)


__all__ = ["UNKNOWN_NAME", "parallel", "xargs_command"]
