"""What one simple command does to files, from its argv: the tools the policy knows.

* **Wrappers** run the rest of their argv as a command (``env``, ``sudo``, ``doas``, ``nice``,
  ``nohup``, ``timeout``, ``xargs``, ``command``, ``exec``, ``time``, ``busybox``, ``stdbuf``,
  ``setsid``, ``ionice``, ``flock``, ``parallel``, ``watch`` …), by any path and in any case.
* **Shells** run a script: ``bash -c TEXT``, ``su -c TEXT``, ``eval``, or their standard input.
* **Destroys** (recursive or irrecoverable): ``rm`` with any option, ``shred``, ``truncate`` to
  size 0, ``git clean -f``, ``git reset --hard``, ``rsync --delete``, ``dd`` onto a disk,
  ``find -delete`` with no test, ``mkfs``. **Deletes** (one file each): plain ``rm``,
  ``unlink``, ``rmdir``, ``find … -delete`` with tests.
* **Writes**: redirections, ``tee``, ``cp``/``mv``/``ln``/``install``/``rsync`` onto the last
  operand, onto ``-t DIR``, or into a directory receiving a file of the same name (``cp
  staging/SOUL.md .`` writes ``SOUL.md``); a hard link writes the file it links (``ln SOUL.md
  p2.md``); ``sed -i``/``perl -i``, ``truncate``, ``touch``, ``dd of=``.
* **Reads**: every operand of a command is a file it may read (``--opt=value``, ``KEY=value``
  and ``@file`` values too), except where a tool takes text: ``echo``/``printf``, commit
  messages (``git commit -m``), search patterns (``grep PATTERN``), ``sed``/``awk`` scripts.
  ``git show REV:PATH`` and ``git cat-file -p REV:PATH`` read ``PATH``; a copy reads its
  source. ``git log -p`` over the whole history is noted as ``history``.
"""

from __future__ import annotations

import posixpath
import re
from typing import Protocol

from pytest_harness_audit.policy.shell.code import code_paths

_WRAPPER_OPTIONS: dict[str, tuple[frozenset[str], int]] = {
    # name: (options taking a value, positional words before the command)
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0),
    "sudo": (frozenset("-u -g -h -p -C -D -r -t -U -T --user --group --host --prompt".split()), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "setsid": (frozenset(), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "unbuffer": (frozenset(), 0),
    "caffeinate": (frozenset({"-t", "-w"}), 0),
    "strace": (frozenset({"-o", "-e", "-p", "-s"}), 0),
    "ltrace": (frozenset({"-o", "-e", "-p", "-s"}), 0),
    "xargs": (
        frozenset("-I -L -n -P -s -d -E -a --arg-file --delimiter --max-args --max-procs".split()),
        0,
    ),
    "flock": (frozenset({"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"}), 1),
    "watch": (frozenset({"-n", "--interval", "-d"}), 0),
    "runuser": (frozenset({"-u", "--user", "-g", "--group"}), 0),
    "sg": (frozenset(), 1),
    "firejail": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
    "torsocks": (frozenset(), 0),
}
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "rbash", "fish"})
_SHELL_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
INTERPRETERS = re.compile(
    r"(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl|ruby|php|lua|rscript|osascript)"
)
_CODE_OPTIONS = frozenset({"-c", "-e", "-E", "--eval", "-r", "--command", "-p", "--print"})
_TEXT_COMMANDS = frozenset(
    {"echo", "printf", "true", "false", ":", "test", "[", "type", "which", "hash", "alias",
     "set", "unset", "export", "declare", "local", "readonly", "typeset", "return", "exit",
     "shift", "read", "cd", "pushd", "popd", "wait", "sleep", "kill", "trap", "let", "jobs"}
)  # fmt: skip
#: Commands that act on names, not on what the files hold (``ls .*`` reads no secret).
_NAME_COMMANDS = frozenset(
    {"ls", "stat", "du", "realpath", "readlink", "basename", "dirname", "mkdir", "tree", "exa",
     "eza", "lsd", "pwd", "whoami", "date", "cd", "umask"}
)  # fmt: skip
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk"})
_RM_FLAGS = re.compile(r"-[dfiIvRr]*[rRf][dfiIvRr]*|--recursive|--force")
_DISK = re.compile(r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|mapper/)")
_FIND_TESTS = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -newer -mtime -mmin "
    "-atime -amin -ctime -cmin -size -user -group -perm -empty -links -lname -ilname -inum "
    "-samefile -uid -gid -nouser -nogroup -readable -writable -executable -prune".split()
)
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_COPY_OPTIONS = {
    "cp": frozenset({"-S", "--suffix"}),
    "mv": frozenset({"-S", "--suffix"}),
    "ln": frozenset({"-S", "--suffix"}),
    "link": frozenset(),
    "install": frozenset("-S --suffix -m --mode -o --owner -g --group".split()),
    "rsync": frozenset(
        "-e --rsh -f --filter --exclude --include --chmod --chown --backup-dir --partial-dir "
        "--temp-dir --log-file -T".split()
    ),
}
_GIT_GLOBAL_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_MAX_UNWRAP = 16


