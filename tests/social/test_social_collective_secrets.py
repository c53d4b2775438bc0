"""The secret guard reads every string a send carries, not only its text: a gather's
``requestedSchema`` (descriptions, defaults, enums, titles, property names, keywords the form
grammar ignores) and an answer's content, keys included. Ordinary forms still go out."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from social_support import gather

from pytest_harness_audit.social import FirewallSendError, MessageFirewall, SocialEndpoint
from pytest_harness_audit.social.addresses import canonical_address
from pytest_harness_audit.social.firewall_rules import SendCandidate
from pytest_harness_audit.social.message_json import MessageJsonError, json_strings

SECRET = "sk-live-4f9a1c2e7b3d8a6f0e5c9b2a"


def _form(**properties: Any) -> dict[str, object]:
    return {"type": "object", "properties": properties}


ATTACKS: dict[str, dict[str, object]] = {
    "description": _form(ok={"type": "boolean", "description": f"token {SECRET}"}),
    "default": _form(ok={"type": "string", "default": SECRET}),
    "enum": _form(ok={"type": "string", "enum": ["mon", SECRET]}),
    "title": _form(ok={"type": "string", "title": f"use {SECRET}"}),
    "property-name": _form(**{SECRET: {"type": "boolean"}}),
    "unicode-property-name": _form(**{f"ключ {SECRET} 鍵": {"type": "boolean"}}),
    "one-of-const": _form(
        ok={"type": "string", "oneOf": [{"const": SECRET, "title": "a"}, {"const": "b"}]}
    ),
    "multi-select-items": _form(
        ok={"type": "array", "items": {"type": "string", "enum": ["x", SECRET]}}
    ),
    "schema-dialect": {**_form(ok={"type": "boolean"}), "$schema": f"https://x.test/{SECRET}"},
    "ignored-keyword-nested-lists": _form(
        ok={"type": "boolean", "x-note": [[["deep", [{"k": [SECRET]}]]]]}
    ),
    "base64-in-description": _form(
        ok={"type": "boolean", "description": base64.b64encode(SECRET.encode()).decode()}
    ),
    "large-form-last-property": _form(
        **{f"field_{i:03d}": {"type": "string", "description": "x" * 40} for i in range(200)},
        zz={"type": "string", "default": SECRET},
    ),
}


def _guarded(make_endpoint: Any) -> tuple[MessageFirewall, SocialEndpoint]:
    firewall = MessageFirewall()
    assert firewall.note_secret(SECRET, ".env")
    return firewall, make_endpoint(firewall=firewall)


@pytest.mark.parametrize("where", list(ATTACKS))
def test_a_secret_in_a_gather_schema_is_refused(make_endpoint: Any, where: str) -> None:
    _, endpoint = _guarded(make_endpoint)
    with pytest.raises(FirewallSendError) as caught:
        endpoint.send("agent:bob", "Approve the deploy?", gather(schema=ATTACKS[where]))
    assert SECRET not in str(caught.value)
    assert endpoint.posts() == []
    retained = endpoint.check(caught.value.check_id)
    assert retained is not None and retained["ruleIds"] == ["secret-in-message"]
    assert SECRET not in repr(retained)


def test_an_all_gather_to_a_group_is_checked_too(make_endpoint: Any) -> None:
    _, endpoint = _guarded(make_endpoint)
    collective = {"op": "all_gather", "deadline": 60, "requestedSchema": ATTACKS["default"]}
    with pytest.raises(FirewallSendError):
        endpoint.send("group:bob,carol", "Which one?", collective)
    assert endpoint.posts() == []


def test_a_secret_split_between_two_schema_strings_is_refused(make_endpoint: Any) -> None:
    _, endpoint = _guarded(make_endpoint)
    half = len(SECRET) // 2
    schema = _form(
        a={"type": "string", "description": SECRET[:half]},
        b={"type": "string", "description": SECRET[half:]},
    )
    with pytest.raises(FirewallSendError):
        endpoint.send("agent:bob", "Fill this in", gather(schema=schema))


def test_a_secret_in_a_multi_select_answer_list_is_refused(make_endpoint: Any) -> None:
    """The peer offered the option; answering with it still sends the secret out."""
    _, endpoint = _guarded(make_endpoint)
    schema = _form(
        pick={"type": "array", "items": {"type": "string", "enum": ["a", f"b {SECRET}"]}},
    )
    endpoint.peer("bob").gather("Pick some", schema)
    with pytest.raises(FirewallSendError):
        endpoint.respond(
            "agent:bob", {"action": "accept", "content": {"pick": ["a", f"b {SECRET}"]}}
        )
    assert endpoint.posts(sender="alice") == []


def test_a_secret_in_a_peer_chosen_answer_key_is_refused(make_endpoint: Any) -> None:
    """The requester named the field after the secret: the answer repeats it as a key."""
    firewall, endpoint = _guarded(make_endpoint)
    endpoint.peer("bob").gather("Any notes?", _form(note={"type": "string"}))
    candidate = SendCandidate(
        canonical_address("agent:bob", "alice"), "response", "{}", content={SECRET: "yes"}
    )
    assert firewall.check(candidate, "chk_1").decision == "refuse"


def test_the_scanner_the_session_sets_reads_the_schema(make_endpoint: Any) -> None:
    """The workspace's secrets the gate's inspection knows, not only those noted here."""
    scanned: list[str] = []

    def scanner(text: str) -> list[str]:
        scanned.append(text)
        return ["fp-1"] if "workspace-only-value" in text else []

    firewall = MessageFirewall()
    firewall.secret_scanner = scanner
    endpoint = make_endpoint(firewall=firewall)
    schema = _form(ok={"type": "boolean", "description": "workspace-only-value"})
    with pytest.raises(FirewallSendError):
        endpoint.send("agent:bob", "Approve?", gather(schema=schema))
    assert any("workspace-only-value" in text for text in scanned)


def test_content_that_cannot_be_read_refuses() -> None:
    firewall = MessageFirewall()
    candidate = SendCandidate(
        canonical_address("agent:bob", "alice"), "gather", "q", content={"x": object()}
    )
    check = firewall.check(candidate, "chk_1")
    assert (check.decision, check.rule_ids) == ("refuse", ("firewall-error",))


# -- benign look-alikes ---------------------------------------------------------------------


BENIGN: dict[str, dict[str, object]] = {
    "descriptions": _form(
        ok={"type": "boolean", "description": "Approve the API_KEY rotation for sk-live keys?"},
        when={"type": "string", "format": "date", "title": "Deploy date"},
    ),
    "defaults-and-enums": _form(
        env={"type": "string", "enum": ["staging", "production"], "default": "staging"},
        replicas={"type": "integer", "minimum": 1, "maximum": 9, "default": 3},
    ),
    "token-words": _form(
        token={"type": "string", "description": "paste the ticket token (e.g. OPS-1234)"},
    ),
}


@pytest.mark.parametrize("where", list(BENIGN))
def test_an_ordinary_gather_goes_out(make_endpoint: Any, where: str) -> None:
    _, endpoint = _guarded(make_endpoint)
    result = endpoint.send("agent:bob", "Approve the deploy?", gather(schema=BENIGN[where]))
    assert result.operation_id is not None and result.guidance is None
    assert len(endpoint.posts()) == 1


def test_an_ordinary_answer_goes_out(make_endpoint: Any) -> None:
    _, endpoint = _guarded(make_endpoint)
    endpoint.peer("bob").gather("Notes?", _form(note={"type": "string"}))
    result = endpoint.respond("agent:bob", {"action": "accept", "content": {"note": "all good"}})
    assert result.post_ids


def test_text_rules_still_match_only_the_text(make_endpoint: Any) -> None:
    """A rule's text patterns read the message text; the schema is read by the secret guard."""
    from pytest_harness_audit.social import MessageRule

    rule = MessageRule("no-password", "refuse", text_patterns=(r"(?i)password",))
    endpoint = make_endpoint(firewall=MessageFirewall([rule]))
    schema = _form(pw={"type": "string", "description": "your password hint"})
    assert endpoint.send("agent:bob", "A question", gather(schema=schema)).operation_id


def test_json_strings_reads_keys_values_and_numbers_in_order() -> None:
    value = {"a": [1, "x", {"ключ": None, "b": True}], "c": 2.5}
    assert json_strings(value) == ["a", "1", "x", "ключ", "b", "c", "2.5"]
    deep: object = SECRET
    for _ in range(5000):  # deeper than any recursion limit
        deep = [deep]
    assert json_strings(deep) == [SECRET]
    with pytest.raises(MessageJsonError):
        json_strings({"x": {1, 2}})


def test_a_gather_stated_as_whole_json_text_is_checked_too(make_endpoint: Any) -> None:
    """The model's own form: the message text is the JSON of the gather."""
    _, endpoint = _guarded(make_endpoint)
    text = json.dumps(
        {"gather": "Approve?", "deadline": 60, "requestedSchema": ATTACKS["enum"]},
        ensure_ascii=False,
    )
    with pytest.raises(FirewallSendError):
        endpoint.send_message_text("agent:bob", text)
    assert endpoint.posts() == []
