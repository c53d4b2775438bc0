"""Git commands that print or copy committed files: a read of the credential files the
workspace's repository commits (:mod:`.committed`), as ``cat .env`` reads ``.env``.

* **Printing**: ``git show [REV…]`` (a commit's diff; not ``--stat``, ``--name-only``, ``-s``,
  nor ``REV:PATH``, read as ``PATH``), ``git log``/``whatchanged``/``reflog`` with a patch
  (``-p``, ``-U0``, ``--cc`` …), ``git diff-tree``/``diff-index``/``diff-files -p``, ``git diff``
  of a commit or the index (``--cached``, ``A B``, ``A..B``; plain ``git diff`` shows only the
  work tree's changes), ``git stash show -p``, ``git format-patch``/``send-email``, ``git
  range-diff``, ``git fast-export`` (not ``--anonymize``), ``git cat-file --batch`` and ``git
  cat-file -p ID`` or ``git unpack-file ID`` of an object id (which file it is cannot be known),
  ``git log -L RANGE:FILE`` (``FILE``).
* **Copying**: ``git archive``, ``git bundle create``, ``git pack-objects``, ``git clone`` of the
  workspace's repository, ``git worktree add``, ``git checkout-index -a``, ``git push`` to a
  path or URL (a remote's name is the project's own), a checkout into a ``--work-tree``
  outside the workspace; copies of ``.git`` itself: :func:`~.committed.repository_copies`.

A printing command whose output reaches the agent reads nothing: its output is scanned for the
workspace's secrets, as ``grep -r``'s is; written to a file, piped on or put in a command line,
it reads them. A path after ``--`` (or an operand that is a workspace path) narrows the read to
the committed files under it: ``git log -p -- app/`` reads no secret. Aliases (``git -c
alias.x='show HEAD' x``) are read as what they stand for (:func:`~.tools.git`).
"""

from __future__ import annotations

import os
import re
from typing import Final

from pytest_harness_audit.policy.shell.committed import committed_credentials
from pytest_harness_audit.policy.shell.context import Context

#: Options that show a diff's text; ``-U<n>``/``--unified=<n>`` too.
_PATCH: Final = frozenset({"-p", "-u", "--patch", "--patch-with-stat", "--patch-with-raw", "--cc",
                    "--dd", "--remerge-diff", "-W", "--function-context", "--word-diff",
                    "--color-words", "--binary", "-m", "-c"})  # fmt: skip
#: Options that show no diff text (names, counts, nothing).
_NO_TEXT: Final = frozenset({"--stat", "--numstat", "--shortstat", "--name-only", "--name-status",
                      "--raw", "--summary", "--dirstat", "-s", "--no-patch", "--compact-summary",
                      "--check", "--quiet", "-q"})  # fmt: skip
#: Options that take the next word as their value: of the diff and log family, and by command.
_VALUED: Final = frozenset({"-n", "--max-count", "--skip", "-S", "-G", "-O", "--author",
                     "--committer", "--grep", "--since", "--until", "--output"})  # fmt: skip
_VALUED_BY_COMMAND: Final[dict[str, frozenset[str]]] = {
    "format-patch": _VALUED | {"-o", "--output-directory", "-v", "--reroll-count", "--to",
                               "--subject-prefix", "--in-reply-to", "--from", "--base",
                               "--interdiff", "--range-diff", "--cc"},
    "archive": frozenset({"-o", "--output", "--format", "--prefix", "--remote", "--exec",
                          "--add-file", "--mtime"}),
    "clone": frozenset({"-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference",
                        "--reference-if-able", "--depth", "--separate-git-dir", "--shallow-since",
                        "--shallow-exclude", "-c", "--config", "-j", "--jobs", "--template",
                        "--filter"}),
    "worktree": frozenset({"-b", "-B", "--orphan", "--reason"}),
    "push": frozenset({"--repo", "-o", "--push-option", "--receive-pack", "--exec"}),
}  # fmt: skip
_VALUED_BY_COMMAND["send-email"] = _VALUED_BY_COMMAND["format-patch"]
#: Commands whose default output is a diff's text.
_DIFF_BY_DEFAULT: Final = frozenset({"show", "diff", "range-diff"})
#: Commands that show a diff's text only when asked.
_DIFF_WHEN_ASKED: Final = frozenset({"log", "whatchanged", "reflog", "diff-tree", "diff-index",
                              "diff-files", "request-pull"})  # fmt: skip
