"""Commands that read whole folders: the credential files inside them are read too.

``cp -r . /tmp/x``, ``tar czf /tmp/x.tgz .``, ``zip -r out.zip .``, ``rsync -a ./ host:``,
``scp -r . host:``, ``7z a out.7z .`` and ``docker build .`` open every file under their folder
operands, dotfiles included: a ``.env`` there is read (and copied, packed or sent) as surely as
by ``cat .env``. A search (``grep -r``, ``rg --hidden``, ``ag --hidden``, ``diff -r``) counts
only when its output is piped on or written to a file: otherwise what it finds is in the output
the agent receives, which the inspection scans for secrets (``grep -r KEY .`` is caught there).
A search that prints no matched line (``grep -rl``, ``-c``, ``-q``, ``| wc -l``) counts as reading
the files its patterns may match (:mod:`.search_oracles`).
Each credential-looking file (:func:`~pytest_harness_audit.policy.sensitive.is_credential_path`)
under such a folder of the workspace is recorded as a read, so the policy judges it as it judges
``cat``. Excluded names (``--exclude=.env``, ``zip -x``) are left out, as the command leaves
them out.

The walk skips ``.git`` and dependency folders (``node_modules``, virtual environments), which hold
no workspace secret (a copy of ``.git`` itself reads the credential files the repository commits:
:func:`~.committed.repository_copies`), and stops after :data:`MAX_ENTRIES` entries: a larger folder
is unreadable (the call is flagged, never allowed unseen). A folder outside the workspace is checked
for the usual credential files in it (``.env``, ``.ssh/id_rsa``, ``.aws/credentials`` …) without
walking it; a folder that holds credentials only (``~/.ssh``, ``~/.aws``) names its usual files
whether or not they are there (``tar c ~/.ssh``, ``cd ~/.ssh && tar c .``). ``rg`` and ``ag`` skip
hidden files unless told otherwise, so they read only what the walk finds outside hidden names,
unless ``--hidden``/``-uu`` is given.
"""

from __future__ import annotations

import itertools
import os
import posixpath
from typing import Final

from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.sensitive import is_credential_path
from pytest_harness_audit.policy.shell.committed import repository_copies
from pytest_harness_audit.policy.shell.context import Context, HeldReads
from pytest_harness_audit.policy.shell.git_grep import tracked_search
from pytest_harness_audit.policy.shell.option_words import split_options
from pytest_harness_audit.policy.shell.outside_listings import CREDENTIAL_FOLDERS, outside_names
from pytest_harness_audit.policy.shell.search_oracles import (
    SEARCH_VALUED,
    filter_hides_lines,
    hides_lines,
    matching_files,
    pattern_given,
    searched,
)
from pytest_harness_audit.policy.shell.tools import copy_operands, option_value

#: Most entries looked at under one command's folders.
MAX_ENTRIES = 20_000
#: Folders that hold no secret of the workspace (and can be huge).
SKIPPED_FOLDERS: Final = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox", ".nox"}
)
#: Credential files looked for in a folder outside the workspace (not walked).
OUTSIDE_CANDIDATES: Final = (
    ".env", ".env.local", ".env.production", ".netrc", ".pgpass", ".npmrc", ".pypirc",
    ".my.cnf", ".ssh/id_rsa", ".ssh/id_ed25519", ".ssh/id_ecdsa", ".aws/credentials",
    ".docker/config.json", ".kube/config", "credentials.json", "secrets.yaml", "secrets.json",
)  # fmt: skip