class Context(Protocol):
    """Where :func:`classify` records, and what it knows of the command's surroundings."""

    @property
    def reading(self) -> _Record:
        """The reading to record into."""
        ...

    @property
    def stdin_text(self) -> str | None:
        """The text on the command's standard input, when known."""
        ...

    def script(self, text: str) -> None:
        """Read ``text`` as a script run by a shell."""
        ...

    def stdin_script(self, runner: str) -> None:
        """A shell with no script operand runs its standard input."""
        ...

    def stdin_fields(self) -> list[str] | None:
        """The words on the standard input, when known."""
        ...


class _Record(Protocol):
    commands: list[list[str]]
    reads: list[str]
    writes: list[str]
    deletes: list[str]
    destroys: list[str]
    notes: list[str]
    code: list[str]


def command_name(word: str) -> str:
    """The name a command word runs: its last path part, lower-cased (``/usr/bin/RM`` → rm)."""
    return word.rsplit("/", 1)[-1].lower()


def _split_options(args: list[str], with_value: frozenset[str]) -> tuple[list[str], list[str]]:
    """Split ``args`` into options (with their values) and operands (``--`` ends options)."""
    options: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            operands.extend(args[index + 1 :])
            break
        if word.startswith("-") and len(word) > 1:
            options.append(word)
            if word in with_value and index + 1 < len(args):
                options.append(args[index + 1])
                index += 1
        else:
            operands.append(word)
        index += 1
    return options, operands


def _unwrap(name: str, argv: list[str], ctx: Context) -> list[str] | None:
    """The command a wrapper runs (``None``: it runs none, or it was read here)."""
    with_value, positional = _WRAPPER_OPTIONS[name]
    args = argv[1:]
    index = 0
    split_string: str | None = None
    while index < len(args) and args[index].startswith(("-", "+")) and args[index] != "-":
        word = args[index]
        index += 1
        if word == "--":
            break
        if name == "command" and word in ("-v", "-V"):
            return None  # `command -v rm` looks a name up; it runs nothing
        if name == "flock" and word in ("-c", "--command") and index < len(args):
            ctx.script(args[index])
            return None
        if word in with_value and index < len(args):
            if name == "env" and word in ("-S", "--split-string"):
                split_string = args[index]
            index += 1
        elif name == "env" and word.startswith("-S") and len(word) > 2:
            split_string = word[2:]
    rest = args[index:]
    if name in ("env", "sudo", "doas", "runuser"):
        while rest and "=" in rest[0] and not rest[0].startswith("="):
            rest = rest[1:]
    if split_string is not None:
        rest = split_string.split() + rest
    if name == "sg" and len(rest) >= 2 and rest[1] == "-c":
        ctx.script(" ".join(rest[2:]))
        return None
    rest = rest[positional:]
    if name == "flock" and rest[:1] in (["-c"], ["--command"]) and len(rest) > 1:
        ctx.script(rest[1])
        return None
    if name == "watch" and rest:
        ctx.script(" ".join(rest))
        return None
    if name == "xargs":
        extra = ctx.stdin_fields() or []
        return (rest or ["echo"]) + extra
    return rest or None


