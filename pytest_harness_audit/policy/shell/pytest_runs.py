"""What a pytest run does to files by its own options, wherever they are given: on its command
line, in ``PYTEST_ADDOPTS``, in the ``addopts`` of a settings file (:mod:`.pytest_settings`,
``-c FILE`` too) or of ``-o addopts=…`` (``--override-ini``).

* ``--basetemp=DIR``: pytest empties ``DIR`` (everything in it) as the run starts, as
  ``rm -rf DIR`` would.
* ``--cache-clear`` clears the cache folder (``cache_dir`` of a settings file or ``-o
  cache_dir=DIR``, from pytest's root folder): older pytest removes the whole folder, current
  pytest its ``d`` and ``v`` folders. A folder holding anything but pytest's own cache entries
  is destroyed; one missing or holding only a cache is not (without a workspace to look in, a
  folder named as a cache — a part of its path holding ``cache`` — is taken for one).
* Report and log files are written (opened for writing, so emptied first): ``--junitxml``
  (``--junit-xml``), ``--resultlog`` (``--result-log``), ``--report-log``, ``--html``
  (pytest-html), ``--json-report-file``, ``--benchmark-json``, ``--log-file`` (and the
  ``log_file`` setting), ``--debug [FILE]`` (``pytestdebug.log`` without one), and the files of
  ``--cov-report=KIND:PATH`` (``html:DIR`` writes ``DIR/index.html``).

A value the command line or ``PYTEST_ADDOPTS`` gives wins over one of a settings file, as in
pytest (the last one given); the values of every settings file pytest may read are taken
together. A long option may be shortened to any unambiguous start (pytest before 5.0 took
them); what comes after ``--`` is the tests' own.
"""

from __future__ import annotations

import os
import posixpath
from typing import Final

from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.pytest_settings import (
    Settings,
    overrides,
    settings_files,
    split_words,
)

#: Options naming a file pytest writes (one value each: the last one given counts).
_WRITERS: Final = ("--junitxml", "--junit-xml", "--resultlog", "--result-log", "--report-log",
            "--html", "--json-report-file", "--benchmark-json", "--log-file",
            "--debug")  # fmt: skip
#: pytest's long options (and common plugins') that a shortened option may also start: an
#: ambiguous start names none.
_LONG: Final = (*_WRITERS, "--basetemp", "--cache-clear", "--cache-show", "--cov-report",
         "--cov", "--cov-config", "--cov-append", "--cov-branch", "--cov-context",
         "--cov-fail-under", "--junit-prefix", "--log-file-level", "--log-file-format",
         "--log-file-date-format", "--log-file-mode", "--log-format", "--log-level",
         "--log-date-format", "--log-cli-level", "--log-cli-format", "--log-cli-date-format",
         "--log-auto-indent", "--log-disable", "--deselect", "--doctest-modules",
         "--doctest-glob", "--doctest-report", "--doctest-ignore-import-errors",
         "--doctest-continue-on-collection-errors", "--durations", "--durations-min",
         "--capture", "--collect-only", "--config-file", "--confcutdir", "--color",
         "--code-highlight", "--continue-on-collection-errors", "--rootdir", "--runxfail",
         "--json-report", "--json-report-omit", "--json-report-indent", "--benchmark-save",
         "--benchmark-autosave", "--benchmark-only", "--benchmark-skip", "--help",
         "--self-contained-html", "--css", "--html-report", "--override-ini", "--strict",
         "--strict-markers", "--strict-config", "--setup-only", "--setup-show", "--setup-plan",
         "--result-log-level")  # fmt: skip
#: What pytest keeps in its cache folder: clearing a folder of these removes no work.
_CACHE_ENTRIES: Final = frozenset({"d", "v", "README.md", ".gitignore", "CACHEDIR.TAG"})