_RECURSIVE_FLAGS: Final = {
    "cp": ("rRa", ("--recursive", "--archive")),
    "rsync": ("ra", ("--recursive", "--archive")),
    "scp": ("r", ()),
    "zip": ("rR", ("--recurse-paths", "--recurse-patterns")),
    "diff": ("r", ("--recursive",)),
    "grep": ("rR", ("--recursive", "--dereference-recursive")),
    "egrep": ("rR", ("--recursive", "--dereference-recursive")),
    "fgrep": ("rR", ("--recursive", "--dereference-recursive")),
}
#: Options that take the next word as their value, by command (operands are what is left).
_VALUED: Final = {
    "cp": frozenset({"-t", "--target-directory", "-S", "--suffix"}),
    "rsync": frozenset({"-e", "--rsh", "--exclude", "--include", "--exclude-from", "-f"}),
    "scp": frozenset({"-P", "-i", "-o", "-F", "-c", "-l", "-J", "-S"}),
    "zip": frozenset({"-x", "-i", "-b", "-n", "-t", "-tt", "-P", "-Z"}),
    "tar": frozenset({"-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "-I"}),
    **SEARCH_VALUED,
    "7z": frozenset(),
    "docker": frozenset({"-f", "--file", "-t", "--tag", "--build-arg", "--target"}),
}
_VALUED["egrep"] = _VALUED["fgrep"] = _VALUED["grep"]
_VALUED["7za"] = _VALUED["7zz"] = _VALUED["7z"]
_VALUED["podman"] = _VALUED["docker"]
_VALUED["bsdtar"] = _VALUED["gtar"] = _VALUED["tar"]
#: Searches: what they read of a file reaches their output, which the inspection scans for the
#: workspace's secrets (and redacts); only an output piped on or written to a file escapes it.
SEARCHERS: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "diff"})
#: Commands that pass whole lines of their input on (a piped search's output stays scannable).
LINE_FILTERS: Final = frozenset(
    {"head", "tail", "sort", "uniq", "wc", "less", "more", "cat", "nl", "tac", "grep", "egrep",
     "fgrep", "rg"}
)  # fmt: skip
#: Commands that may read folders (the cheap test before any parsing).
TREE_READERS: Final = frozenset(_VALUED)


def tree_reads(name: str, args: list[str], ctx: Context) -> None:
    """Record the credential files under the folders ``name args`` reads recursively."""
    if name not in TREE_READERS or not ctx.knows_files:
        return
    searching = name in SEARCHERS
    escapes = searching and _output_escapes(name, args, ctx)
    hides = searching and hides_lines(name, args)
    if searching and not escapes and not hides:
        return  # what a search finds reaches the agent, where the output's secrets are found
    found = _folders(name, args)
    if found is None:
        return
    folders, hidden, excluded = found
    budget = [MAX_ENTRIES]
    read: list[str] = []
    for folder in folders[:64]:
        files = _credential_files(ctx, folder, hidden, budget)
        if files is None:
            ctx.unknown(f"{name} reads a folder of more than {MAX_ENTRIES:,} entries: {folder}")
            return
        read.extend(f for f in files if not _is_excluded(f, excluded))
    if not searching:
        ctx.reading.reads.extend(read + repository_copies(ctx, folders[:64]))  # `cp -r .git x`
        return
    read = searched(name, args, read)  # `grep --include='*.py'`: no other file is opened
    piped = ctx.output_consumed and not ctx.in_substitution and not _partial(name, args)
    # what a count or a list of names tells: one bit a file (:mod:`.search_oracles`)
    matching = matching_files(name, args, read, ctx) if hides or (escapes and piped) else []
    if hides:  # `grep -rc KEY=a .`
        ctx.reading.reads.extend(matching)
    if not escapes:
        return
    if piped:  # judged by the command it pipes into (:func:`settle_held_reads`)
        ctx.hold_reads(HeldReads(read, matching))
    else:
        ctx.reading.reads.extend(read)


_GIT_VALUED: Final = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}
)