def classify(argv: list[str], dynamic: list[bool], ctx: Context) -> None:
    """Record what ``argv`` does (after peeling wrappers) into ``ctx.reading``."""
    record = ctx.reading
    for _ in range(_MAX_UNWRAP):
        if dynamic and dynamic[0]:
            if any(_RM_FLAGS.fullmatch(arg) for arg in argv[1:]):
                record.notes.append("opaque-delete")
            _reads(argv[1:], record)
            return
        name = command_name(argv[0])
        if name == "busybox" and len(argv) > 1:
            argv, dynamic = argv[1:], dynamic[1:]
        elif name in ("sudo", "su", "doas", "runuser") and _shell_login(name, argv, ctx):
            return
        elif name in _WRAPPER_OPTIONS:
            inner = _unwrap(name, argv, ctx)
            if not inner:
                return
            suffix = len(inner) <= len(argv) and argv[len(argv) - len(inner) :] == inner
            dynamic = dynamic[len(argv) - len(inner) :] if suffix else [False] * len(inner)
            argv = inner
        elif name == "parallel":
            _parallel(argv, ctx)
            return
        else:
            break
        if len(record.commands) < 512:
            record.commands.append(list(argv))
    else:
        return
    _effects(name, argv, ctx)


def _shell_login(name: str, argv: list[str], ctx: Context) -> bool:
    """``su [-] [user] [-c TEXT]``, ``sudo -s``/``-i``: read the script; ``True`` when done."""
    if name == "su":
        options = argv[1:]
        for index, word in enumerate(options):
            if word in ("-c", "--command") and index + 1 < len(options):
                ctx.script(options[index + 1])
                return True
            if word.startswith("--command="):
                ctx.script(word.partition("=")[2])
                return True
        ctx.stdin_script("su")
        return True
    if name in ("sudo", "doas", "runuser"):
        options, operands = _split_options(argv[1:], _WRAPPER_OPTIONS[name][0])
        if not operands and any(o in ("-s", "-i", "--shell", "--login") for o in options):
            ctx.stdin_script(name)
            return True
    return False


def _parallel(argv: list[str], ctx: Context) -> None:
    """``parallel CMD ::: ARGS``: each argument in turn into the command template."""
    words = argv[1:]
    while words and words[0].startswith("-"):
        words = words[1:]
    template: list[str] = []
    while words and words[0] not in (":::", "::::", ":::+"):
        template.append(words.pop(0))
    values = [w for w in words if w not in (":::", "::::", ":::+")] or [""]
    text = " ".join(template)
    for value in values[:16]:
        script = text.replace("{}", value) if "{}" in text else f"{text} {value}"
        ctx.script(script)


def _effects(name: str, argv: list[str], ctx: Context) -> None:
    record = ctx.reading
    args = argv[1:]
    if name in SHELLS:
        _shell(name, args, ctx)
    elif name == "eval":
        ctx.script(" ".join(args))
    elif name in ("sed", "gsed", "perl") and any(_in_place(arg) for arg in args):
        _in_place_edit(name, args, ctx)
    elif INTERPRETERS.fullmatch(name):
        _interpreter(args, ctx)
    elif name in _TEXT_COMMANDS or name in _NAME_COMMANDS:
        return
    elif name == "rm":
        options, operands = _split_options(args, frozenset())
        (record.destroys if options else record.deletes).extend(operands or ["*"])
    elif name in ("unlink", "rmdir"):
        record.deletes.extend(_split_options(args, frozenset())[1] or ["*"])
    elif name in ("shred", "wipe", "srm"):
        record.destroys.extend(_split_options(args, frozenset({"-n", "-s"}))[1] or ["*"])
    elif name.startswith("mkfs") or name in ("wipefs", "mkswap", "blkdiscard"):
        record.destroys.extend(args[-1:] or ["*"])
    elif name == "truncate":
        _truncate(args, record)
    elif name == "git":
        _git(args, record)
    elif name == "find":
        _find(args, ctx)
    elif name in _COPY_OPTIONS:
        _copy(name, args, record)
    elif name == "tee":
        record.writes.extend(_split_options(args, frozenset())[1])
    elif name == "touch":
        record.writes.extend(_split_options(args, frozenset({"-r", "-d", "-t"}))[1])
    elif name == "dd":
        _dd(args, record)
    elif name in _PATTERN_FIRST:
        _search(args, record)
    else:
        _reads(args, record)


