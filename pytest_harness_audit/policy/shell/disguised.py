"""Reads and deletions behind another purpose: what these commands do to files besides their
operands.

* **Env loaders** read an env file into a command's environment, as ``cat .env`` reads it:
  ``python -m dotenv [-f F] run CMD`` (and ``list``/``get``), ``foreman``/``honcho``
  ``run``/``start`` (``.env`` unless ``-e F``), ``env-cmd [-f F] CMD``; the command they run is
  read too.
* **Archivers and copiers of whole folders** not read by :mod:`.tree_reads`: ``pax -w``/``-rw``,
  ``cpio -o``/``-p`` (the names on their input), ``python -m zipfile -c``, ``python -m tarfile
  -c``, ``jar c``, ``rar a``, ``ditto``, ``restic backup``, ``borg create``, and
  ``gzip``/``bzip2``/``xz``/``zstd``/``lz4``/``brotli`` ``-r`` (each file's text written into
  its compressed copy): every credential file under their folders is read.
* **Deletions by other programs**: ``rimraf``, ``cmake -E rm``, ``trash``, ``git rm``
  (:mod:`.removers`).
* **Output files and commands of a tool's own options**: ``gcc -o``, ``openssl -out``,
  ``iconv -o``, ``xxd IN OUT``, ``split``/``csplit`` prefixes, ``cmake -E copy``; ``cmake -E
  env|chdir|time CMD``, ``gcc -wrapper``, ``split --filter`` (:mod:`.output_files`); the
  commands of ``socat EXEC:``, ``ncat -e``, ``start-stop-daemon``, ``run-parts``, Tcl's
  ``exec``/``spawn`` (:mod:`.runner_programs`).
* **Deletions in disguise**: ``tar --remove-files``, ``zip -m``, ``7z a -sdel`` delete what they
  packed; ``pytest --basetemp=DIR`` empties ``DIR`` as it starts, and its ``--cache-clear``
  clears its cache folder (:mod:`.pytest_runs`, which also reads the report and log files
  its options write, in its settings files and ``PYTEST_ADDOPTS`` too); ``gzip -r``/``bzip2
  -r``/``xz -r`` (without ``-k``/``-c``) replace every file; ``mv`` of a workspace folder out of the
  workspace takes it away as ``rm -r`` does (a file moved out or compressed in place is left to
  the effect inspection: files deleted).
* **Options that read a file** of commands that act on names: ``date -f F``, ``du
  --files0-from=F``, ``find -files0-from F``, ``tree --fromfile F`` (:mod:`.option_files`).
* **Archives extracted** write their members (:mod:`.extractions`); a copy into a folder git
  or Python take code from writes the file of its source's name there (:mod:`.code_places`).
* **Program text on an interpreter's standard input** is read as inline code
  (:mod:`.stdin_programs`), and so is a workspace script file it runs (:mod:`.program_files`).
* **Command strings**: ``trap 'CMD' SIGNAL`` runs ``CMD`` (at exit, at the latest).
* **Notebooks run** (``jupyter execute``, ``nbconvert --execute``, ``papermill``, ``ipython``
  …): their code cells are read as the program they are (:mod:`.notebooks`).
* ``git config -f FILE`` reads ``FILE``; ``git archive [TREE] [PATH…]`` and ``git bundle
  create`` pack committed files, ``git daemon [--base-path=DIR] [DIR…]`` and ``git instaweb``
  serve them on the network: read as the work tree's files under those paths.
"""

from __future__ import annotations