#: Commands that check committed files out into their work tree.
_CHECKOUTS: Final = frozenset(
    {
        "checkout",
        "restore",
        "reset",
        "switch",
        "read-tree",
        "checkout-index",
        "merge",
        "pull",
        "cherry-pick",
        "revert",
        "stash",
    }
)
_OBJECT_ID: Final = re.compile(r"[0-9a-fA-F]{4,64}")
_SCP_LIKE: Final = re.compile(r"[^/:]+:")


def committed_reads(sub: str, rest: list[str], folder: str, top: list[str], ctx: Context) -> None:
    """Record the committed credential files ``git [TOP…] SUB REST`` (run in ``folder``, its
    ``-C``) prints or copies (module doc)."""
    if not ctx.knows_files or ctx.workspace_root is None:
        return
    after = rest[rest.index("--") + 1 :] if "--" in rest else None
    before = rest[: rest.index("--")] if after is not None else rest
    valued = _VALUED_BY_COMMAND.get(sub, _VALUED)
    options = _options(before, valued)
    operands = _operands(before, valued)
    for option, value in options:
        if option == "-L" and sub == "log" and ":" in value:  # `log -L1,9:.env`
            ctx.reading.reads.append(value.rpartition(":")[2])
    names = [o for o, _ in options]
    specs = _pathspecs(sub, names, operands, after, folder, ctx)
    if specs is not None and sub not in _WRITES_FILES and not _escapes(ctx):
        return  # what it prints reaches the agent, whose output is scanned for the secrets
    if specs is None:
        work_tree = _work_tree(top)
        if work_tree and sub in _CHECKOUTS and ctx.workspace_folder(work_tree) is None:
            specs = []  # `git --work-tree=/tmp/x checkout HEAD -- .`: every file written there
        else:
            specs = _copied(sub, names, operands, folder, ctx)
    if specs is None:
        return
    ctx.reading.reads.extend(committed_credentials(ctx, folder, specs))


#: Printing commands that write files (``format-patch`` without ``--stdout``) or send mail.
_WRITES_FILES: Final = frozenset({"format-patch", "send-email"})


def _escapes(ctx: Context) -> bool:
    """Whether the command's output goes elsewhere than to the agent: to a file, into another
    command, or into the command line (as ``grep -r``'s is judged, :mod:`.git_grep`)."""
    return ctx.output_consumed or ctx.output_redirected or ctx.in_substitution


def _pathspecs(
    sub: str,
    words: list[str],
    operands: list[str],
    after: list[str] | None,
    folder: str,
    ctx: Context,
) -> list[str] | None:
    """The pathspecs of a command that prints committed files' text (``[]``: every file),
    ``None`` for any other."""
    revisions = [o for o in operands if ":" not in o and not _is_path(o, folder, ctx)]
    if sub == "show":  # `git show HEAD^{tree}`: the names of a tree, no file's text
        revisions = [r for r in revisions if not r.endswith("^{tree}")]
    paths = [o for o in operands if ":" not in o and o not in revisions]
    specs = after if after is not None else paths
    return specs if _prints(sub, words, operands, revisions) else None


