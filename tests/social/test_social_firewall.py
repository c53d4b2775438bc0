"""The message firewall: rules, decisions, both modes, secrets, retained checks, configuration."""

from __future__ import annotations

import pytest
from social_support import SLOT_SCHEMA, gather

from pytest_harness_audit.social import (
    FirewallSendError,
    MessageFirewall,
    MessageRule,
    SendError,
    SocialConfigError,
    SocialEndpoint,
    SocialEvent,
)
from pytest_harness_audit.social.addresses import canonical_address
from pytest_harness_audit.social.firewall_rules import SendCandidate

SECRET = "sk-live-0123456789abcdef"
NO_GROUP_PASSWORDS = MessageRule(
    "no-group-passwords",
    "refuse",
    reason="passwords never go to groups",
    feedback="send it to one agent instead",
    address_kinds=("group",),
    text_patterns=(r"(?i)password",),
)


def candidate(to: str, text: str, operation: str = "multicast") -> SendCandidate:
    return SendCandidate(canonical_address(to, "alice"), operation, text)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rule", "to", "text", "operation", "matches"),
    [
        (NO_GROUP_PASSWORDS, "group:bob,carol", "the Password is x", "multicast", True),
        (NO_GROUP_PASSWORDS, "agent:bob", "the password is x", "multicast", False),
        (NO_GROUP_PASSWORDS, "group:bob,carol", "hello", "multicast", False),
        (MessageRule("m", "refuse", members=("carol",)), "group:bob,carol", "x", "multicast", True),
        (MessageRule("m", "refuse", members=("carol",)), "agent:bob", "x", "multicast", False),
        (MessageRule("o", "guide", operations=("gather",)), "agent:bob", "x", "gather", True),
        (MessageRule("o", "guide", operations=("gather",)), "agent:bob", "x", "multicast", False),
        (MessageRule("any", "refuse"), "agent:bob", "x", "response", True),
        (
            MessageRule("either", "refuse", text_patterns=("foo", "bar")),
            "agent:bob",
            "a bar",
            "multicast",
            True,
        ),
    ],
)
def test_rule_matching(
    rule: MessageRule, to: str, text: str, operation: str, matches: bool
) -> None:
    assert (rule.match(candidate(to, text, operation)) is not None) is matches


def test_most_restrictive_decision_wins() -> None:
    firewall = MessageFirewall(
        [
            MessageRule("advise", "guide", reason="be careful", priority=1),
            MessageRule("block", "refuse", reason="blocked", priority=2, members=("bob",)),
            MessageRule("allow", "admit", priority=0),
        ]
    )
    check = firewall.check(candidate("agent:bob", "x"), "chk_1")
    assert check.decision == "refuse"
    assert check.rule_ids == ("allow", "advise", "block")
    assert check.refusal == "blocked"
    assert check.blocks
    assert firewall.check(candidate("agent:carol", "x"), "chk_2").decision == "guide"


def test_no_match_admits_without_guidance() -> None:
    check = MessageFirewall([NO_GROUP_PASSWORDS]).check(candidate("agent:bob", "hi"), "chk_1")
    assert (check.decision, check.guidance, check.blocks) == ("admit", None, False)


def test_enforcement_refusal_creates_no_post(
    make_endpoint: object, events: list[SocialEvent]
) -> None:
    endpoint = make_endpoint(firewall=MessageFirewall([NO_GROUP_PASSWORDS]))  # type: ignore[operator]
    with pytest.raises(FirewallSendError) as caught:
        endpoint.send("group:bob,carol", "my password is hunter2")
    error = caught.value
    assert str(error) == "send refused: passwords never go to groups; send it to one agent instead"
    assert endpoint.posts() == []
    retained = endpoint.check(error.check_id)
    assert retained is not None
    assert retained["decision"] == "refuse"
    assert retained["ruleIds"] == ["no-group-passwords"]
    assert retained["evidence"] == [
        {"rule": "no-group-passwords", "pattern": "(?i)password", "span": [3, 11]}
    ]
    assert retained["address"] == "group:alice,bob,carol"
    event = events[-1]
    assert (event.kind, event.reason, event.check_id, event.decision, event.mode) == (
        "refused",
        "firewall-refused",
        error.check_id,
        "refuse",
        "enforcement",
    )
    endpoint.send("agent:bob", "my password is hunter2")