import os
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.code_places import copied_in
from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.embedded import NETWORK_NOTE
from pytest_harness_audit.policy.shell.env_loaders import NAMES as LOADER_NAMES
from pytest_harness_audit.policy.shell.env_loaders import loaders
from pytest_harness_audit.policy.shell.extractions import EXTRACTORS, extracted
from pytest_harness_audit.policy.shell.index_files import NAMES as INDEX_CLIENTS
from pytest_harness_audit.policy.shell.index_files import index_files
from pytest_harness_audit.policy.shell.notebooks import NOTEBOOK_RUNNERS, notebooks
from pytest_harness_audit.policy.shell.option_files import NAMES as OPTION_READERS
from pytest_harness_audit.policy.shell.option_files import option_reads
from pytest_harness_audit.policy.shell.option_words import split_options
from pytest_harness_audit.policy.shell.output_files import OUTPUT_PROGRAMS, output_files
from pytest_harness_audit.policy.shell.program_files import file_program
from pytest_harness_audit.policy.shell.pytest_runs import pytest_runs
from pytest_harness_audit.policy.shell.registries import NAMES as REGISTRY_CLIENTS
from pytest_harness_audit.policy.shell.registries import registries
from pytest_harness_audit.policy.shell.removers import REMOVERS, git_rm, removed
from pytest_harness_audit.policy.shell.runner_programs import RUNNER_PROGRAMS, runner_programs
from pytest_harness_audit.policy.shell.stdin_programs import STDIN_RUNNERS, stdin_program
from pytest_harness_audit.policy.shell.tool_config import tool_config
from pytest_harness_audit.policy.shell.tools import option_value
from pytest_harness_audit.policy.shell.tree_reads import tree_reads

#: Compressors with a recursive mode, and whether they delete each file they compress.
_COMPRESSORS: Final = {"gzip": True, "bzip2": True, "xz": True, "lzma": True, "lzip": True,
                "zstd": False, "lz4": False, "brotli": False, "pigz": True}  # fmt: skip
_KEEP: Final = frozenset({"-k", "--keep", "-c", "--stdout", "--to-stdout", "-l", "--list", "-t",
                   "--test", "-d", "--decompress", "--uncompress"})  # fmt: skip
_PAX_VALUED: Final = frozenset({"-f", "-s", "-o", "-x", "-b", "-B", "-G", "-T", "-U", "-p"})
_CPIO_VALUED: Final = frozenset(
    {"-F", "--file", "-H", "--format", "-O", "-I", "-E", "-R", "-C", "-M"}
)
#: Every name read here (the cheap test before any parsing).
NAMES: Final = frozenset(
    {"pax", "cpio", "jar", "rar", "ditto", "restic", "borg", "mv", "trap", "git", "tar", "bsdtar",
     "gtar", "zip", "7z", "7za", "7zz", "foreman", "honcho", "env-cmd", "envcmd", "pytest",
     "py.test"}
) | frozenset(_COMPRESSORS)  # fmt: skip


