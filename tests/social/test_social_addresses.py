"""The address grammar and canonicalisation table (social-harness §1)."""

from __future__ import annotations

import pytest

from pytest_harness_audit.social import (
    SendError,
    SocialEndpoint,
    canonical_address,
    is_address_input,
    is_agent_name,
    resolve_address,
)

REGISTRY = {"bob", "carol", "dave", "agent-1", "agent-2", "agent-10"}


@pytest.mark.parametrize(
    ("to", "local", "kind", "canonical"),
    [
        ("agent:bob", "alice", "direct", "agent:bob"),
        ("group:carol,bob", "alice", "group", "group:alice,bob,carol"),
        ("group:bob,alice,carol", "alice", "group", "group:alice,bob,carol"),
        ("group:agent-2,agent-10", "agent-1", "group", "group:agent-1,agent-10,agent-2"),
        ("group:bob", "alice", "direct", "agent:bob"),
        ("group:alice,bob", "alice", "direct", "agent:bob"),
    ],
)
def test_canonical_forms(to: str, local: str, kind: str, canonical: str) -> None:
    address = resolve_address(to, local, REGISTRY)
    assert (address.kind, address.address) == (kind, canonical)
    assert local in address.members
    assert list(address.members) == sorted(address.members)


def test_group_permutations_share_one_identity() -> None:
    forms = ["group:carol,bob,dave", "group:dave,carol,bob", "group:bob,alice,dave,carol"]
    assert {canonical_address(form, "alice").address for form in forms} == {
        "group:alice,bob,carol,dave"
    }


@pytest.mark.parametrize(
    ("to", "reason"),
    [
        ("agent:alice", "membership-invalid"),
        ("group:bob,carol,bob", "membership-invalid"),
        ("group:alice", "membership-invalid"),
        ("group:alice,alice", "membership-invalid"),
        ("agent:Bob", "invalid-address"),
        ("agent:bo", "invalid-address"),
        ("agent:b_b", "invalid-address"),
        ("agent:-bob", "invalid-address"),
        ("agent:bob-", "invalid-address"),
        ("agent:bob--x", "invalid-address"),
        ("Agent:bob", "invalid-address"),
        ("bob", "invalid-address"),
        ("@bob", "invalid-address"),
        ("group:bob,", "invalid-address"),
        ("group: bob", "invalid-address"),
        ("group:", "invalid-address"),
        ("group:bob,,carol", "invalid-address"),
        ("agent:" + "a" * 33, "invalid-address"),
        ("agent:nobody", "unknown-agent"),
        ("group:bob,nobody", "unknown-agent"),
    ],
)
def test_refused_addresses(to: str, reason: str) -> None:
    with pytest.raises(SendError) as caught:
        resolve_address(to, "alice", REGISTRY)
    assert caught.value.reason == reason
    assert str(caught.value).startswith("send failed: ")


def test_refusals_name_what_is_wrong() -> None:
    with pytest.raises(SendError, match="agent:nobody is not a known agent"):
        resolve_address("agent:nobody", "alice", REGISTRY)
    with pytest.raises(SendError, match="agent:bob more than once"):
        canonical_address("group:bob,carol,bob", "alice")
    with pytest.raises(SendError) as self_send:
        canonical_address("agent:alice", "alice")
    assert self_send.value.detail is not None


@pytest.mark.parametrize(
    ("remote", "ok"),
    [(1, True), (2, True), (31, True), (32, False)],
)
def test_member_boundaries(remote: int, ok: bool) -> None:
    """2 members is direct, 3..32 a group, 33 (32 remote names plus self) is refused."""
    names = [f"remote-{index:02d}" for index in range(remote)]
    to = "group:" + ",".join(names)
    if ok:
        address = canonical_address(to, "alice")
        assert len(address.members) == remote + 1
        assert address.kind == ("direct" if remote == 1 else "group")
    else:
        with pytest.raises(SendError) as caught:
            canonical_address(to, "alice")
        assert caught.value.reason == "membership-invalid"
        assert "32" in str(caught.value)


def test_too_many_members_is_refused_before_any_lookup() -> None:
    names = ",".join(f"remote-{index:02d}" for index in range(32))
    with pytest.raises(SendError) as caught:
        resolve_address(f"group:{names}", "alice", REGISTRY)
    assert caught.value.reason == "membership-invalid"


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("bob", True),
        ("agent-10", True),
        ("a1b", True),
        ("a" * 32, True),
        ("a" * 33, False),
        ("ab", False),
        ("Bob", False),
        ("bo b", False),
        ("bob.x", False),
        ("b\u00f6b", False),
        (7, False),
    ],
)
def test_agent_names(value: object, ok: bool) -> None:
    assert is_agent_name(value) is ok


def test_address_input_syntax_allows_any_order_and_repeats() -> None:
    assert is_address_input("group:carol,bob,carol")
    assert not is_address_input("group:carol,Bob")
    assert not is_address_input(None)


def test_address_errors_come_before_any_post(endpoint: SocialEndpoint) -> None:
    for to in ("agent:alice", "group:bob,carol,bob", "agent:Bob", "agent:nobody"):
        with pytest.raises(SendError):
            endpoint.send(to, "hello")
    assert endpoint.posts() == []