def test_guidance_mode_sends_and_carries_guidance(
    make_endpoint: object, events: list[SocialEvent]
) -> None:
    firewall = MessageFirewall([NO_GROUP_PASSWORDS], mode="guidance")
    endpoint = make_endpoint(firewall=firewall)  # type: ignore[operator]
    result = endpoint.send("group:bob,carol", "my password is hunter2")
    assert len(endpoint.posts()) == 1
    assert result.guidance is not None
    assert result.guidance.decision == "refuse"
    assert "passwords never go to groups" in result.guidance.advice
    assert result.to_mcp()["guidance"] == result.guidance.to_json()
    assert (events[-1].kind, events[-1].outcome, events[-1].decision, events[-1].mode) == (
        "send",
        "sent",
        "refuse",
        "guidance",
    )


def test_a_guide_decision_admits_with_advice_in_enforcement(make_endpoint: object) -> None:
    rule = MessageRule("careful", "guide", reason="groups see everything", operations=("gather",))
    endpoint = make_endpoint(firewall=MessageFirewall([rule]))  # type: ignore[operator]
    result = endpoint.send("group:bob,carol", "Which day?", gather())
    assert result.guidance is not None
    assert result.guidance.advice == "groups see everything"
    assert result.to_mcp() == {
        "operationId": result.operation_id,
        "guidance": {
            "checkId": result.guidance.check_id,
            "decision": "guide",
            "advice": "groups see everything",
        },
    }


def test_a_retry_is_a_new_invocation_checked_again(make_endpoint: object) -> None:
    endpoint = make_endpoint(firewall=MessageFirewall([NO_GROUP_PASSWORDS]))  # type: ignore[operator]
    ids = set()
    for _ in range(2):
        with pytest.raises(FirewallSendError) as caught:
            endpoint.send("group:bob,carol", "password", idempotency_key="retry-1")
        ids.add(caught.value.check_id)
    assert len(ids) == 2
    assert endpoint.read_send("retry-1") == {"state": "absent"}
    endpoint.send("group:bob,carol", "revised", idempotency_key="retry-1")


def test_membership_is_resolved_before_the_check(make_endpoint: object) -> None:
    firewall = MessageFirewall([MessageRule("all", "refuse")])
    endpoint = make_endpoint(firewall=firewall)  # type: ignore[operator]
    with pytest.raises(SendError):
        endpoint.send("group:bob,bob", "x")
    with pytest.raises(FirewallSendError):
        endpoint.send("group:bob,carol", "x")


def test_a_noted_secret_is_refused_without_revealing_it(
    make_endpoint: object, events: list[SocialEvent]
) -> None:
    firewall = MessageFirewall()
    endpoint = make_endpoint(firewall=firewall)  # type: ignore[operator]
    endpoint.send("group:bob,carol", f"token {SECRET}")  # not yet known: it goes out
    assert firewall.note_secret(SECRET, ".env")
    with pytest.raises(FirewallSendError) as caught:
        endpoint.send("group:bob,carol", f"here it is: {SECRET}!")
    error = caught.value
    assert SECRET not in str(error)
    assert SECRET not in repr(error.error_data())
    assert ".env" not in str(error)
    retained = endpoint.check(error.check_id)
    assert retained is not None
    assert retained["ruleIds"] == ["secret-in-message"]
    evidence = retained["evidence"][0]
    assert evidence["sources"] == [".env"]
    assert SECRET not in repr(retained)
    assert len(endpoint.posts()) == 1
    assert events[-1].reason == "firewall-refused"


def test_secrets_in_answers_are_refused(make_endpoint: object) -> None:
    firewall = MessageFirewall()
    endpoint = make_endpoint(firewall=firewall)  # type: ignore[operator]
    firewall.note_secret(SECRET, "config.yml")
    schema = {"type": "object", "properties": {"note": {"type": "string"}}}
    endpoint.peer("bob").gather("Any notes?", schema)
    with pytest.raises(FirewallSendError):
        endpoint.respond("agent:bob", {"action": "accept", "content": {"note": SECRET}})
    assert endpoint.posts(sender="alice") == []


