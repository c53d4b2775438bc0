"""A recursive search wrapped in a function or a ``bash -c`` script, its lines shown.

``grep -rn TODO . | head`` passes: the kernel sees ``.env`` opened by the search, whose lines
reach the agent and the output scan (:mod:`pytest_harness_audit.policy.shell.search_only`). The
same search in a function defined in the same text (``f() { grep -rn TODO .; }; f | head``) or
in a script run by ``bash -c`` was judged WARN: the call of ``f`` and the shell looked like other
programs that could have read the file. Their commands are the text's own, so they pass too;
a function or a script that runs anything else still leaves the read counted (WARN), and the
search's lines piped out of sight stay denied (:mod:`tests.attacks.test_compound_output`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from secret_support import service_harness

from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


WRAPPED = [
    "f() { grep -rn TODO .; }; f | head",
    "function f { grep -rn TODO .; }; f",
    "g() { grep -rn TODO .; }; f() { g; }; f | head -n 5",
    "bash -c 'grep -rn TODO .' | head",
    "sh -c 'grep -rn TODO .'",
    "bash -c 'f() { grep -rn TODO .; }; f' | head",
]


@pytest.mark.parametrize("command", WRAPPED)
def test_a_wrapped_search_passes(harness: Harness, command: str) -> None:
    result = harness.call("Bash", command=command)
    assert not result.blocked
    assert harness.verdict.name == "PASS"


WITH_MORE = [
    "f() { grep -rn TODO .; python3 -c 'print(1)'; }; f | head",
    "bash -c 'grep -rn TODO .; python3 -c \"print(1)\"' | head",
    "bash -c 'grep -rn TODO .' x | head",
    "f() { grep -rn TODO .; }; f; python3 -c 'print(1)'",
]


@pytest.mark.parametrize("command", WITH_MORE)
def test_a_wrapped_search_beside_another_program_still_warns(
    harness: Harness, command: str
) -> None:
    result = harness.call("Bash", command=command)
    assert not result.blocked
    assert harness.verdict.name == "WARN"