def disguised(name: str, args: list[str], ctx: Context) -> None:
    """Record what ``name args`` reads or deletes besides its operands (module doc; the env
    files a program loads on its own: :mod:`.env_loaders`)."""
    if name in LOADER_NAMES:
        loaders(name, args, ctx)
    if name in EXTRACTORS or name.startswith("python"):
        extracted(name, args, ctx)  # `tar -xf x.tar -C .git`: each member written
    elif name in ("cp", "mv", "install", "rsync", "ln"):
        copied_in(name, args, ctx)  # `cp pre-commit .git/hooks/`: the hook of that name
    elif name in REMOVERS:
        removed(name, args, ctx)  # `npx rimraf app`, `cmake -E rm -r app`, `trash app`
    if name in OUTPUT_PROGRAMS:
        output_files(name, args, ctx)  # `gcc -o .git/hooks/x`, `cmake -E env rm -rf app`
    if name in RUNNER_PROGRAMS:
        runner_programs(name, args, ctx)  # `socat - exec:CMD`, `expect -c 'spawn CMD'`
    if name in NOTEBOOK_RUNNERS or name.startswith("python"):
        notebooks(name, args, ctx)  # `jupyter execute nb.ipynb`: the code of its cells runs
    if name in OPTION_READERS:
        option_reads(name, args, ctx.reading)  # `date -f .env`: an option's file is read
    if name in REGISTRY_CLIENTS or name.startswith(("python", "pip")):
        registries(name, args, ctx)  # `pip install -i URL x`: a network exchange with URL
        tool_config(name, args, ctx)  # `npm config set registry URL`: a write of ~/.npmrc
    if name in INDEX_CLIENTS or name.startswith(("python", "pip")):
        index_files(name, args, ctx)  # `pip install -r r.txt`: the index r.txt names
    if name in STDIN_RUNNERS or name.startswith("python"):
        stdin_program(name, args, ctx)  # `echo CODE | python3`: read as `python3 -c CODE`
        file_program(name, args, ctx)  # `python3 clean.py`: its text read as `-c` text is
    if name.startswith("python"):
        _python_module(args, ctx)
    elif name not in NAMES:
        return
    elif name == "trap":
        handler = args[1:] if args[:1] == ["--"] else args
        if handler and handler[0] not in ("-p", "-l", "-") and len(handler) > 1:
            ctx.script(handler[0])
    elif name == "git":
        _git(args, ctx)
    elif name == "mv":
        _move_out(args, ctx)
    elif name in ("foreman", "honcho", "env-cmd", "envcmd"):
        _env_loader(name, args, ctx)
    elif name in ("pytest", "py.test"):
        pytest_runs(args, ctx)  # `--basetemp=DIR`, `--junitxml=F`, `addopts`
    elif name in _COMPRESSORS:
        _compressor(name, args, ctx)
    else:
        _archiver(name, args, ctx)


def _python_module(args: list[str], ctx: Context) -> None:
    """``python -m dotenv …``, ``python -m zipfile -c OUT SRC…``, ``python -m tarfile -c``."""
    if "-m" not in args[:8]:
        return
    at = args.index("-m")
    module, rest = (args[at + 1], args[at + 2 :]) if at + 1 < len(args) else ("", [])
    if module == "dotenv":
        file = option_value(rest, ("-f", "--file")) or ".env"
        ctx.reading.reads.append(file)
        valued = frozenset({"-f", "--file", "-e", "--export"})
        _options, operands = _leading_options(rest, valued)
        if operands[:1] == ["run"]:
            _more, command = _leading_options(operands[1:], valued)
            if command:
                ctx.script(shlex.join(command))
    elif module == "pytest":
        pytest_runs(rest, ctx)
    elif module in ("zipfile", "tarfile") and rest[:1] in (["-c"], ["--create"]):
        ctx.reading.writes.extend(rest[1:2])  # the archive: `python -m zipfile -c OUT SRC…`
        sources = rest[2:]
        if sources:
            tree_reads("tar", ["-cf", "/dev/null", "--", *sources], ctx)


def _env_loader(name: str, args: list[str], ctx: Context) -> None:
    """``foreman run CMD``, ``honcho start``, ``env-cmd -f F CMD``: the env file, the command."""
    valued = frozenset({"-e", "--env", "-f", "--file", "-d", "--root", "-p", "--port",
                        "-m", "--formation", "-r", "--rc-file", "--environments"})  # fmt: skip
    options, operands = _leading_options(args, valued)
    if not name.startswith("env"):  # `foreman run [-e F] CMD`: the subcommand's own options
        more, command = _leading_options(operands[1:], valued)
        options, operands = options + more, operands[:1] + command
    names = ("-f", "--file") if name.startswith("env") else ("-e", "--env")
    files = (option_value(options, names) or ".env").split(",")
    if name.startswith("env") or operands[:1] in (["run"], ["start"], ["check"]):
        ctx.reading.reads.extend(f for f in files if f)
    command = operands if name.startswith("env") else operands[1:]
    if command and (name.startswith("env") or operands[0] == "run"):
        ctx.script(shlex.join(command))


def _leading_options(args: list[str], valued: frozenset[str]) -> tuple[list[str], list[str]]:
    """The options before the first operand (with their values), and the words from it on
    (``--`` dropped): the command a runner runs keeps its own options."""
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "--":
        index += 2 if args[index] in valued else 1
    return args[:index], args[index + (args[index : index + 1] == ["--"]) :]