def test_short_and_repeated_secrets_are_not_registered() -> None:
    firewall = MessageFirewall()
    assert not firewall.note_secret("abc", "x")
    assert firewall.note_secret("abcdef", "x")
    assert not firewall.note_secret("abcdef", "y")
    assert firewall.secret_count == 1


def test_the_secret_guard_can_be_turned_off() -> None:
    firewall = MessageFirewall(guard_secrets=False)
    firewall.note_secret(SECRET, ".env")
    assert firewall.check(candidate("agent:bob", SECRET), "chk_1").decision == "admit"


def test_a_check_that_cannot_run_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    firewall = MessageFirewall([MessageRule("any", "admit")])

    def broken(self: MessageFirewall, _: SendCandidate) -> list[object]:
        raise RuntimeError("boom")

    monkeypatch.setattr(MessageFirewall, "_matches", broken)
    check = firewall.check(candidate("agent:bob", "x"), "chk_1")
    assert (check.decision, check.refusal) == (
        "refuse",
        "the message firewall could not check this send",
    )


def test_patterns_run_in_linear_time() -> None:
    """A pattern that backtracks exponentially elsewhere finishes at once under RE2."""
    rule = MessageRule("redos", "refuse", text_patterns=(r"(a+)+$",))
    assert rule.match(candidate("agent:bob", "a" * 50_000 + "!")) is None


def test_the_policy_hash_changes_with_the_rules() -> None:
    first = MessageFirewall([NO_GROUP_PASSWORDS]).policy_hash
    assert first == MessageFirewall([NO_GROUP_PASSWORDS]).policy_hash
    assert first != MessageFirewall([NO_GROUP_PASSWORDS], mode="guidance").policy_hash


def test_configuration_from_a_mapping() -> None:
    firewall = MessageFirewall.from_mapping(
        {
            "mode": "guidance",
            "rules": [
                {
                    "id": "no-secrets-to-groups",
                    "decision": "refuse",
                    "reason": "secrets never go to groups",
                    "priority": 5,
                    "match": {"addressKinds": ["group"], "textPatterns": ["(?i)secret"]},
                }
            ],
        },
        source="rules/social.yaml",
    )
    assert firewall.mode == "guidance"
    assert firewall.rules[0].address_kinds == ("group",)
    assert firewall.check(candidate("group:bob,carol", "a Secret"), "c").decision == "refuse"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"mode": "audit"}, "field 'mode'"),
        ({"colour": 1}, "unknown field 'colour'"),
        ({"rules": [{"id": "r", "decision": "deny"}]}, "rule 'r': field 'decision'"),
        (
            {"rules": [{"id": "r", "decision": "refuse", "match": {"who": []}}]},
            "unknown field 'who'",
        ),
        (
            {"rules": [{"id": "r", "decision": "refuse", "match": {"textPatterns": ["(a"]}}]},
            "rule 'r': text pattern '(a' does not compile",
        ),
        (
            {"rules": [{"id": "r", "decision": "refuse", "match": {"addressKinds": ["room"]}}]},
            "'room'",
        ),
        (
            {"rules": [{"id": "r", "decision": "refuse"}, {"id": "r", "decision": "admit"}]},
            "used twice",
        ),
        ({"rules": [{"decision": "refuse"}]}, "field 'id'"),
        ({"guardSecrets": "yes"}, "guardSecrets"),
    ],
)
def test_configuration_errors_name_file_field_and_value(
    data: dict[str, object], message: str
) -> None:
    with pytest.raises(SocialConfigError) as caught:
        MessageFirewall.from_mapping(data, source="rules/social.yaml")
    assert str(caught.value).startswith("rules/social.yaml: ")
    assert message in str(caught.value)


def test_peer_gathers_use_the_form_grammar(endpoint: SocialEndpoint) -> None:
    with pytest.raises(SocialConfigError):
        endpoint.peer("bob").gather("Q", {"type": "object"})
    assert endpoint.peer("bob").gather("Q", SLOT_SCHEMA).startswith("col_")
