"""Per-tool readings of one simple command's argv: which files it reads, writes, deletes or
destroys (see :mod:`.effects` for the list; this module holds the tools with options to read).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Final

from pytest_harness_audit.policy.sensitive import glob_candidates, is_credential_path
from pytest_harness_audit.policy.shell.context import Context, Record
from pytest_harness_audit.policy.shell.embedded import (
    NETWORK_NOTE,
    git_config_value,
    git_key_runs,
    git_network,
)
from pytest_harness_audit.policy.shell.exec_each import run_on_each
from pytest_harness_audit.policy.shell.git_copies import committed_reads
from pytest_harness_audit.policy.shell.git_discards import discards_changes
from pytest_harness_audit.policy.shell.git_redirect import (
    command_key,
    config_written,
    elsewhere,
    foreign_rewrite,
    outside,
)
from pytest_harness_audit.policy.shell.gitcommand import (
    config_target,
    git_option_commands,
    global_options,
    new_repository,
    relative_to,
)
from pytest_harness_audit.policy.shell.listings import find_names, find_roots
from pytest_harness_audit.policy.shell.metadata import git_names_only
from pytest_harness_audit.policy.shell.option_words import split_options

_EMPTY_SOURCES: Final = frozenset({"/dev/zero", "/dev/null", "/dev/urandom", "/dev/random"})
_DISK: Final = re.compile(r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|mapper/)")
_FIND_TESTS: Final = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-type",
        "-newer",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-size",
        "-user",
        "-group",
        "-perm",
        "-empty",
        "-links",
        "-lname",
        "-ilname",
        "-inum",
        "-samefile",
        "-uid",
        "-gid",
        "-nouser",
        "-nogroup",
        "-readable",
        "-writable",
        "-executable",
        "-prune",
    ]
)
_FIND_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
COPY_OPTIONS: Final = {
    "cp": frozenset({"-S", "--suffix"}),
    "mv": frozenset({"-S", "--suffix"}),
    "ln": frozenset({"-S", "--suffix"}),
    "link": frozenset(),
    "install": frozenset(["-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"]),
    "rsync": frozenset(
        [
            "-e",
            "--rsh",
            "-f",
            "--filter",
            "--exclude",
            "--include",
            "--chmod",
            "--chown",
            "--backup-dir",
            "--partial-dir",
            "--temp-dir",
            "--log-file",
            "-T",
        ]
    ),
}
_MAX_UNWRAP: Final = 16
#: git keys naming a folder of the repository git runs in (``-C DIR`` moves them).
_GIT_FOLDER_KEYS: Final = frozenset({"core.hookspath", "init.templatedir"})
#: Options of git's remote subcommands that take the next word (not a remote).
_GIT_REMOTE_OPTIONS: Final = frozenset(
    {"-o", "--upload-pack", "--depth", "-c", "--config", "--template", "-b", "--branch",
     "--reference", "--separate-git-dir", "--origin"}
)  # fmt: skip

#: ``rm``'s options that leave it deleting one file per operand (forced, asked, told, of an
#: empty folder): ``rm -f FILE`` deletes no more than ``rm FILE``.
_RM_ONE_FILE_LETTERS: Final = frozenset("fiIvd")
_RM_ONE_FILE_NAMES: Final = (
    "force", "interactive", "verbose", "dir", "one-file-system", "preserve-root", "help",
    "version",
)  # fmt: skip
#: ``rm``'s long options that destroy a tree (any unambiguous start of one names it).
_RM_TREE_NAMES: Final = ("recursive", "no-preserve-root")


def rm_destroys(options: list[str]) -> bool:
    """Whether ``rm`` with ``options`` may destroy more than the files named: a recursive
    option, or one it is not known to leave at that (fail closed)."""
    for option in options:
        if option.startswith("--"):
            name = option[2:].split("=", 1)[0]
            if not name or any(tree.startswith(name) for tree in _RM_TREE_NAMES):
                return True
            if not any(known.startswith(name) for known in _RM_ONE_FILE_NAMES):
                return True
        elif not set(option[1:]) <= _RM_ONE_FILE_LETTERS:
            return True
    return False


#: Options whose value names files to leave out, never a file to read (``--exclude=.env``).
_PATTERN_OPTIONS: Final = ("--exclude=", "--exclude-dir=", "--ignore=")


def reads(args: list[str], record: Record) -> None:
    """Every operand of a command is a file it may read (``--opt=FILE``, ``KEY=FILE`` and
    ``@FILE`` values too; a glob there, which the shell did not expand, is read as the
    sensitive files it could name: ``curl -d @.[e]nv``)."""
    for word in args:
        if word.startswith("-"):
            if "=" in word and not word.startswith(_PATTERN_OPTIONS):
                _value(word.partition("=")[2], record)
            continue
        record.reads.append(word)
        if word.startswith("@") and len(word) > 1:
            _value(word[1:], record)
        elif "=" in word:
            _value(word.partition("=")[2], record)


def _value(value: str, record: Record) -> None:
    record.reads.append(value)
    if "*" in value or "?" in value or "[" in value:
        record.reads.extend(glob_candidates(value))


def search(args: list[str], record: Record) -> None:
    """``grep PATTERN FILE…``, ``sed SCRIPT FILE…``: the first operand is text, not a file."""
    options, operands = split_options(args, frozenset({"-e", "-f", "--regexp", "--file"}))
    given = any(
        o in ("-e", "-f", "--regexp", "--file") or o.startswith("--regexp=") for o in options
    )
    reads(operands if given else operands[1:], record)


def option_value(args: list[str], names: tuple[str, ...] | frozenset[str]) -> str | None:
    """The value of the first of ``names`` in ``args`` (``-f F``, ``--file=F``, ``-fF``)."""
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        if option in names:
            if equals:
                return value
            return args[index + 1] if index + 1 < len(args) else None
        for short in names:
            if len(short) == 2 and word.startswith(short) and len(word) > 2 and word[1] != "-":
                return word[2:]
    return None


def copy_operands(name: str, args: list[str]) -> tuple[list[str], list[str], str | None]:
    """``(options, operands, target folder)`` of ``cp``/``mv``/``ln``/``install``/``rsync``
    (the folder of ``-t DIR``/``--target-directory=DIR``, else ``None``)."""
    options, operands = split_options(args, COPY_OPTIONS[name] | {"-t", "--target-directory"})
    folder = option_value(options, ("-t", "--target-directory"))
    if folder is None:  # `cp -rt DIR SOURCE…`: `t` ends a bundle of short options
        for index, word in enumerate(args[:-1]):
            if word[:1] == "-" and word[1:2] not in ("-", "") and word.endswith("t"):
                folder = args[index + 1]
                operands = [o for o in operands if o != folder]
                break
    return options, operands, folder


def truncate(args: list[str], record: Record) -> None:
    options, operands = split_options(args, frozenset({"-s", "--size", "-r", "--reference"}))
    size = option_value(options, ("-s", "--size"))
    if size is not None and re.fullmatch(r"0+[KMGTPEZY]?B?|-\d.*|/\d.*", size.strip()):
        record.destroys.extend(operands or ["*"])  # no operand: names from `xargs` input
    else:
        record.writes.extend(operands or ["*"])


def remote_archive(word: str) -> bool:
    """Whether ``word`` is ``git archive``'s ``--remote=R`` naming another host."""
    name, _, value = word.partition("=")
    return name == "--remote" and git_network("fetch", [value])


