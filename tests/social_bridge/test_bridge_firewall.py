"""The message firewall through the bridge, and the firewall a policy configures."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge_support import SessionFactory, message_records, social

from pytest_harness_audit.doors.social import firewall_from_policy
from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import Verdict
from pytest_harness_audit.social import FirewallSendError, MessageFirewall, MessageRule

NO_PASSWORDS = MessageRule(
    "no-passwords",
    "refuse",
    reason="passwords are never sent",
    feedback="send a reference instead",
    text_patterns=("(?i)password",),
)
CAREFUL_WITH_GROUPS = MessageRule(
    "careful-with-groups", "guide", reason="groups see everything", address_kinds=("group",)
)


def test_an_enforced_refusal_posts_nothing_and_fails(make_session: SessionFactory) -> None:
    harness, session = make_session(firewall=MessageFirewall([NO_PASSWORDS]))
    with pytest.raises(FirewallSendError) as refused:
        session.endpoint.send("agent:bob", "the password is swordfish")
    assert refused.value.refusal == "passwords are never sent"
    assert session.endpoint.posts() == []

    (record,) = message_records(harness)
    assert record.status == "blocked" and record.decision == "allow"
    assert record.error_message == refused.value.message
    assert "firewall:refuse" in record.constraints
    assert record.raw["firewall"] == {
        "decision": "refuse",
        "mode": "enforcement",
        "checkId": refused.value.check_id,
        "ruleIds": ["no-passwords"],
    }
    assert social(record)["reason"] == "firewall-refused"
    assert social(record)["checkId"] == refused.value.check_id
    verdict, reasons = harness.judge()
    assert verdict is Verdict.FAIL and reasons[0].code == "firewall-refused"


def test_a_retry_is_checked_again(make_session: SessionFactory) -> None:
    harness, session = make_session(firewall=MessageFirewall([NO_PASSWORDS]))
    with pytest.raises(FirewallSendError) as first:
        session.endpoint.send("agent:bob", "password?")
    with pytest.raises(FirewallSendError) as second:
        session.endpoint.send("agent:bob", "password?")
    assert first.value.check_id != second.value.check_id
    session.endpoint.send("agent:bob", "see the vault entry")
    assert [r.status for r in message_records(harness)] == ["blocked", "blocked", "success"]


def test_guidance_goes_out_with_the_advice(make_session: SessionFactory) -> None:
    harness, session = make_session(firewall=MessageFirewall([CAREFUL_WITH_GROUPS]))
    result = session.endpoint.send("group:bob,carol", "status report")
    assert result.guidance is not None and result.guidance.decision == "guide"
    assert result.guidance.advice == "groups see everything"
    assert len(session.endpoint.posts("group:bob,carol")) == 1

    (record,) = message_records(harness)
    assert record.status == "success"
    assert record.raw["firewall"]["decision"] == "guide"
    assert social(record)["guidance"] == "groups see everything"
    verdict, reasons = harness.judge()  # advice given is worth a look, like a warn decision
    assert verdict is Verdict.WARN and reasons[0].code == "firewall-guidance"


def test_guidance_mode_turns_a_refusal_into_advice(make_session: SessionFactory) -> None:
    firewall = MessageFirewall([NO_PASSWORDS], mode="guidance")
    harness, session = make_session(firewall=firewall)
    result = session.endpoint.send("agent:bob", "the password is swordfish")
    assert result.guidance is not None and "would refuse" in result.guidance.advice

    (record,) = message_records(harness)
    assert record.status == "success"
    assert record.raw["firewall"]["decision"] == "refuse"
    assert record.raw["firewall"]["mode"] == "guidance"
    verdict, reasons = harness.judge()  # would have been refused: WARN, not FAIL
    assert verdict is Verdict.WARN and reasons[0].code == "firewall-guidance"


def test_no_firewall_no_firewall_field(make_session: SessionFactory) -> None:
    harness, session = make_session(firewall=None)
    session.endpoint.send("agent:bob", "the password is swordfish")
    (record,) = message_records(harness)
    assert "firewall" not in record.raw and "decision" not in social(record)


# -- the firewall of a policy ------------------------------------------------------------------


def test_presets_configure_their_firewall() -> None:
    for name, mode in (("safety", "enforcement"), ("strict", "enforcement")):
        firewall = firewall_from_policy(Policy.preset(name))
        assert firewall is not None and firewall.mode == mode and firewall.guard_secrets


def test_a_policy_without_a_firewall_section_has_none() -> None:
    assert firewall_from_policy(Policy.from_dict({"defaultPolicy": "allow", "rules": []})) is None


def test_a_policy_firewall_with_rules() -> None:
    policy = Policy.from_dict(
        {
            "defaultPolicy": "allow",
            "rules": [],
            "firewall": {
                "mode": "guidance",
                "rules": [
                    {
                        "id": "no-mallory",
                        "decision": "refuse",
                        "match": {"members": ["mallory"]},
                    }
                ],
            },
        }
    )
    firewall = firewall_from_policy(policy)
    assert firewall is not None and firewall.mode == "guidance"
    assert [rule.id for rule in firewall.rules] == ["no-mallory"]


def test_a_bad_firewall_section_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "messages.yaml"
    path.write_text("defaultPolicy: allow\nrules: []\nfirewall:\n  mode: loud\n", encoding="utf-8")
    with pytest.raises(PolicyError) as bad:
        firewall_from_policy(Policy.load(path))
    assert str(path) in str(bad.value)
    assert "field 'firewall'" in str(bad.value) and "'loud'" in str(bad.value)
    assert bad.value.field == "firewall"


def test_a_bad_firewall_rule_without_a_file_names_the_policy() -> None:
    policy = Policy.from_dict(
        {
            "defaultPolicy": "allow",
            "rules": [],
            "firewall": {
                "rules": [{"id": "x", "decision": "refuse", "match": {"textPatterns": ["("]}}]
            },
        },
        name="inline",
    )
    with pytest.raises(PolicyError, match=r"policy 'inline', field 'firewall'.*does not compile"):
        firewall_from_policy(policy)