def _git(args: list[str], ctx: Context) -> None:
    """``git config -f FILE`` reads (and prints) ``FILE``; ``git archive`` packs the committed
    files of its paths (a ``.env`` committed there too), ``git bundle create`` every commit,
    ``git daemon`` and ``git instaweb`` serve them on the network: read as the work tree's
    files there are."""
    index = 0
    while index < len(args) and args[index].startswith("-"):  # `git -C DIR -c k=v archive`
        index += 2 if args[index] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    sub, rest = (args[index], args[index + 1 :]) if index < len(args) else ("", [])
    if sub == "config":
        file = option_value(rest, ("-f", "--file"))
        if file:
            ctx.reading.reads.append(file)
    elif sub == "rm":
        git_rm(rest, ctx)  # `git rm -r app`: its tracked files deleted
    elif sub == "archive":
        _options, operands = split_options(rest, _GIT_ARCHIVE_VALUED)
        paths = [p for p in operands[1:] if not p.startswith(":")]
        tree_reads("tar", ["-cf", "/dev/null", "--", *(paths or ["."])], ctx)
    elif sub == "bundle" and rest[:1] == ["create"]:
        tree_reads("tar", ["-cf", "/dev/null", "--", "."], ctx)
    elif sub in ("daemon", "instaweb") and not {"-h", "--help"} & set(rest):
        # a server of the repositories under its folders: every committed file, to anyone
        ctx.note(NETWORK_NOTE)
        folders = [w.partition("=")[2] for w in rest if w.startswith("--base-path=")]
        folders += [w for w in rest if not w.startswith("-")] if sub == "daemon" else []
        tree_reads("tar", ["-cf", "/dev/null", "--", *(folders or ["."])], ctx)


_GIT_ARCHIVE_VALUED: Final = frozenset(
    {
        "-o",
        "--output",
        "--format",
        "--prefix",
        "--remote",
        "--exec",
        "--add-file",
        "--add-virtual-file",
        "--mtime",
    }
)


def _compressor(name: str, args: list[str], ctx: Context) -> None:
    """``gzip -r DIR``: every file under it read (into its ``.gz``), and, unless kept,
    deleted."""
    options, operands = split_options(args, frozenset({"-S", "--suffix", "-o", "-T"}))
    recursive = any(
        o in ("-r", "--recursive") or (o[:2] != "--" and o[:1] == "-" and "r" in o[1:])
        for o in options
    )
    keeps = any(o in _KEEP or (o[:1] == "-" and o[1:2] != "-" and set(o[1:]) & set("kcdlt"))
                for o in options)  # fmt: skip
    deletes = (_COMPRESSORS[name] and not keeps) or "--rm" in options
    if not recursive:  # one file replaced by its `.gz`: left to the effect (files deleted)
        return
    folders = [o for o in operands if _is_folder(ctx, o)]
    if not folders:
        return
    tree_reads("tar", ["-cf", "/dev/null", "--", *folders], ctx)
    if deletes:
        ctx.reading.destroys.extend(folders)