def git(args: list[str], ctx: Context, depth: int = 0) -> None:
    record = ctx.reading
    aliases: dict[str, list[str]] = {}
    index, settings, folder = global_options(args, ctx, depth == 0)
    for key, given in settings:
        value = relative_to(folder, given) if folder and key.lower() in _GIT_FOLDER_KEYS else given
        alias = None if ctx.config_include(key, value) else git_config_value(key, value, ctx)
        if alias is not None:
            aliases[key.lower().removeprefix("alias.")] = alias
    if index >= len(args):
        return
    sub, rest = args[index], args[index + 1 :]
    if depth == 0:
        ctx.repository_config(sub, folder)
    if sub in aliases and depth < _MAX_UNWRAP:
        git([*aliases[sub], *rest], ctx, depth + 1)
        return
    if sub == "config":
        _git_config(rest, ctx, folder)
        return
    if sub in ("init", "clone"):
        new_repository(sub, rest, ctx)
    for command in git_option_commands(sub, rest):
        ctx.script(command)  # `fetch --upload-pack=CMD`, `difftool -x CMD`, `grep -O CMD`
    committed_reads(sub, rest, folder, args[:index], ctx)  # `git show HEAD`, `git clone . x`
    rewrite = foreign_rewrite(sub, rest)
    if rewrite and elsewhere(args[:index], settings, folder, ctx.variable, _outside_of(ctx)):
        (record.destroys if rewrite == "destroy" else record.deletes).append(".")
    if git_names_only(sub, rest) and not ctx.output_consumed:
        # `git rm --cached`, `ls-files`, `check-ignore`, `log --oneline`: no content read. Names
        # handed to another command (`git ls-files .env | xargs cat`, `cat $(git ls-files .env)`)
        # stay reads: what takes them may read them.
        return
    if git_network(sub, split_options(rest, _GIT_REMOTE_OPTIONS)[1]) or (
        sub == "archive" and any(remote_archive(word) for word in rest)
    ):
        ctx.note(NETWORK_NOTE)
    if sub == "clean":
        flags = [w for w in rest if w.startswith("-") and not w.startswith("--")]
        forced = "--force" in rest or any("f" in w for w in flags)
        dry = "--dry-run" in rest or any("n" in w for w in flags)
        if forced and not dry:
            record.destroys.extend(split_options(rest, frozenset({"-e", "--exclude"}))[1] or ["."])
    elif sub == "reset" and "--hard" in rest:
        record.destroys.append(".")
    elif sub in ("show", "cat-file", "diff", "log", "blame", "grep", "archive"):
        options, operands = split_options(rest, frozenset({"-L", "--format", "-n", "-S", "-G"}))
        for operand in operands:
            if ":" in operand and sub != "grep":
                record.reads.append(operand.partition(":")[2])
            elif sub != "grep" or "--" in rest:
                record.reads.append(operand)
        patch = any(o in ("-p", "-u", "--patch", "--patch-with-stat") for o in options)
        if patch and sub == "log" and "--" not in rest:
            record.notes.append("history")
    elif sub in ("commit", "tag", "stash", "notes", "merge", "revert", "cherry-pick"):
        if discards_changes(sub, rest, folder, record.commands):  # `git stash && git stash drop`
            record.destroys.append(".")
        _skip_messages(rest, record)
    elif sub in ("checkout", "restore", "mv", "switch", "read-tree", "checkout-index"):
        if discards_changes(sub, rest, folder):  # every uncommitted change: `reset --hard`
            record.destroys.append(".")
        if sub in ("checkout", "restore", "mv"):
            record.writes.extend(split_options(rest, frozenset({"-b", "-B", "--source", "-s"}))[1])
        else:
            reads(rest, record)
    else:
        reads(rest, record)


