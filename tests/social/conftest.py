"""Fixtures for the social-harness tests: an endpoint with scripted peers and a manual clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.social import ManualClock, MessageFirewall, SocialEndpoint, SocialEvent


@pytest.fixture
def clock() -> ManualClock:
    """A clock only the test moves."""
    return ManualClock(start_ms=1_000_000)


@pytest.fixture
def events() -> list[SocialEvent]:
    """Every event the endpoint reports, in order."""
    return []


EndpointFactory = Callable[..., SocialEndpoint]


@pytest.fixture
def make_endpoint(
    tmp_path: Path, clock: ManualClock, events: list[SocialEvent]
) -> Iterator[EndpointFactory]:
    """Build endpoints for alice with peers bob, carol and dave (by default)."""
    made: list[SocialEndpoint] = []

    def make(
        *,
        firewall: MessageFirewall | None = None,
        peers: tuple[str, ...] = ("bob", "carol", "dave"),
        local: str = "alice",
        storage: Path | None = None,
    ) -> SocialEndpoint:
        endpoint = SocialEndpoint(
            storage or tmp_path / "social",
            local,
            peers,
            firewall=firewall,
            clock=clock,
            on_event=events.append,
        )
        made.append(endpoint)
        return endpoint

    yield make
    for endpoint in made:
        endpoint.close()


@pytest.fixture
def endpoint(make_endpoint: EndpointFactory) -> SocialEndpoint:
    """Alice's endpoint, no firewall."""
    return make_endpoint()