def _prints(sub: str, words: list[str], operands: list[str], revisions: list[str]) -> bool:
    """Whether ``git SUB`` with the options ``words`` prints the text of committed files
    (module doc)."""
    patch = any(w in _PATCH or re.fullmatch(r"-U\d*|--unified(=\d+)?", w) for w in words)
    quiet = any(w in _NO_TEXT or w.startswith(("--stat=", "--dirstat=")) for w in words)
    if sub == "stash":
        return operands[:1] == ["show"] and any(w in ("-p", "--patch") for w in words)
    if sub in _DIFF_WHEN_ASKED:
        return patch
    if sub == "show":
        return (patch or not quiet) and (bool(revisions) or not operands)
    if sub == "diff":
        staged = any(w in ("--cached", "--staged") or w.startswith("--merge-base") for w in words)
        compared = (staged or bool(revisions)) and "--no-index" not in words
        return compared and (patch or not quiet)
    if sub == "range-diff":
        return patch or not quiet
    if sub in ("format-patch", "send-email"):
        return True
    if sub == "fast-export":
        return "--anonymize" not in words
    if sub == "cat-file":
        batch = any(w.startswith(("--batch", "--batch-command")) for w in words)
        if batch and not any(w.startswith("--batch-check") for w in words):
            return True
        if any(w in ("-t", "-s", "-e") for w in words):
            return False
        return any(_OBJECT_ID.fullmatch(o) for o in operands)
    if sub == "unpack-file":
        return any(_OBJECT_ID.fullmatch(o) for o in operands)
    return False


def _copied(
    sub: str, options: list[str], operands: list[str], folder: str, ctx: Context
) -> list[str] | None:
    """The pathspecs of a command that copies committed files elsewhere (``[]``: every file),
    ``None`` for any other."""
    if sub == "archive" and operands and not any(o.startswith("--remote") for o in options):
        return [o for o in operands[1:] if not o.startswith(":")]
    if (sub == "bundle" and operands[:1] == ["create"]) or sub == "pack-objects":
        return []
    if sub == "worktree" and operands[:1] == ["add"] and "--no-checkout" not in options:
        return []
    if sub == "checkout-index" and any(o in ("-a", "--all") for o in options):
        return []
    if sub == "clone" and operands and _own_repository(operands[0], folder, ctx):
        return []
    if sub == "push":
        given = [o.partition("=")[2] for o in options if o.startswith("--repo=")]
        target = (given or operands or [""])[0]
        explicit = target in (".", "..") or "/" in target or ":" in target
        return [] if explicit else None
    return None


def _own_repository(source: str, folder: str, ctx: Context) -> bool:
    """Whether ``git clone SOURCE`` clones the workspace's repository (its top or ``.git``)."""
    if source.startswith("file://"):
        source = source[len("file://") :]
    elif "://" in source or _SCP_LIKE.match(source):
        return False
    root = ctx.workspace_root
    real = ctx.real_path(os.path.join(folder, source) if folder else source)
    if not root or real is None:
        return False
    real_root = os.path.realpath(root)
    return os.path.normpath(real) in (real_root, os.path.join(real_root, ".git"))


def _is_path(word: str, folder: str, ctx: Context) -> bool:
    """Whether an operand before ``--`` names a workspace path (git takes it as a path)."""
    real = ctx.workspace_folder(os.path.join(folder, word) if folder else word)
    return real is not None and os.path.exists(real)


def _options(words: list[str], valued: frozenset[str]) -> list[tuple[str, str]]:
    """``(option, value)`` pairs of ``words`` (options with a value take the next word unless
    given with ``=``; ``-L``'s range attached or not)."""
    options: list[tuple[str, str]] = []
    index = 0
    while index < len(words):
        word = words[index]
        following = words[index + 1] if index + 1 < len(words) else ""
        if word.startswith("-L") and word != "-L":
            options.append(("-L", word[2:]))
        elif word.startswith("-") and word != "-" and (word in valued or word == "-L"):
            options.append((word, following))
            index += 1
        elif word.startswith("-") and word != "-":
            options.append((word, word.partition("=")[2]))
        index += 1
    return options


def _operands(words: list[str], valued: frozenset[str]) -> list[str]:
    """The words of ``words`` that are neither options nor their values."""
    operands: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word.startswith("-") and word != "-":
            index += 2 if word in valued or word == "-L" else 1
            continue
        operands.append(word)
        index += 1
    return operands


def _work_tree(top: list[str]) -> str:
    """The ``--work-tree`` of git's own options (``""``: none)."""
    for index, word in enumerate(top):
        if word.startswith("--work-tree="):
            return word.partition("=")[2]
        if word == "--work-tree" and index + 1 < len(top):
            return top[index + 1]
    return ""


__all__ = ["committed_reads"]
