"""Shared inputs and readers of the social bridge tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.doors.social import SocialSession
from pytest_harness_audit.session.harness import Harness

PEERS = ("bob", "carol", "dave")
#: Sentinel of ``make_session(firewall=…)``: use the policy's own firewall.
FROM_POLICY = object()
#: The ``make_session`` fixture: ``(policy="safety", firewall=FROM_POLICY) -> (harness, session)``.
SessionFactory = Callable[..., tuple[Harness, SocialSession]]

SLOT_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"slot": {"type": "string", "enum": ["mon", "tue"]}},
    "required": ["slot"],
}
#: The API key in the python-service workspace's .env.
API_KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"


def gather(deadline: int = 60) -> dict[str, object]:
    """A gather collective with the slot form."""
    return {"op": "gather", "deadline": deadline, "requestedSchema": SLOT_SCHEMA}


def all_gather(deadline: int = 60) -> dict[str, object]:
    """An all_gather collective with the slot form."""
    return {"op": "all_gather", "deadline": deadline, "requestedSchema": SLOT_SCHEMA}


def message_records(harness: Harness) -> list[CallRecord]:
    """The session's send_message records, in chain order."""
    return [r for r in harness.records if r.tool == "send_message"]


def social(record: CallRecord) -> Mapping[str, Any]:
    """The record's social field."""
    value = record.raw["social"]
    assert isinstance(value, Mapping)
    return value


def deny_messages(**match: Any) -> dict[str, Any]:
    """A policy document denying category message (optionally narrowed by ``match``)."""
    return {
        "defaultPolicy": "allow",
        "enforce": True,
        "rules": [
            {
                "id": "no-messages",
                "name": "No messages",
                "priority": 1,
                "decision": "deny",
                "reason": "messages are not allowed here",
                "match": {"categories": ["message"], **match},
            }
        ],
    }