def git_grep_reads(args: list[str], ctx: Context) -> None:
    """``git grep --no-index``/``--untracked`` searches the work tree's files as ``grep -r``
    does, untracked ``.env`` included: read as that search is (``-C DIR`` moves its folders)."""
    index, folder = 0, ""
    while index < len(args) and args[index].startswith("-"):
        word = args[index]
        if word in _GIT_VALUED and index + 1 < len(args):
            folder = args[index + 1] if word == "-C" else folder
            index += 1
        index += 1
    if index >= len(args) or args[index] != "grep":
        return
    rest = args[index + 1 :]
    if "--no-index" not in rest and "--untracked" not in rest:
        tracked_search(rest, folder, ctx)  # tracked or committed files: what git holds
        return
    options, operands = split_options(rest, SEARCH_VALUED["grep"])
    pattern, files = ([], operands) if pattern_given(options) else (operands[:1], operands[1:])
    if folder:
        files = [posixpath.join(folder, f) for f in files] or [folder]
    tree_reads("grep", ["-r", *options, "--", *pattern, *(files or ["."])], ctx)


def settle_held_reads(name: str, args: list[str], ctx: Context) -> None:
    """A command that reads a piped search's output: a line filter (``head``, ``sort``,
    ``wc``, ``grep`` …) passes it on to the agent (dropped: the output scan sees it) or to the
    next command or file; any other command (``cut``, ``base64``, ``curl``) may hide it from the
    scan, so the files the search read count as read."""
    held = ctx.take_held_reads()
    if held is None:
        return
    if name in LINE_FILTERS and not _partial(name, args):
        if filter_hides_lines(name, args):  # `grep -r KEY=a . | wc -l`: a count, one bit
            ctx.reading.reads.extend(held.matching)
        if ctx.output_consumed and not ctx.in_substitution:
            ctx.hold_reads(held)
            return
        if not ctx.output_redirected and not ctx.in_substitution:
            return
    ctx.reading.reads.extend(held.files)


def _output_escapes(name: str, args: list[str], ctx: Context) -> bool:
    """Whether a search's output may escape the output scan: written to a file, made part of a
    command, piped on, or cut to pieces smaller than a line (``-o``)."""
    return (
        ctx.output_consumed or ctx.output_redirected or ctx.in_substitution or _partial(name, args)
    )


_TAC_LINES: Final = frozenset({"-", "-b", "-r", "-br", "-rb", "--before", "--regex"})


def _partial(name: str, args: list[str]) -> bool:
    """``grep -o`` (``--only-matching``), ``rg -r``: parts of lines, too small for the scan to
    know; ``tac -s SEP``: the pieces between separators, in reverse order (a line's too)."""
    if name not in SEARCHERS and name not in LINE_FILTERS:
        return False
    if name == "tac":  # only `-b` and `-r` leave the newline the separator
        return any(w[:1] == "-" and w not in _TAC_LINES for w in args)
    if name in ("sort", "uniq"):  # `sort -o FILE`, `uniq IN OUT`: written to a file
        operands = [w for w in args if not w.startswith("-")]
        return any(w in ("-o", "--output") or w.startswith("--output=") for w in args) or (
            name == "uniq" and len(operands) > 1
        )
    for word in args:
        if word == "--only-matching":
            return True
        short = word[:1] == "-" and word[1:2] != "-"
        if name == "rg" and (word.startswith("--replace") or (short and "r" in word[1:])):
            return True  # `rg -r '' KEY`: every match replaced, the line cut to pieces
        if short and "o" in word[1:]:
            return name in ("grep", "egrep", "fgrep", "rg", "ag", "ack")
    return False


def without_patterns(name: str, args: list[str]) -> list[str]:
    """``args`` without the name patterns an archiver or copier leaves out or takes in (``zip
    … -x .env '*.log'``, ``tar --exclude .env``): patterns, not files the command reads."""
    if name not in TREE_READERS:
        return args
    kept: list[str] = []
    skipping = False
    for index, word in enumerate(args):
        if name == "zip" and word in ("-x", "-i", "--exclude", "--include"):
            skipping = True  # zip: every word after it up to the next option
            continue
        if skipping and not word.startswith("-"):
            continue
        skipping = False
        previous = args[index - 1] if index else ""
        if previous in ("--exclude", "--include", "--exclude-dir") and name != "zip":
            continue
        kept.append(word)
    return kept


