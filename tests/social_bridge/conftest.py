"""Fixtures for the social bridge tests: a real harness session and a social session on its gate."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from bridge_support import FROM_POLICY, PEERS, SessionFactory

from pytest_harness_audit.doors.social import SocialSession, firewall_from_policy
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import ManualClock, MessageFirewall


@pytest.fixture
def anyio_backend() -> str:
    """The official MCP client runs on asyncio."""
    return "asyncio"


@pytest.fixture
def clock() -> ManualClock:
    """A clock only the test moves (deadlines and scripted answers)."""
    return ManualClock(start_ms=1_000_000)


@pytest.fixture
def make_session(tmp_path: Path, clock: ManualClock) -> Iterator[SessionFactory]:
    """Build a harness on the python-service workspace and alice's social session on its gate.

    ``policy`` is a preset name or a Policy (default ``safety``); ``firewall`` defaults to the
    policy's own (``firewall_from_policy``).
    """
    made: list[SocialSession] = []

    def make(
        policy: Policy | str = "safety", firewall: object = FROM_POLICY
    ) -> tuple[Harness, SocialSession]:
        base = tmp_path / f"h{len(made)}"
        harness = Harness.create(base, template="python-service", policy=policy)
        chosen = firewall_from_policy(harness.policy) if firewall is FROM_POLICY else firewall
        assert chosen is None or isinstance(chosen, MessageFirewall)
        session = SocialSession(
            harness.gate, base / "social", "alice", PEERS, firewall=chosen, clock=clock
        )
        made.append(session)
        return harness, session

    yield make
    for session in made:
        session.close()


@pytest.fixture
def harness_and_session(make_session: SessionFactory) -> tuple[Harness, SocialSession]:
    """The safety preset (message firewall in enforcement, secret guard on)."""
    return make_session()
