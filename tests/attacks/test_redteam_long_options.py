"""Long options given by an unambiguous start, as GNU tools take them, in real sessions.

``date --fil=.env`` is ``date --file=.env`` to ``getopt_long``; the reading tested whole option
names, so ``date --fil``, ``du --files0``, ``env --split``, ``xargs --arg-f``, ``tar
--use-comp`` and ``sed --in`` walked past it (the kernel saw the read: WARN, and the secret went
out XORed). ``env --split-string=TEXT`` (with ``=``) was not read either.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from secret_support import assert_leak_refused, service_harness

from pytest_harness_audit.policy.shell.long_options import full_options
from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Harness]:
    """A ``safety`` session on ``python-service``."""
    yield from service_harness(tmp_path)


ABBREVIATED = [
    "date --fil=.env",
    "date --f .env",
    "env --split-s='cat .env'",
    "env --split 'cat .env'",
    "env --split-string='cat .env'",
    "xargs --arg-f=.env echo",
    "du --files0=.env",
    "wc --files0=.env",
    "tar --use-comp='sh -c \"cat .env >&2\"' -cf x.tar README.md",
]


@pytest.mark.parametrize("command", ABBREVIATED)
def test_abbreviated_long_option_is_read_in_full(session: Harness, command: str) -> None:
    assert_leak_refused(session, command)


@pytest.mark.parametrize("command", ["sed --in -e d SOUL.md", "sed --in-pl=.bak -e d SOUL.md"])
def test_abbreviated_in_place_edit_of_a_persona_file_is_denied(
    session: Harness, command: str
) -> None:
    result = session.call("Bash", command=command)
    assert result.blocked
    assert (session.root / "SOUL.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "command",
    [
        "date --date=tomorrow +%F",
        "sort --field-sep=, -k1 README.md",
        "tar --file=x.tar --create README.md",
        "env --split-string='echo hi'",
        "timeout --sig KILL 5 ls",
        "grep --fil=x README.md; true",
    ],
)
def test_abbreviation_look_alikes_stay_allowed(session: Harness, command: str) -> None:
    assert not session.call("Bash", command=command).blocked
    assert session.verdict == "PASS"


@pytest.mark.parametrize(
    ("name", "args", "full"),
    [
        ("tar", ["--file", "x.tar"], ["--file", "x.tar"]),  # a whole option is kept
        ("tar", ["--files=.env"], ["--files-from=.env"]),
        ("grep", ["--fil=.env"], ["--fil=.env"]),  # ambiguous: grep stops, nothing to read
        ("date", ["--", "--fil=.env"], ["--", "--fil=.env"]),  # an operand after `--`
        ("env", ["--=x"], ["--=x"]),
    ],
)
def test_full_options(name: str, args: list[str], full: list[str]) -> None:
    assert full_options(name, args) == full