def _shell(name: str, args: list[str], ctx: Context) -> None:
    index = 0
    script_flag = False
    while index < len(args):
        word = args[index]
        if word == "--" or not word.startswith(("-", "+")) or word in ("-", "+"):
            if word == "--":
                index += 1
            break
        if word in _SHELL_OPTIONS:
            index += 1
        elif not word.startswith("--") and "c" in word[1:]:
            script_flag = True
        index += 1
    operands = args[index:]
    if script_flag and operands:
        ctx.script(operands[0])
    elif operands and name != "fish":
        ctx.reading.reads.append(operands[0])  # a script file: what it does is not in the text
        _reads(operands[1:], ctx.reading)
    else:
        ctx.stdin_script(name)


def _interpreter(args: list[str], ctx: Context) -> None:
    record = ctx.reading
    for index, word in enumerate(args):
        if (word in _CODE_OPTIONS or re.fullmatch(r"-[A-Za-z]*[ce]", word)) and index + 1 < len(
            args
        ):
            record.code.append(args[index + 1])
            record.reads.extend(code_paths(args[index + 1]))
            _reads(args[index + 2 :], record)
            return
    if ctx_text := ctx.stdin_text:
        record.code.append(ctx_text)
        record.reads.extend(code_paths(ctx_text))
    _reads(args, record)


def _reads(args: list[str], record: _Record) -> None:
    """Every operand of a command is a file it may read."""
    for word in args:
        if word.startswith("-"):
            if "=" in word:
                record.reads.append(word.partition("=")[2])
            continue
        record.reads.append(word)
        if word.startswith("@") and len(word) > 1:
            record.reads.append(word[1:])
        elif "=" in word:
            record.reads.append(word.partition("=")[2])


def _search(args: list[str], record: _Record) -> None:
    """``grep PATTERN FILE…``, ``sed SCRIPT FILE…``: the first operand is text, not a file."""
    options, operands = _split_options(args, frozenset({"-e", "-f", "--regexp", "--file"}))
    given = any(o in ("-e", "-f", "--regexp", "--file") or o.startswith("--regexp=") for o in options)
    _reads(operands if given else operands[1:], record)


def _truncate(args: list[str], record: _Record) -> None:
    options, operands = _split_options(args, frozenset({"-s", "--size", "-r", "--reference"}))
    size = None
    for index, option in enumerate(options):
        if option in ("-s", "--size") and index + 1 < len(options):
            size = options[index + 1]
        elif option.startswith("--size="):
            size = option.partition("=")[2]
        elif option.startswith("-s") and len(option) > 2:
            size = option[2:]
    if size is not None and re.fullmatch(r"0+[KMGTPEZY]?B?|-\d.*|/\d.*", size.strip()):
        record.destroys.extend(operands)
    else:
        record.writes.extend(operands)


def _git(args: list[str], record: _Record) -> None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in _GIT_GLOBAL_OPTIONS else 1
    if index >= len(args):
        return
    sub, rest = args[index], args[index + 1 :]
    if sub == "clean":
        flags = [w for w in rest if w.startswith("-") and not w.startswith("--")]
        forced = "--force" in rest or any("f" in w for w in flags)
        dry = "--dry-run" in rest or any("n" in w for w in flags)
        if forced and not dry:
            record.destroys.extend(_split_options(rest, frozenset({"-e", "--exclude"}))[1] or ["."])
    elif sub == "reset" and "--hard" in rest:
        record.destroys.append(".")
    elif sub in ("show", "cat-file", "diff", "log", "blame", "grep", "archive"):
        options, operands = _split_options(rest, frozenset({"-L", "--format", "-n", "-S", "-G"}))
        for operand in operands:
            if ":" in operand and sub != "grep":
                record.reads.append(operand.partition(":")[2])
            elif sub != "grep" or "--" in rest:
                record.reads.append(operand)
        whole = sub == "log" and "--" not in rest
        if whole and any(o in ("-p", "-u", "--patch", "--patch-with-stat") for o in options):
            record.notes.append("history")
    elif sub in ("commit", "tag", "stash", "notes", "merge", "revert", "cherry-pick"):
        _skip_messages(rest, record)
    elif sub in ("checkout", "restore", "mv"):
        record.writes.extend(_split_options(rest, frozenset({"-b", "-B", "--source", "-s"}))[1])
    else:
        _reads(rest, record)