def pytest_runs(args: list[str], ctx: Context) -> None:
    """Record what pytest run with ``args`` deletes and writes by its options (module doc)."""
    words = args[: args.index("--")] if "--" in args else list(args)
    words = [*split_words(ctx.variable("PYTEST_ADDOPTS") or ""), *words]
    files = settings_files(words, ctx) if ctx.knows_files else []
    given = overrides(words, "addopts")
    sources = [split_words(given[-1])] if given else [f.addopts for f in files]
    # every word list scanned once: the options each gives, by name
    command = _option_values(words)
    settings = [_option_values(source) for source in sources]
    record = ctx.reading
    record.destroys.extend(_values(command, settings, "--basetemp"))
    for option in _WRITERS:
        record.writes.extend(_values(command, settings, option))
    if not _values(command, settings, "--log-file"):
        record.writes.extend(_setting(words, command, sources, files, "log_file", relative=False))
    for report in (v for o in (command, *settings) for v in o.get("--cov-report", ())):
        kind, colon, path = report.partition(":")
        if colon and path:
            record.writes.append(posixpath.join(path, "index.html") if kind == "html" else path)
    if any("--cache-clear" in o for o in (command, *settings)):
        for folder in _setting(words, command, sources, files, "cache_dir", relative=True):
            if _holds_work(folder, ctx):
                record.destroys.append(folder)


def _values(
    command: dict[str, list[str]], settings: list[dict[str, list[str]]], name: str
) -> list[str]:
    """The value of the option ``name``: the last the command gives, else the last of each
    settings source (the one pytest reads is not known)."""
    given = command.get(name)
    if given:
        return given[-1:]
    return [found[name][-1] for found in settings if name in found]


def _setting(
    words: list[str],
    command: dict[str, list[str]],
    sources: list[list[str]],
    files: list[Settings],
    key: str,
    relative: bool,
) -> list[str]:
    """The values of the setting ``key``: ``-o KEY=…`` of the command, else those of the
    settings sources and files; ``relative``: a relative path is from pytest's root folder
    (``--rootdir``, else the settings file's folder)."""
    root = (command.get("--rootdir") or [""])[-1]
    given = [v for v in overrides(words, key) if v][-1:]
    if given:
        return [posixpath.join(root, v) if relative and root else v for v in given]
    found = [(root or ".", v) for s in sources for v in overrides(s, key)[-1:] if v]
    found += [(root or f.folder, f.paths[key]) for f in files if f.paths.get(key)]
    return [posixpath.join(base, v) if relative and base != "." else v for base, v in found]


def _option_values(words: list[str]) -> dict[str, list[str]]:
    """The values each long option of :data:`_LONG` takes in ``words``, in order (``--opt=V``,
    ``--opt V``; a flag ``--cache-clear`` gives ``"on"``; ``--debug`` takes the next word only
    when it is no option); an option given no value is left out."""
    found: dict[str, list[str]] = {}
    for index, word in enumerate(words):
        if not word.startswith("--"):
            continue
        option, equals, value = word.partition("=")
        name = _long_option(option)
        if name is None:
            continue
        following = words[index + 1] if index + 1 < len(words) else ""
        if name == "--cache-clear":
            value = "on"
        elif name == "--debug" and not equals:
            value = following if following and not following.startswith("-") else ""
            value = value or "pytestdebug.log"
        elif not equals:
            value = following
        if value:
            if name in found:
                found[name].append(value)
            else:
                found[name] = [value]
    return found


def _starts() -> dict[str, str | None]:
    """Every start of four characters or more of a long option of :data:`_LONG`: the option it
    names, or ``None`` when it starts several."""
    starts: dict[str, str | None] = {}
    for name in _LONG:
        for end in range(4, len(name)):
            start = name[:end]
            starts[start] = None if start in starts and starts[start] != name else name
    for name in _LONG:
        starts[name] = name  # a whole name is itself, even when it starts a longer one
    return starts


_STARTS: Final = _starts()


def _long_option(option: str) -> str | None:
    """The long option ``option`` names: itself, or the one option it is an unambiguous start
    of."""
    return _STARTS.get(option)


def _holds_work(folder: str, ctx: Context) -> bool:
    """Whether clearing the cache folder ``folder`` removes more than a cache (module doc)."""
    real = ctx.real_path(folder)
    if real is None:
        return not any("cache" in part.lower() for part in folder.split("/"))
    try:
        entries = os.listdir(real)
    except OSError:  # missing, or a file: there is nothing to clear
        return False
    return not set(entries) <= _CACHE_ENTRIES


__all__ = ["pytest_runs"]
