"""The search tools: ``Glob`` (find files by name) and ``Grep`` (search file contents).

Both walk the workspace without following directory symlinks, skip the ``.git`` directory, and
report paths relative to the workspace root in posix form, sorted. A symlinked file is reported
only when it resolves inside the root. ``Grep`` uses RE2 (the syntax ripgrep accepts), so a
hostile pattern cannot hang a test run; binary files (a NUL byte near the start) are skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import re2

from pytest_harness_audit.tools.confinement import PathEscapeError, WorkspacePaths
from pytest_harness_audit.tools.globbing import GlobSyntaxError, compile_glob
from pytest_harness_audit.tools.outcome import ToolFailure
from pytest_harness_audit.tools.params import ToolParams

SKIPPED_DIRECTORIES = frozenset({".git"})
"""Directories ``Glob`` and ``Grep`` never enter."""
BINARY_SNIFF_BYTES = 8000
"""A NUL byte within this many leading bytes makes ``Grep`` skip the file as binary."""

GREP_OUTPUT_MODES = ("files_with_matches", "content", "count")
"""Values of ``Grep``'s ``output_mode`` (the first is the default)."""

FILE_TYPES: Mapping[str, tuple[str, ...]] = {
    "css": ("*.css",),
    "html": ("*.html", "*.htm"),
    "js": ("*.js", "*.mjs", "*.cjs", "*.jsx"),
    "json": ("*.json",),
    "md": ("*.md", "*.markdown"),
    "py": ("*.py", "*.pyi"),
    "sh": ("*.sh", "*.bash"),
    "toml": ("*.toml",),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "txt": ("*.txt",),
    "yaml": ("*.yaml", "*.yml"),
}
"""``Grep``'s ``type`` filter: a ripgrep type name and the file globs it stands for."""


@dataclass(frozen=True)
class _FoundFile:
    real: Path
    shown: str  # relative to the workspace root
    relative_to_start: str


def _walk_files(paths: WorkspacePaths, start: Path) -> Iterator[_FoundFile]:
    if start.is_file():
        yield _FoundFile(start, paths.display(start), start.name)
        return
    for directory, dirnames, filenames in os.walk(start, followlinks=False):
        dirnames[:] = sorted(name for name in dirnames if name not in SKIPPED_DIRECTORIES)
        for name in sorted(filenames):
            candidate = os.path.join(directory, name)
            real = os.path.realpath(candidate)
            if not paths.contains(real) or not os.path.isfile(real):
                continue
            yield _FoundFile(
                Path(real),
                paths.display(Path(candidate)),
                Path(os.path.relpath(candidate, start)).as_posix(),
            )


def _search_start(paths: WorkspacePaths, args: ToolParams) -> Path:
    raw = args.optional_str("path")
    if raw is None or raw == "":
        return paths.root
    start = paths.resolve(raw)
    if not start.exists():
        raise ToolFailure(f"{args.tool}: path not found: {raw}")
    return start


def _compile_glob(tool: str, pattern: str) -> re.Pattern[str]:
    try:
        return compile_glob(pattern)
    except GlobSyntaxError as exc:
        raise ToolFailure(f"{tool}: {exc}") from None


def glob_files(paths: WorkspacePaths, params: Mapping[str, Any]) -> str:
    """``Glob(pattern, path=root)``: files whose path relative to ``path`` matches ``pattern``.

    One path per line, relative to the workspace root, sorted; ``""`` when nothing matches. Use
    ``**/`` to search subdirectories (``*.py`` matches only files directly in ``path``).
    """
    args = ToolParams("Glob", params, ("pattern", "path"))
    pattern = args.required_str("pattern")
    start = _search_start(paths, args)
    if os.path.isabs(pattern):
        root_prefix = str(paths.root).rstrip(os.sep) + os.sep
        if not pattern.startswith(root_prefix):
            raise PathEscapeError(pattern)
        start, pattern = paths.root, pattern[len(root_prefix) :]
    if ".." in pattern.split("/"):
        raise ToolFailure(f"Glob: pattern must not contain '..' segments: {pattern}")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    matcher = _compile_glob("Glob", pattern)
    found = [f.shown for f in _walk_files(paths, start) if matcher.match(f.relative_to_start)]
    return "\n".join(sorted(found))


def _file_filter(args: ToolParams) -> tuple[list[re.Pattern[str]], list[re.Pattern[str]]]:
    """Compiled ``glob`` and ``type`` filters: (patterns on the whole path, on the base name)."""
    on_path: list[re.Pattern[str]] = []
    on_name: list[re.Pattern[str]] = []
    glob = args.optional_str("glob")
    if glob:
        # As in ripgrep: a glob without "/" applies to the file name at any depth.
        (on_path if "/" in glob else on_name).append(_compile_glob("Grep", glob))
    file_type = args.optional_str("type")
    if file_type is not None:
        if file_type not in FILE_TYPES:
            known = ", ".join(sorted(FILE_TYPES))
            raise ToolFailure(f"Grep: unknown file type {file_type!r} (known: {known})")
        on_name.append(_compile_glob("Grep", "{" + ",".join(FILE_TYPES[file_type]) + "}"))
    return on_path, on_name


