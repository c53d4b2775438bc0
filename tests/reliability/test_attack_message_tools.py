"""A workspace secret sent by a tool of the ``message`` category that is not the social door.

The gate leaves messages to the message firewall when the policy's firewall guards secrets —
but only the social door's ``send_message`` meets the firewall. A function tool declared
``category="message"`` (an agent framework's ``send_email``), or an upstream MCP tool a policy maps
to ``message`` (``toolCategories: {mcp__slack__*: message}``), used to be checked by neither: the
key went out and the session was PASS.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.policy.policy import Policy
from pytest_harness_audit.session.harness import Harness

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"  # the python-service workspace's API key


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    document = Policy.preset("safety").to_dict()
    document["toolCategories"] = {"mcp__slack__*": "message"}
    made = Harness.create(
        tmp_path,
        template="python-service",
        policy=Policy.from_dict(document),
        agents=("alice", "bob"),
    )
    yield made
    made.close()


FORMS = {
    "plain": KEY,
    "base64": base64.b64encode(KEY.encode()).decode(),
    "reversed": KEY[::-1],
    "hex": KEY.encode().hex(),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_a_function_tool_of_the_message_category_cannot_send_the_key(
    harness: Harness, form: str
) -> None:
    sent: list[str] = []

    @harness.tool(category="message", on_block="return")
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        sent.append(body)
        return "sent"

    answer = send_email("ops@example.invalid", f"the key is {FORMS[form]}")
    assert answer.startswith("[blocked]") and sent == []
    assert harness.verdict == "FAIL"


def test_an_mcp_tool_mapped_to_message_cannot_send_the_key(harness: Harness) -> None:
    result = harness.execute("mcp__slack__post", {"channel": "#ops", "text": FORMS["base64"]})
    assert result.status == "blocked" and "secret_exposure" in result.record["alerts"]
    assert result.evaluation.category == "message"
    assert KEY not in harness.chain.path.read_text(encoding="utf-8")


def test_the_social_send_still_meets_its_firewall(harness: Harness) -> None:
    from pytest_harness_audit.social import FirewallSendError

    with pytest.raises(FirewallSendError) as refused:
        harness.send("agent:bob", f"the key is {FORMS['base64']}")
    assert refused.value.check_id  # refused by the firewall, with its check id


@pytest.mark.parametrize("text", ["tests pass; ready for review", "set API_KEY in .env first"])
def test_ordinary_messages_pass(harness: Harness, text: str) -> None:
    @harness.tool(category="message")
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        return "sent"

    assert send_email("ops@example.invalid", text) == "sent"
    assert harness.verdict == "PASS"