def recursive_folders(argv: list[str]) -> list[str]:
    """The folders the simple command ``argv`` reads whole (``cp -r SRC… DST``: the sources;
    ``tar czf out.tgz .``: ``.``), hidden files or not, exclusions aside; ``[]`` for others."""
    if not argv:
        return []
    name = argv[0].rsplit("/", 1)[-1]
    found = _folders(name, argv[1:]) if name in TREE_READERS else None
    return found[0] if found is not None else []


def _folders(name: str, args: list[str]) -> tuple[list[str], bool, list[str]] | None:
    """The folders read recursively (operands that are sources), whether hidden files are
    read, and the excluded name globs; ``None``: no recursive read."""
    if name == "zip" and ("-x" in args or "--exclude" in args):
        at = args.index("-x") if "-x" in args else args.index("--exclude")
        tail = list(itertools.takewhile(lambda word: not word.startswith("-"), args[at + 1 :]))
        rest = args[:at] + args[at + 1 + len(tail) :]
        args = rest + [word for pattern in tail for word in ("-x", pattern)]  # one each
    options, operands = split_options(args, _VALUED[name])
    excluded = _exclusions(options)
    if name in ("tar", "bsdtar", "gtar"):
        return _tar(args, excluded)
    if name in ("7z", "7za", "7zz"):
        return (operands[2:], True, excluded) if operands[:1] == ["a"] else None
    if name in ("docker", "podman"):
        if operands[:1] not in (["build"], ["buildx"]):
            return None
        return (operands[-1:] if len(operands) > 1 else [], True, excluded)
    if name in ("rg", "ag", "ack"):
        files = operands if name != "ag" and pattern_given(options) else operands[1:]
        return files or ["."], name == "ack" or _shows_hidden(name, options), excluded
    if not _recursive(name, options):
        return None
    if name in ("grep", "egrep", "fgrep"):
        files = operands if pattern_given(options) else operands[1:]
        return files or ["."], True, excluded
    if name == "zip":
        return operands[1:], True, excluded
    if name == "diff":
        return operands, True, excluded
    if name == "cp":
        _options, sources, folder = copy_operands(name, args)
        if folder is not None:  # `cp -rt DIR SOURCE…`
            return sources, True, excluded
    return operands[:-1], True, excluded  # cp, rsync, scp: the last operand is the destination


def _recursive(name: str, options: list[str]) -> bool:
    letters, words = _RECURSIVE_FLAGS[name]
    for option in options:
        if option.startswith("--"):
            if option.split("=", 1)[0] in words:
                return True
        elif option.startswith("-") and any(letter in letters for letter in option[1:]):
            return True
    return False


def _shows_hidden(name: str, options: list[str]) -> bool:
    for option in options:
        if option in ("--hidden", "-.", "--unrestricted") or option.startswith("-uu"):
            return True
        if name == "ag" and option in ("-u", "-a", "--all-types"):
            return True
    return False


def _tar(args: list[str], excluded: list[str]) -> tuple[list[str], bool, list[str]] | None:
    """``tar`` in create, append or update mode: its operands (old-style letters too)."""
    words = list(args)
    creating = False
    if words and not words[0].startswith("-"):  # `tar czf out.tgz .`: bundled letters
        letters = words.pop(0)
        creating = any(letter in "cru" for letter in letters)
        if "f" in letters and words:
            words.pop(0)
    options, operands = split_options(words, _VALUED["tar"])
    for option in options:
        if option in ("--create", "--append", "--update") or (
            option.startswith("-")
            and not option.startswith("--")
            and any(c in "cru" for c in option[1:])
        ):
            creating = True
    if not creating:
        return None
    base = option_value(words, ("-C", "--directory"))  # `tar -C ~ -cf b .local`: from there
    if base:
        operands = [o if o.startswith(("/", "~")) else posixpath.join(base, o) for o in operands]
    return operands, True, excluded