def _compile_regex(pattern: str, *, ignore_case: bool, multiline: bool) -> Any:
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    options.dot_nl = multiline
    try:
        return re2.compile(pattern, options=options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", errors="replace")
        raise ToolFailure(f"Grep: invalid regex {pattern!r}: {detail}") from None


def _read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    return data.decode("utf-8", errors="replace")


def _split_lines(text: str) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _matching_lines(
    regex: Any, text: str, lines: list[str], multiline: bool
) -> tuple[list[int], int]:
    """Zero-based indices of matching lines, and the number of matches."""
    if not multiline:
        hits = [index for index, line in enumerate(lines) if regex.search(line)]
        return hits, len(hits)
    line_starts = [0]
    for line in lines[:-1]:
        line_starts.append(line_starts[-1] + len(line) + 1)
    hit_lines: set[int] = set()
    matches = 0
    for match in regex.finditer(text):
        matches += 1
        first = _line_of(line_starts, match.start())
        last = _line_of(line_starts, max(match.start(), match.end() - 1))
        hit_lines.update(range(first, min(last, len(lines) - 1) + 1))
    return sorted(hit_lines), matches


def _line_of(line_starts: list[int], offset: int) -> int:
    low, high = 0, len(line_starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if line_starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low


def _content_lines(
    shown: str, lines: list[str], hits: list[int], before: int, after: int, numbered: bool
) -> list[str]:
    hit_set = set(hits)
    wanted: list[int] = []
    for hit in hits:
        wanted.extend(range(max(0, hit - before), min(len(lines), hit + after + 1)))
    out: list[str] = []
    previous = -2
    for index in sorted(set(wanted)):
        if out and index != previous + 1 and (before or after):
            out.append("--")
        separator = ":" if index in hit_set else "-"
        number = f"{index + 1}{separator}" if numbered else ""
        out.append(f"{shown}{separator}{number}{lines[index]}")
        previous = index
    return out


def grep_files(
    paths: WorkspacePaths,
    params: Mapping[str, Any],
    *,
    withhold: Callable[[str], bool] | None = None,
) -> str:
    """``Grep(pattern, path=root, glob=None, output_mode="files_with_matches", …)``.

    Output modes: ``files_with_matches`` (one path per line), ``content``
    (``path:line:text``, context lines ``path-line-text``, groups separated by ``--``) and
    ``count`` (``path:matches``). Further parameters as in Claude Code: ``-i``, ``-n`` (default
    true), ``-A``/``-B``/``-C`` (context, content mode), ``type``, ``multiline`` (matches may span
    lines, ``.`` matches newlines), ``head_limit`` (first N output lines). ``""`` when nothing
    matches. Files ``withhold`` names are not searched; a last line lists them.
    """
    args = ToolParams(
        "Grep",
        params,
        (
            "pattern",
            "path",
            "glob",
            "type",
            "output_mode",
            "-i",
            "-n",
            "-A",
            "-B",
            "-C",
            "multiline",
            "head_limit",
        ),
    )
    pattern = args.required_str("pattern")
    mode = args.optional_choice("output_mode", GREP_OUTPUT_MODES, "files_with_matches")
    multiline = args.optional_bool("multiline")
    regex = _compile_regex(pattern, ignore_case=args.optional_bool("-i"), multiline=multiline)
    numbered = args.optional_bool("-n", default=True)
    context = args.optional_int("-C", minimum=0, default=0) or 0
    before = args.optional_int("-B", minimum=0, default=context) or 0
    after = args.optional_int("-A", minimum=0, default=context) or 0
    head_limit = args.optional_int("head_limit", minimum=1)
    on_path, on_name = _file_filter(args)
    start = _search_start(paths, args)

    out: list[str] = []
    withheld: list[str] = []
    for found in _walk_files(paths, start):
        if any(not glob.match(found.relative_to_start) for glob in on_path):
            continue
        if any(not glob.match(found.real.name) for glob in on_name):
            continue
        if withhold is not None and withhold(found.shown):
            withheld.append(found.shown)
            continue
        text = _read_text(found.real)
        if text is None:
            continue
        lines = _split_lines(text)
        hits, matches = _matching_lines(regex, text, lines, multiline)
        if not hits:
            continue
        if mode == "files_with_matches":
            out.append(found.shown)
        elif mode == "count":
            out.append(f"{found.shown}:{matches}")
        else:
            if out and (before or after):
                out.append("--")
            out.extend(_content_lines(found.shown, lines, hits, before, after, numbered))
    if head_limit is not None:
        out = out[:head_limit]
    if withheld:
        out.append(f"[web4-policy] not searched (reading them is denied): {', '.join(withheld)}")
    return "\n".join(out)