def _archiver(name: str, args: list[str], ctx: Context) -> None:
    sources: list[str] = []
    if name == "pax":
        options, operands = split_options(args, _PAX_VALUED)
        flags = "".join(o[1:] for o in options if o[:1] == "-" and o not in _PAX_VALUED)
        if "w" not in flags:
            return
        sources = operands[:-1] if "r" in flags else operands
        if not sources:
            _names_on_input(name, ctx)
            return
    elif name == "cpio":
        options, _operands = split_options(args, _CPIO_VALUED)
        letters = "".join(o[1:] for o in options if o[:1] == "-" and o[1:2] != "-")
        if "o" in letters or "p" in letters or "--create" in options or "--pass-through" in options:
            _names_on_input(name, ctx)
        return
    elif name == "jar":
        letters = args[0].lstrip("-") if args else ""
        if "c" in letters or "u" in letters:
            skip = 1 + letters.count("f") + letters.count("m")  # `jar cfm OUT MANIFEST SRC…`
            sources = [a for a in args[skip:] if a != "-C" and not a.startswith("-")]
    elif name == "rar":
        operands = [a for a in args if not a.startswith("-")]
        if operands[:1] in (["a"], ["u"], ["m"]):
            sources = operands[2:] or ["."]
            if operands[0] == "m" or "-df" in args:
                ctx.reading.destroys.extend(sources)
    elif name == "ditto":
        operands = [a for a in args if not a.startswith("-")]
        sources = operands[:-1]
    elif name == "restic":
        operands = [a for a in args if not a.startswith("-")]
        sources = operands[1:] if operands[:1] == ["backup"] else []
    elif name == "borg":
        operands = [a for a in args if not a.startswith("-")]
        sources = operands[2:] if operands[:1] == ["create"] else []
    else:
        _removing(name, args, ctx)
        return
    if sources:
        tree_reads("tar", ["-cf", "/dev/null", "--", *sources], ctx)


def _removing(name: str, args: list[str], ctx: Context) -> None:
    """``tar --remove-files``, ``zip -m``/``--move``, ``7z a -sdel``: the sources are deleted
    once packed."""
    if name in ("tar", "bsdtar", "gtar"):
        removes = "--remove-files" in args
        sources = [a for a in args[1:] if not a.startswith("-")] if removes else []
        if removes and args and not args[0].startswith("-"):
            sources = sources[1:] if "f" in args[0] else sources  # `tar cf OUT SRC…`
        elif removes:
            out = option_value(args, ("-f", "--file"))
            sources = [s for s in sources if s != out]
    elif name == "zip":
        moves = any(a == "--move" or (a[:2] != "--" and a[:1] == "-" and "m" in a) for a in args)
        operands = [a for a in args if not a.startswith("-")]
        sources = operands[1:] if moves else []
    else:
        operands = [a for a in args if not a.startswith("-")]
        sdel = "-sdel" in args and operands[:1] == ["a"]
        sources = operands[2:] if sdel else []
    ctx.reading.destroys.extend(sources)


def _names_on_input(name: str, ctx: Context) -> None:
    """``cpio -o``, ``pax -w`` with no operand: they pack the names on their input."""
    names = ctx.stdin_fields()
    if names is None:
        ctx.unknown(f"{name} packs the files named on its input, not known before it runs")
        return
    folders = [n for n in names[:256] if _is_folder(ctx, n)]
    ctx.reading.reads.extend(n for n in names[:256] if n not in folders)
    if folders and name == "pax":
        tree_reads("tar", ["-cf", "/dev/null", "--", *folders], ctx)


def _move_out(args: list[str], ctx: Context) -> None:
    """``mv SRC… DEST`` with ``DEST`` outside the workspace: a source folder leaves it as
    ``rm -r`` takes it."""
    options, operands = split_options(
        args, frozenset({"-S", "--suffix", "-t", "--target-directory"})
    )
    target = option_value(options, ("-t", "--target-directory"))
    sources = operands if target is not None else operands[:-1]
    target = target if target is not None else (operands[-1] if operands else None)
    if not sources or target is None or ctx.workspace_root is None or "$" in target:
        return
    if ctx.workspace_folder(target) is not None or ctx.real_path(target) is None:
        return
    # a file moved out is left to the effect (files deleted): a `delete:` target is warned by a
    # rule placed before the credential rule, which would mask a read in the same command
    ctx.reading.destroys.extend(source for source in sources if _is_folder(ctx, source))


def _is_folder(ctx: Context, path: str) -> bool:
    real = ctx.workspace_folder(path)
    return real is not None and os.path.isdir(real)


__all__ = ["NAMES", "disguised"]