def _exclusions(options: list[str]) -> list[str]:
    """The name globs a command leaves out (``--exclude=.env``, ``zip -x .env``); a
    folder's (``--exclude-dir=x``) as ``x/``; none when a name is also included (``grep
    --include``: the last of contradictory options wins, so it is not left out for sure)."""
    found: list[str] = []
    for index, option in enumerate(options):
        if option.startswith(("--include=", "--include-dir=")) or option == "--include":
            return []
        if option.startswith("--exclude-dir="):
            found.append(option.split("=", 1)[1].strip("/") + "/")
        elif option.startswith(("--exclude=", "--ignore=")):
            found.append(option.split("=", 1)[1])
        elif option in ("--exclude", "--ignore", "-x") and index + 1 < len(options):
            found.append(options[index + 1])
    return found


def _is_excluded(path: str, excluded: list[str]) -> bool:
    name = posixpath.basename(path)
    folders = path.split("/")[:-1]
    for glob in excluded:
        if glob.endswith("/"):  # a folder's: the files under a folder of that name
            if any(wildcards.fnmatchcase(folder, glob[:-1]) for folder in folders):
                return True
            continue
        anchored = glob.lstrip("/")  # rsync's `/.env`: at the top of the transfer
        if wildcards.fnmatchcase(name, anchored) or wildcards.fnmatchcase(path, anchored):
            return True
    return False


def _credential_files(
    ctx: Context, folder: str, hidden: bool, budget: list[int]
) -> list[str] | None:
    """The credential-looking files under ``folder`` (as paths from where the command runs);
    ``None`` when the walk would pass the budget."""
    top = ctx.workspace_folder(folder)
    shown = folder
    if top is None:
        top = _holding_workspace(ctx, folder)  # `cd .. && tar cf x workspace`
        if top is None:
            return _outside(folder, hidden)
        shown = top
    if not os.path.isdir(top):
        # `cd ~/.ssh && tar c .` where HOME is the workspace: a folder that holds credentials
        # only reads its usual files whether or not they are there yet
        usual = CREDENTIAL_FOLDERS.get(posixpath.basename(top), ())
        return [posixpath.normpath(posixpath.join(shown, name)) for name in usual]
    found: list[str] = []
    for current, folders, files in os.walk(top):
        budget[0] -= len(folders) + len(files)
        if budget[0] < 0:
            return None
        folders[:] = sorted(
            f for f in folders if f not in SKIPPED_FOLDERS and (hidden or f[:1] != ".")
        )
        relative = os.path.relpath(current, top)
        for name in files:
            if not hidden and name[:1] == ".":
                continue
            path = name if relative == "." else posixpath.join(relative, name)
            if is_credential_path(path):
                found.append(posixpath.normpath(posixpath.join(shown, path)))
    return sorted(found)


def _holding_workspace(ctx: Context, folder: str) -> str | None:
    """The workspace's real path when ``folder`` (outside it) holds it; it alone is walked."""
    root = ctx.workspace_root
    if not root or "$" in folder:
        return None
    real_root, real = os.path.realpath(root), ctx.real_path(folder)
    return real_root if real and real_root.startswith(real.rstrip("/") + "/") else None


def _outside(folder: str, hidden: bool) -> list[str]:
    """The usual credential files present in a folder outside the workspace (not walked); a
    folder that holds credentials only (``~/.ssh``, ``/root/.aws``) names its usual files and
    the credential files it holds, whether ``hidden`` or not."""
    if not folder.startswith(("/", "~")):
        return []
    if posixpath.basename(folder.rstrip("/")) in CREDENTIAL_FOLDERS:
        return outside_names(folder, None, True, True)
    if not hidden:
        return []
    base = os.path.expanduser(folder)
    if not os.path.isdir(base):
        return []
    here = posixpath.basename(folder.rstrip("/"))
    names = [n.partition("/")[2] for n in OUTSIDE_CANDIDATES if n.startswith(here + "/")]
    return [
        posixpath.join(folder, name)
        for name in names or OUTSIDE_CANDIDATES  # in `~/.aws`: `credentials`
        if os.path.isfile(os.path.join(base, name))
    ]
