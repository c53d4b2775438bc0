"""``git grep`` of tracked or committed files (``git grep KEY``, ``git grep KEY HEAD``): a search
of the files the repository commits, judged as ``grep -r`` is (:mod:`.tree_reads`).

What it prints reaches the agent, whose output is scanned for the workspace's secrets: no read.
Its output written to a file, piped on or made part of a command, or cut to parts of lines
(``-o``), reads the committed credential files (:mod:`.committed`) it covers; a search that
prints no line (``-l``, ``-c``, ``-q``) reads those its patterns may match (one bit each).
"""

from __future__ import annotations

import os
from typing import Final

from pytest_harness_audit.policy.shell.committed import committed_credentials
from pytest_harness_audit.policy.shell.context import Context, HeldReads
from pytest_harness_audit.policy.shell.option_words import split_options
from pytest_harness_audit.policy.shell.search_oracles import (
    SEARCH_VALUED,
    hides_lines,
    matching_files,
    pattern_given,
)

#: ``git grep`` options with a value besides those of ``grep``.
_VALUED: Final = SEARCH_VALUED["grep"] | {"--max-depth", "-O", "--open-files-in-pager", "--threads"}


def tracked_search(rest: list[str], folder: str, ctx: Context) -> None:
    """Record what ``git grep REST`` (run in ``folder``, its ``-C``) reads (module doc)."""
    if not ctx.knows_files or ctx.workspace_root is None:
        return
    after = rest[rest.index("--") + 1 :] if "--" in rest else None
    before = rest[: rest.index("--")] if after is not None else rest
    options, operands = split_options(before, _VALUED)
    words = operands if pattern_given(options) else operands[1:]
    specs = after if after is not None else [w for w in words if _exists(w, folder, ctx)]
    hides = hides_lines("grep", rest)
    partial = any(o in ("-o", "--only-matching") for o in options)
    escapes = ctx.output_consumed or ctx.output_redirected or ctx.in_substitution or partial
    if not hides and not escapes:
        return  # what it finds reaches the agent, where the output's secrets are found
    files = committed_credentials(ctx, folder, specs)
    piped = ctx.output_consumed and not ctx.in_substitution and not partial
    matching = matching_files("grep", rest, files, ctx) if hides or (escapes and piped) else []
    if hides:
        ctx.reading.reads.extend(matching)
    if not escapes:
        return
    if piped:  # judged by the command it pipes into, as a piped `grep -r` is
        ctx.hold_reads(HeldReads(files, matching))
    else:
        ctx.reading.reads.extend(files)


def _exists(word: str, folder: str, ctx: Context) -> bool:
    """Whether an operand names a workspace path (git takes it as a path, not a tree)."""
    real = ctx.workspace_folder(os.path.join(folder, word) if folder else word)
    return real is not None and os.path.exists(real)


__all__ = ["tracked_search"]