def _git_config(args: list[str], ctx: Context, folder: str) -> None:
    """``git config [options] KEY VALUE``: a value git will run is read now, and kept as the
    text of the file it is written to for the later git commands of the same command."""
    options, operands = split_options(args, frozenset({"-f", "--file", "--blob", "--type"}))
    settings: list[tuple[str, str]] = []
    if len(operands) >= 2:
        settings.append((operands[0], operands[1]))
    elif operands[:1] and "=" in operands[0]:  # `git config set KEY VALUE` forms vary
        key, _, value = operands[0].partition("=")
        settings.append((key, value))
    elif operands[:1] and args.index(operands[0]) + 1 < len(args):
        # git stops at the key: a value after it that starts with `-` is a value still
        settings.append((operands[0], args[args.index(operands[0]) + 1]))
    if len(operands) >= 3 and operands[0] in ("set", "--add"):
        settings.append((operands[1], operands[2]))
    written = config_target(options, folder)
    changed = config_written(options, operands, written)
    for key, value in settings:
        if not ctx.config_include(key, value):
            git_config_value(key, value, ctx)
        if written is not None and git_key_runs(key):
            ctx.config_written(written, key, value)
        if changed is not None and command_key(key, value):
            ctx.reading.writes.append(changed)  # a key git runs: a write of the file it runs


