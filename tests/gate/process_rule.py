"""What the gate's built-in process rule decides, shared by the tests of the harness's processes
(``test_harness_processes.py``: commands; ``test_harness_signals_in_code.py``: program text)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pytest_harness_audit.session.harness import Harness

#: The start of the refusal's message.
REFUSED = "every process of the harness is out of the agent's reach"


def permissive_session(tmp_path: Path) -> Iterator[Harness]:
    """A permissive session: only the built-in rules refuse (each test module's ``harness``
    fixture: ``harness = pytest.fixture(permissive_session)``)."""
    made = Harness.create(tmp_path, template="python-service", policy="permissive")
    yield made
    made.close()


def assert_refused(harness: Harness, command: str) -> None:
    """``command`` is refused as an attack on the harness (decided only: nothing runs)."""
    decision = harness.gate.decide("Bash", {"command": command})
    assert decision.blocked, command
    assert "tamper_attempt" in decision.alerts
    assert REFUSED in decision.message


def assert_allowed(harness: Harness, command: str) -> None:
    """``command`` is no attack on the harness."""
    decision = harness.gate.decide("Bash", {"command": command})
    assert not decision.blocked, (command, decision.message)
    assert "tamper_attempt" not in decision.alerts
