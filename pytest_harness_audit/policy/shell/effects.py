"""What one simple command does to files, from its argv: the tools the policy knows.

* **Wrappers** run the rest of their argv as a command (``env``, ``sudo``, ``doas``, ``nice``,
  ``nohup``, ``timeout``, ``xargs``, ``command``, ``exec``, ``time``, ``busybox``, ``stdbuf``,
  ``setsid``, ``ionice``, ``flock``, ``parallel``, ``watch`` …), by any path and in any case.
* **Shells** run a script: ``bash -c TEXT``, ``su -c TEXT``, ``eval``, or their standard input.
* **Destroys** (recursive or irrecoverable): ``rm -r`` (or an option not known), ``shred``,
  ``truncate`` to size 0, ``git clean -f``, ``git reset --hard``, ``git checkout -- .``/``git
  restore .``/``git checkout -f`` (every uncommitted change discarded), ``rsync --delete``,
  ``dd`` onto a disk or from ``/dev/zero``/``/dev/null``, ``find -delete`` with no test, ``mkfs``.
  **Deletes** (one file each): ``rm`` alone or with ``-f``/``-i``/``-v``/``-d``, ``unlink``,
  ``rmdir``, ``find … -delete`` with tests.
* **Writes**: redirections, ``tee``, ``sponge``, ``cp``/``mv``/``ln``/``install``/``rsync`` onto
  the last operand, onto ``-t DIR``, or into a directory receiving a file of the same name (``cp
  staging/SOUL.md .`` writes ``SOUL.md``); a hard link writes the file it links (``ln SOUL.md
  p2.md``); ``sed -i``/``perl -i``, ``truncate``, ``dd of=``, ``git checkout``/``git restore``
  of a path, ``sort -o``/``shuf -o``/``uniq IN OUT`` (:mod:`.line_writers`); not ``touch``.
* **Reads**: every operand of a command is a file it may read (``--opt=value``, ``KEY=value``
  and ``@file`` values too), except where a tool takes text: ``echo``/``printf``, commit
  messages (``git commit -m``), search patterns (``grep PATTERN``), ``sed``/``awk`` scripts.
* **Commands run from elsewhere** (:mod:`.embedded`): an awk program's ``system()``,
  ``| getline`` and ``print | "cmd"``; git shell aliases and command-running configuration
  (``git -c alias.x='!cmd' x``, ``git config core.pager CMD``). **Network** commands are noted
  (``curl``, ``wget``, ``nc``, ``ssh``, ``scp``, ``rsync host:``, ``git push`` …).
  ``git show REV:PATH`` and ``git cat-file -p REV:PATH`` read ``PATH``; a copy reads its
  source. ``git log -p`` over the whole history is noted as ``history``.
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.shell import workdirs
from pytest_harness_audit.policy.shell.code import code_paths
from pytest_harness_audit.policy.shell.code_writes import code_writes
from pytest_harness_audit.policy.shell.command_strings import (
    COMMAND_STRING_PROGRAMS,
    command_strings,
)
from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.disguised import disguised
from pytest_harness_audit.policy.shell.embedded import (
    AWKS,
    NETWORK_NOTE,
    awk,
    make_stdin,
    network_command,
    network_module,
    sed_script,
)
from pytest_harness_audit.policy.shell.env_loaders import launcher_loads
from pytest_harness_audit.policy.shell.imports import data_urls, follow_loads
from pytest_harness_audit.policy.shell.ipython_api import read_ipython
from pytest_harness_audit.policy.shell.launchers import (
    CODE_OPTIONS,
    CODE_RUNNERS,
    LAUNCHERS,
    Launch,
    launched,
    launcher_reads,
    outliving_run,
    script_operand,
)
from pytest_harness_audit.policy.shell.launchers import WRAPPER_OPTIONS as _WRAPPER_OPTIONS
from pytest_harness_audit.policy.shell.line_writers import LINE_WRITERS, line_write
from pytest_harness_audit.policy.shell.long_options import ABBREVIATING, full_options
from pytest_harness_audit.policy.shell.makefiles import make
from pytest_harness_audit.policy.shell.module_options import preloads
from pytest_harness_audit.policy.shell.native_code import program_loads
from pytest_harness_audit.policy.shell.opaque_output import opaque_command
from pytest_harness_audit.policy.shell.option_words import split_options
from pytest_harness_audit.policy.shell.program_files import python_paths
from pytest_harness_audit.policy.shell.project_tables import SCRIPT_LAUNCHERS, project_script
from pytest_harness_audit.policy.shell.projects import (
    CODE_ALIKES,
    INTERPRETERS,
    SHELLS,
    base_interpreter,
    code_language,
    is_package_runner,
    package_scripts,
    program_file,
    python_module,
)
from pytest_harness_audit.policy.shell.rewrites import REWRITERS, rewrites_tree, writes_files
from pytest_harness_audit.policy.shell.shellouts import guessed_runs, shell_outs
from pytest_harness_audit.policy.shell.task_runners import TASK_RUNNERS, module_runner, task_runner
from pytest_harness_audit.policy.shell.tools import (
    COPY_OPTIONS,
    copy,
    dd,
    find,
    git,
    in_place,
    in_place_edit,
    reads,
    rm_destroys,
    search,
    truncate,
)
from pytest_harness_audit.policy.shell.tree_reads import (
    TREE_READERS,
    git_grep_reads,
    settle_held_reads,
    tree_reads,
    without_patterns,
)
from pytest_harness_audit.policy.shell.xargs import parallel, xargs_command

_SSH_CLIENTS: Final = frozenset({"ssh", "scp", "sftp", "autossh", "sshfs", "mosh"})
_STDIN_PATHS: Final = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_SHELL_OPTIONS: Final = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_CODE_FLAGS: Final = re.compile(r"-[A-Za-z]*[ce]")


_TEXT_COMMANDS: Final = frozenset(
    {"echo", "printf", "true", "false", ":", "test", "[", "type", "which", "hash", "alias",
     "set", "unset", "export", "declare", "local", "readonly", "typeset", "return", "exit",
     "shift", "read", "cd", "pushd", "popd", "wait", "sleep", "kill", "trap", "let", "jobs"}
)  # fmt: skip
#: Commands that act on names, not on what the files hold (``ls .*`` reads no secret).
_NAME_COMMANDS: Final = frozenset(
    {"ls", "stat", "du", "realpath", "readlink", "basename", "dirname", "mkdir", "tree", "exa",
     "eza", "lsd", "pwd", "whoami", "date", "cd", "umask"}
)  # fmt: skip
_PATTERN_FIRST: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk",
                                   "gawk"})  # fmt: skip
_RM_FLAGS: Final = re.compile(r"-[dfiIvRr]*[rRf][dfiIvRr]*|--recursive|--force")
_MAX_UNWRAP: Final = 16
#: Every command name with a reading of its own below (the rest only read their operands).
_KNOWN: Final = frozenset(
    {"eval", "sed", "gsed", "perl", "rm", "unlink", "rmdir", "shred", "wipe", "srm", "wipefs",
     "mkswap", "blkdiscard", "truncate", "git", "find", "tee", "sponge", "dd",
     "grep", "egrep", "fgrep", "rg", "ag", "ack", "source", "."}
) | SHELLS | AWKS | frozenset(COPY_OPTIONS) | CODE_RUNNERS  # fmt: skip

_PEELED: Final = frozenset({"busybox", "sudo", "su", "doas", "runuser", "parallel"})
_UNWRAPPED: Final = frozenset(_WRAPPER_OPTIONS) | LAUNCHERS | _PEELED  # :func:`classify` peels
_NO_EFFECT: Final = _TEXT_COMMANDS | _NAME_COMMANDS  # no effect on files (texts, names)


def command_name(word: str) -> str:
    """The name a command word runs: its last path part, lower-cased (``/usr/bin/RM`` → rm)."""
    return word.rsplit("/", 1)[-1].lower()


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
        elif name == "env" and word.startswith(("-S", "--split-string=")) and len(word) > 2:
            split_string = word[2:] if word[1] == "S" else word.partition("=")[2]
    rest = args[index:]
    if split_string is not None:  # `env -S 'A=1 cmd'`: the words as if given one by one
        rest = split_string.split() + rest
    if name in ("env", "sudo", "doas", "runuser"):
        given: dict[str, str | None] = {}
        while rest and "=" in rest[0] and not rest[0].startswith("="):
            variable, _, value = rest[0].partition("=")
            given[variable] = value
            rest = rest[1:]
        if given:
            ctx.environment(given)
    if name == "sg" and len(rest) >= 2:  # `sg GROUP [-c] CMD`: a command given to `sh -c`
        ctx.script(" ".join(rest[2:] if rest[1] == "-c" else rest[1:]))
        return None
    rest = rest[positional:]
    if rest and (moved := workdirs.moved_command(name, args[:index], rest)) is not None:
        ctx.script(moved)  # `env -C .. sh -c …`: all it runs, its scripts too, runs there
        return None
    if name == "flock" and rest[:1] in (["-c"], ["--command"]) and len(rest) > 1:
        ctx.script(rest[1])
        return None
    if name == "watch" and rest and not any(workdirs.watch_runs_words(w) for w in args[:index]):
        ctx.script(" ".join(rest))  # with `-x` (`--exec`) it runs the words themselves
        return None
    if name == "xargs":
        return xargs_command(args[:index], rest, ctx)  # `ls -a | xargs -I % sh -c 'cat %'`
    return rest or None


def classify(argv: list[str], dynamic: list[bool], ctx: Context) -> None:
    """Record what ``argv`` does (after peeling wrappers) into ``ctx.reading``."""
    record = ctx.reading
    for _ in range(_MAX_UNWRAP):
        if dynamic and dynamic[0]:
            if argv[0].startswith("$(…)") and (why := opaque_command(ctx.opaque_programs())):
                ctx.unknown(why)  # `$(python3 gen.py)`, `eval "$(node x.js)"`: its output runs
            if any(_RM_FLAGS.fullmatch(arg) for arg in argv[1:]):
                record.notes.append("opaque-delete")
            reads(argv[1:], record)
            if "/" in argv[0]:
                program_file(argv[0], ctx)  # `$(pwd)/x.sh`: the workspace file it ends with
            return
        first = argv[0]
        name = first.rsplit("/", 1)[-1].lower()  # command_name(first), inline
        argv = [first, *full_options(name, argv[1:])] if name in ABBREVIATING else argv  # --fil
        if "/" in first:  # `./tools/sh` too: only a workspace file is read
            record.reads.append(first)  # a program run by its path: its file is read too
            program_file(first, ctx)  # and what a workspace script does is judged
        elif ctx.looks_up:  # `PATH=bin:$PATH x`, `hash -p x.sh ls`: maybe a workspace program
            ctx.path_program(first)
        if name not in _UNWRAPPED:
            break  # the common case: no wrapper (every name tested below is in _UNWRAPPED)
        if name == "busybox" and len(argv) > 1:
            argv, dynamic = argv[1:], dynamic[1:]
        elif name in ("sudo", "su", "doas", "runuser") and _shell_login(name, argv, ctx):
            return
        elif name in _WRAPPER_OPTIONS:
            if (why := outliving_run(name, argv[1:])) is not None:
                ctx.unknown(why)
            inner = _unwrap(name, argv, ctx)
            if not inner:
                return
            suffix = len(inner) <= len(argv) and argv[len(argv) - len(inner) :] == inner
            dynamic = dynamic[len(argv) - len(inner) :] if suffix else [False] * len(inner)
            argv = inner
        elif name == "parallel":
            parallel(argv, ctx)
            return
        elif name in LAUNCHERS:
            launcher_loads(name, argv[1:], ctx)  # `--env-file F`, `direnv exec`'s `.envrc`
            launch = launched(name, argv[1:])
            # `pdm run lint`, `hatch run test`, `pdm lint`: a script of the project's table
            table = argv[1:] if launch.argv is None and name == "pdm" else launch.argv
            known = table and name in SCRIPT_LAUNCHERS and ctx.knows_files
            if known and project_script(name, table or [], ctx):
                return
            if launch.argv is None:
                if not _launched_text(launch, ctx):
                    break  # `uv sync`, `poetry install`: the launcher's own work
                return
            argv, dynamic = launch.argv, dynamic[len(argv) - len(launch.argv) :]
            if len(dynamic) != len(argv):
                dynamic = [False] * len(argv)
        else:
            break
        if len(record.commands) < 512:
            record.commands.append(list(argv))
    else:
        return
    if (base := base_interpreter(name) or CODE_ALIKES.get(name)) is not None:  # `perl5.36 -e`
        argv = [base, *argv[1:]]  # `tsx -e …`: node's reading and text
        name = name if name.startswith("ipython") else base  # (IPython's own syntax read too)
        record.commands.append(argv)
    _effects(name, argv, ctx)


def _launched_text(launch: Launch, ctx: Context) -> bool:
    """Read the script or program text a launcher runs; whether it ran any."""
    if launch.script is not None:  # with ``code`` too: PowerShell text, read both ways
        ctx.script(launch.script)
    if launch.code is not None:
        inline_code(launch.code, ctx)
    elif launch.code_file is not None:
        ctx.reading.reads.append(launch.code_file)
        ctx.script_file(launch.code_file, code=True)
    elif launch.unknown is not None:
        ctx.unknown(launch.unknown)
    elif launch.script is None:
        return False
    return True


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
        options, operands = split_options(argv[1:], _WRAPPER_OPTIONS[name][0])
        if not operands and any(o in ("-s", "-i", "--shell", "--login") for o in options):
            ctx.stdin_script(name)
            return True
    return False


def _effects(name: str, argv: list[str], ctx: Context) -> None:
    record = ctx.reading
    args = argv[1:]
    settle_held_reads(name, args, ctx)  # the files a search piped into this command read
    disguised(name, args, ctx)  # `pax -w`, `tar --remove-files`, `mv app /tmp`, `bun run x`
    if name in _NO_EFFECT:
        return
    if name in TREE_READERS:
        tree_reads(name, args, ctx)  # `cp -r . /tmp/x`: the credential files inside are read
    elif name == "git":
        git_grep_reads(args, ctx)  # `git grep --no-index -c KEY .`
    if name in REWRITERS and rewrites_tree(name, args):
        ctx.files_rewritten()  # `git stash pop && npm test`: what runs next is not on disk yet
    if network_command(name, args):
        ctx.note(NETWORK_NOTE)
    if name in ("make", "gmake"):
        make_stdin(args, ctx.stdin_text, ctx)
        make(args, ctx)
    elif is_package_runner(name):
        package_scripts(name, args, ctx)
    elif name.startswith("python"):
        ctx.python_startup()  # a `PYTHONPATH` folder's sitecustomize runs first
        python_module(args, ctx)
        if ctx.knows_files:
            module_runner(args, ctx)
    elif name in TASK_RUNNERS and ctx.knows_files:
        task_runner(name, args, ctx)
    elif name in COMMAND_STRING_PROGRAMS:
        command_strings(name, args, ctx)
    if (
        name not in _KNOWN
        and not name.startswith("mkfs")
        and not (name[:1] in "pnrdblo" and INTERPRETERS.fullmatch(name))
    ):
        if name in _SSH_CLIENTS:  # `ssh -i KEY`: the key signs, its text is not sent or shown
            args = [w for i, w in enumerate(args) if w != "-i" and args[i - 1 : i] != ["-i"]]
        reads(without_patterns(name, args), record)  # most commands: operands are files read
        if len(args) > 2 and (inner := workdirs.inner_script(name, args)) is not None:
            ctx.script(inner)  # `bwrap --bind / / sh -c TEXT`: a command among its operands
    elif name in SHELLS:
        _shell(name, args, ctx)
    elif name == "eval":
        ctx.script(" ".join(args))
    elif name in ("source", "."):
        reads(args[:1], record)
        if args:
            ctx.script_file(args[0], code=False)
    elif name in ("sed", "gsed", "perl") and any(in_place(arg) for arg in args):
        if name != "perl":
            for script in _sed_scripts([a for a in args if not in_place(a)]):
                sed_script(script, ctx)
        in_place_edit(name, args, ctx)
    elif name in CODE_RUNNERS or (name[:1] in "pnrdblo" and INTERPRETERS.fullmatch(name)):
        _interpreter(args, ctx, code_language(name))
    elif name == "rm":
        options, operands = split_options(args, frozenset())
        (record.destroys if rm_destroys(options) else record.deletes).extend(operands or ["*"])
    elif name in ("unlink", "rmdir"):
        record.deletes.extend(split_options(args, frozenset())[1] or ["*"])
    elif name in ("shred", "wipe", "srm"):
        record.destroys.extend(split_options(args, frozenset({"-n", "-s"}))[1] or ["*"])
    elif name.startswith("mkfs") or name in ("wipefs", "mkswap", "blkdiscard"):
        record.destroys.extend(args[-1:] or ["*"])
    elif name == "truncate":
        truncate(args, record)
    elif name == "git":
        git(args, ctx)
    elif name == "find":
        find(args, ctx)
    elif name in COPY_OPTIONS:
        copy(name, args, record)
        ctx.copied(name, args)
    elif name in ("tee", "sponge"):  # sponge FILE writes FILE once its input ends
        record.writes.extend(split_options(args, frozenset())[1])
        ctx.copied(name, args)  # what they write (`ls -a | tee l; xargs cat < l`)
    elif name == "dd":
        dd(args, record, ctx.stdin_source)
        ctx.copied(name, args)  # what it writes (`ls -a | dd of=l; xargs cat < l`)
    elif name in AWKS:
        reads(awk(args, ctx), record)
    elif name in _PATTERN_FIRST:
        if name in ("sed", "gsed"):
            for script in _sed_scripts(args):
                sed_script(script, ctx)
        search(args, record)
    else:
        reads(args, record)
    if name in LINE_WRITERS and (written := line_write(name, args).outputs):
        record.writes.extend(written)  # `sort -o FILE`: a write, of the lines it reads
        ctx.copied(name, args)


def _sed_scripts(args: list[str]) -> list[str]:
    """The scripts of a ``sed`` command: its ``-e`` values, else its first operand."""
    options, operands = split_options(args, frozenset({"-e", "--expression", "-f", "--file"}))
    given = [options[i + 1] for i, o in enumerate(options[:-1]) if o in ("-e", "--expression")]
    given += [o.partition("=")[2] for o in options if o.startswith("--expression=")]
    if any(o in ("-f", "--file") for o in options):
        return []  # read with the files' scripts, in order (:mod:`.sed_files`)
    found = ["\n".join(given)] if given else operands[:1]  # sed joins `-e` parts by lines
    return [script for script in found if script.strip() != "e"]  # `sed e F`: F's lines run


def _shell(name: str, args: list[str], ctx: Context) -> None:
    index = 0
    script_flag = stdin_flag = False
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
        elif not word.startswith("--") and "s" in word[1:]:
            stdin_flag = True
        index += 1
    operands = args[index:]
    if script_flag and operands:
        ctx.script(operands[0], operands[1:])
    elif stdin_flag:
        ctx.stdin_script(name)  # `bash -s ARGS`: the script is the standard input
    elif operands and operands[0] in _STDIN_PATHS:
        ctx.stdin_script(name)  # `bash -`, `sh /dev/stdin`: the script is the standard input
    elif operands and name != "fish":
        ctx.reading.reads.append(operands[0])  # a script file: its text is read when known
        reads(operands[1:], ctx.reading)
        ctx.script_file(operands[0], code=False)
    else:
        ctx.stdin_script(name)


def _interpreter(args: list[str], ctx: Context, name: str) -> None:
    record = ctx.reading
    preloads(name, args, ctx)  # `node -r ./x.js`, `perl -I. -Mx`, `RUBYOPT=-r./x`
    record.reads.extend(launcher_reads("node", args))  # `--env-file=.env`
    for code in data_urls(args):
        _code(code, ctx)  # `--import=data:text/javascript,…`
    if network_module(args):
        ctx.note(NETWORK_NOTE)
    for index, word in enumerate(args):
        if (word in CODE_OPTIONS or _CODE_FLAGS.fullmatch(word)) and index + 1 < len(args):
            _code(args[index + 1], ctx, language=name)
            reads(args[index + 2 :], record)
            return
    if ctx_text := ctx.stdin_text:
        _code(ctx_text, ctx, language=name)
    reads(args, record)
    script = script_operand(args)
    if script is not None:
        ctx.script_file(script, code=True)
        if name.startswith("ipython") and (text := ctx.workspace_text(script)) is not None:
            read_ipython(text, ctx)  # `ipython x.ipy`: IPython's syntax in the file


def inline_code(
    code: str, ctx: Context, packages: bool = True, installed: bool = False, inline: bool = True
) -> None:
    """Read program text run by an interpreter (a script file's, or ``-c``'s; ``packages``:
    whether the Node packages it names are looked up from the root here, as for ``-e`` text,
    rather than from the file's own folder by the caller; ``installed``: the text of an
    installed package, whose bare ``name.ext`` tokens are property accesses far more often than
    files — ``req.secret`` — so only its paths and dotfiles count; ``inline``: not a file's, so
    a command whose name the text does not give is unreadable)."""
    _code(code, ctx, packages, installed, inline=inline)


def _code(
    code: str,
    ctx: Context,
    packages: bool = True,
    installed: bool = False,
    language: str = "",
    inline: bool = True,
) -> None:
    """Inline program text: kept for the policy's patterns, its paths read, its network noted."""
    ctx.reading.code.append(code)
    if writes_files(code):
        ctx.files_rewritten()  # `python gen.py && sh out.sh`: what it writes is not known
    ctx.reading.writes.extend(code_writes(code))  # `open('.git/hooks/x', 'w')`: a write
    found = python_paths(code, ctx) if language == "python" else code_paths(code)
    if installed:
        found = [path for path in found if "/" in path or path[:1] in ".~"]
    ctx.reading.reads.extend(found)
    if language == "python" or language.startswith("ipython"):
        read_ipython(code, ctx)  # `!rm -rf app`, `get_ipython().system(…)`: a kernel runs them
    unresolved: list[bool] = []
    known = language if language in ("perl", "ruby", "php", "python", "js") else None
    for command in shell_outs(code, known, unresolved):
        ctx.script(command)
    if unresolved:  # `os.system(c)`: its value, else the literals that could be it
        guessed_runs(code, inline and any(unresolved), ctx)
    if ctx.knows_files:
        follow_loads(code, "", ctx, packages=packages)
    program_loads(code, language, ctx)  # its network use, the native code it loads