def _outside_of(ctx: Context) -> Callable[[str], bool]:
    """Whether a folder the command names is outside the workspace."""
    known = ctx.workspace_root is not None

    def test(path: str) -> bool:
        return outside(path, ctx.workspace_folder, known)

    return test


def _skip_messages(args: list[str], record: Record) -> None:
    """Operands of ``git commit`` and kin, without the text of ``-m MESSAGE``; the file of
    ``-F FILE`` is read (git prints the message)."""
    index = 0
    while index < len(args):
        word = args[index]
        name, equals, value = word.partition("=")
        if name in ("-F", "--file"):
            if equals:
                record.reads.append(value)
            elif index + 1 < len(args):
                index += 1
                record.reads.append(args[index])
        elif word.startswith("-F") and len(word) > 2:
            record.reads.append(word[2:])
        elif word in ("-m", "--message", "-C", "-c", "--author", "--date") or (
            word.startswith("-") and not word.startswith("--") and word.endswith("m")
        ):
            index += 1  # `-m MESSAGE`, `-am MESSAGE`
        elif not word.startswith("-"):
            record.reads.append(word)
        index += 1


def find(args: list[str], ctx: Context) -> None:
    record = ctx.reading
    roots, index = find_roots(args)
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
            inner = args[index + 1 : end]
            if inner:
                # every file it finds, in one command (with no workspace: the credential files
                # of a root outside it, `find ~/.ssh -exec cat {} +`)
                known = ctx.workspace_root is not None
                listed = None
                if known or any(root[:1] in ("/", "~") for root in roots):
                    listed = find_names(args, ctx, known) or []
                folder = roots[0] if word.endswith("dir") else ""  # `-execdir`: run there
                run_on_each(inner, [roots[0], *_named(args, roots[0])], listed, ctx, None, folder)
            index = end
        elif word in ("-fprint", "-fprintf", "-fls", "-fprint0") and index + 1 < len(args):
            record.writes.append(args[index + 1])
            ctx.copied("find", args)  # the names it finds, as `find … > FILE` writes them
        index += 1


_FIND_NAMES: Final = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename"})


def _named(args: list[str], root: str) -> list[str]:
    """The files a ``find`` names by ``-name``/``-path`` tests, for its ``-exec`` command:
    a literal name under the root, and the sensitive files a glob could name."""
    found: list[str] = []
    for index, word in enumerate(args[:-1]):
        if word in _FIND_NAMES:
            pattern = args[index + 1].lstrip("./") if "path" in word else args[index + 1]
            if not any(char in pattern for char in "*?[") or is_credential_path(pattern):
                found.append(posixpath.join(root, pattern))  # `*.pem`: the files it names
            if any(char in pattern for char in "*?["):
                found.extend(posixpath.join(root, name) for name in glob_candidates(pattern))
    return found[:8]


def copy(name: str, args: list[str], record: Record) -> None:
    options, operands, target_dir = copy_operands(name, args)
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


def dd(args: list[str], record: Record, stdin: str | None = None) -> None:
    """``dd if=SRC of=DST``: a write onto ``DST``; onto a disk, or from ``/dev/zero`` or
    ``/dev/null`` (which wipes what the file held), a destruction. ``stdin``: the file of its
    own ``< FILE``, the source when no ``if=`` is given (``dd of=x < /dev/zero``)."""
    source = stdin or ""
    for word in args:
        key, _, value = word.partition("=")
        if key == "if":
            source = value
            record.reads.append(value)
    for word in args:
        key, _, value = word.partition("=")
        if key == "of":
            wipes = _DISK.match(value) or source in _EMPTY_SOURCES
            (record.destroys if wipes else record.writes).append(value)


def in_place(word: str) -> bool:
    return word.startswith("--in-place") or (
        word.startswith("-") and not word.startswith("--") and "i" in word[1:].split(".")[0]
    )


def in_place_edit(name: str, args: list[str], ctx: Context) -> None:
    record = ctx.reading
    options, operands = split_options(args, frozenset({"-e", "-f", "--expression", "--file"}))
    code = [options[i + 1] for i, o in enumerate(options[:-1]) if o in ("-e", "--expression")]
    if not code and operands:
        code, operands = [operands[0]], operands[1:]
    if name == "perl":
        record.code.extend(code)
    record.writes.extend(operands)
    record.reads.extend(operands)