def _skip_messages(args: list[str], record: _Record) -> None:
    """Operands of ``git commit`` and kin, without the text of ``-m MESSAGE``."""
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word in ("-m", "--message", "-F", "--file", "-C", "-c", "--author", "--date"):
            skip = True
        elif word.startswith("-") and not word.startswith("--") and word.endswith("m"):
            skip = True  # -am MESSAGE
        elif not word.startswith("-"):
            record.reads.append(word)


def _find(args: list[str], ctx: Context) -> None:
    record = ctx.reading
    index = 0
    roots: list[str] = []
    while index < len(args) and not args[index].startswith(("-", "(", "!")):
        roots.append(args[index])
        index += 1
    roots = roots or ["."]
    record.reads.extend(roots)
    tested = False
    while index < len(args):
        word = args[index]
        if word in _FIND_TESTS:
            tested = True
        elif word == "-delete":
            (record.deletes if tested else record.destroys).extend(roots)
        elif word in _FIND_EXEC:
            end = index + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            inner = [roots[0] if w == "{}" else w for w in args[index + 1 : end]]
            if inner:
                ctx.script(" ".join(_quote(w) for w in inner))
            index = end
        elif word in ("-fprint", "-fprintf", "-fls", "-fprint0") and index + 1 < len(args):
            record.writes.append(args[index + 1])
        index += 1


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'" if word else "''"


def _copy(name: str, args: list[str], record: _Record) -> None:
    options, operands = _split_options(args, _COPY_OPTIONS[name] | {"-t", "--target-directory"})
    target_dir = None
    for index, option in enumerate(options):
        if option in ("-t", "--target-directory") and index + 1 < len(options):
            target_dir = options[index + 1]
        elif option.startswith("--target-directory="):
            target_dir = option.partition("=")[2]
    if name == "rsync" and any(o.startswith(("--del", "--remove-source")) for o in options):
        record.destroys.extend(operands[-1:] or ["."])
    if target_dir is not None:
        sources, destination = operands, target_dir
    elif len(operands) >= 2:
        sources, destination = operands[:-1], operands[-1]
    else:
        record.reads.extend(operands)
        return
    record.writes.append(destination)
    for source in sources:
        # the destination may be a directory receiving a file of the same name (`cp
        # staging/SOUL.md .`); a file copied out of the current directory (`cp SOUL.md
        # backup/`) is a copy elsewhere, not a write onto a file of that name
        base = posixpath.basename(source.rstrip("/"))
        if base and "/" in source.rstrip("/"):
            record.writes.append(posixpath.join(destination, base))
    if name in ("ln", "link"):
        record.writes.extend(sources)  # a hard link writes the file it links
    elif name == "mv":
        record.writes.extend(sources)
        record.reads.extend(sources)
    else:
        record.reads.extend(sources)


def _dd(args: list[str], record: _Record) -> None:
    for word in args:
        key, _, value = word.partition("=")
        if key == "if":
            record.reads.append(value)
        elif key == "of":
            (record.destroys if _DISK.match(value) else record.writes).append(value)


def _in_place(word: str) -> bool:
    return word.startswith("--in-place") or (
        word.startswith("-") and not word.startswith("--") and "i" in word[1:].split(".")[0]
    )


def _in_place_edit(name: str, args: list[str], ctx: Context) -> None:
    record = ctx.reading
    options, operands = _split_options(args, frozenset({"-e", "-f", "--expression", "--file"}))
    code = [options[i + 1] for i, o in enumerate(options[:-1]) if o in ("-e", "--expression")]
    if not code and operands:
        code, operands = [operands[0]], operands[1:]
    if name == "perl":
        record.code.extend(code)
    record.writes.extend(operands)
    record.reads.extend(operands)
