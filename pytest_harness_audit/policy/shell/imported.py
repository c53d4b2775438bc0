"""The workspace Python modules a command's program imports, judged by what of them runs.

Each module read (:meth:`.lookups.Lookups.load_code`) is recorded as ``python3 -c CODE`` with
``CODE`` what importing it runs and what the code importing it names of it
(:func:`.import_time.import_time_code`). Code read later in the same command (``main.py``
importing ``a`` then ``b``, ``b`` calling ``a.clean``; the test files ``pytest`` collects one by
one) may name more of a module read earlier: each module is judged again when that code names
one of its functions not yet judged, so the order the reading meets the files in changes
nothing.

A test module (``test_*.py``, ``*_test.py``, ``conftest.py``) runs its tests, test classes,
``pytest_*`` hooks and ``autouse`` fixtures besides.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.import_time import (
    code_names,
    import_time_code,
    module_functions,
)
from pytest_harness_audit.policy.shell.temp_folders import OVERRIDDEN

#: Most commands a reading records (as :data:`.reading.MAX_COMMANDS`).
_MAX_COMMANDS: Final = 512
#: A test module a test runner calls the tests of (pytest's and unittest's default names).
_TEST_MODULE: Final = re.compile(r"(?:^|/)(?:test[^/]*|[^/]*_test|conftest)\.py$")


#: The names judged of a module not judged yet.
_NEVER: Final = frozenset({"\0"})


class _Record(Protocol):
    code: list[str]
    commands: list[list[str]]


class _Elsewhere:
    """The names code other than a module's own uses (``name in used``)."""

    __slots__ = ("counts", "own")

    def __init__(self, counts: Counter[str], own: frozenset[str]) -> None:
        self.counts = counts
        self.own = own

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.counts[name] > (name in self.own)


def judge_imports(
    judged: dict[str, tuple[str, frozenset[str] | None]],
    modules: Iterable[tuple[str, str]],
    record: _Record,
) -> None:
    """Record what of each module ``(path, text)`` read for a reading runs, and of those read
    before it (``judged``: the reading's modules, with the names of each judged so far) that
    the code read since names further (module doc)."""
    for path, text in modules:
        judged.setdefault(path, (text, _NEVER))
    # a conftest of its own defining `tmp_path`: the folder a test is handed is not pytest's
    overridden = any(OVERRIDDEN.search(text) for text, _ in judged.values())
    counts: Counter[str] = Counter()
    by_string = 0
    for code in record.code:
        names = code_names(code)
        if names is None:
            by_string += 1
        else:
            counts.update(names)
    for path, (text, before) in list(judged.items()):
        if len(record.commands) >= _MAX_COMMANDS:
            return
        own = code_names(text)
        if by_string > (own is None):
            used = None
            named: frozenset[str] | None = None
        else:
            used = _Elsewhere(counts, own or frozenset())
            named = frozenset(name for name in module_functions(text) if name in used)
        if before is not _NEVER and (before is None or (named is not None and named <= before)):
            continue  # judged already, and nothing more of it named since
        judged[path] = (text, named)
        tests = _TEST_MODULE.search(path) is not None
        if run := import_time_code(text, used, tests, not overridden):
            record.commands.append(["python3", "-c", run])


__all__ = ["judge_imports"]
