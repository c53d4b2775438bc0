"""Evidence revisions for every send kind the firewall checks: multicasts (direct and group),
gathers, all_gathers and responses.

Spec ("Stock host projection"): "The evidence revision comparison, retained assessment and
intent binding commit atomically. One stale capture is checked again; another is held in
enforcement mode. Guidance mode records that hold and allows the original send without stale
advice." A held send in enforcement mode is refused with ``FirewallSendError``, whose data is
``{reason: "firewall-refused", checkId, refusal, feedback}``.
"""

from __future__ import annotations

import pytest
from social_support import gather
from stale_support import (
    ANSWERING,
    COLLECTING,
    HOLD_FEEDBACK_TEXT,
    HOLD_REFUSAL_TEXT,
    KINDS,
    DuringCheck,
    Kind,
    carries,
    retained,
    sent,
)

from pytest_harness_audit.social import (
    CollectiveError,
    FirewallSendError,
    MessageFirewall,
    MessageRule,
    SocialEndpoint,
    SocialEvent,
    SocialToolError,
)
from pytest_harness_audit.social.errors import REFUSED_CODE

CAREFUL = MessageRule("careful", "guide", reason="mind the tone")


def armed(
    make_endpoint: object, kind: Kind, mode: str
) -> tuple[SocialEndpoint, MessageFirewall, DuringCheck]:
    """An endpoint with a firewall in ``mode`` whose checks run the hook's actions; set
    ``hook.during`` to what runs inside each check."""
    firewall = MessageFirewall([CAREFUL], mode=mode)  # type: ignore[arg-type]
    endpoint = make_endpoint(firewall=firewall)  # type: ignore[operator]
    kind.setup(endpoint)
    hook = DuringCheck()
    firewall.secret_scanner = hook
    return endpoint, firewall, hook


@pytest.mark.parametrize("kind", KINDS, ids=str)
@pytest.mark.parametrize("mode", ["enforcement", "guidance"])
def test_one_stale_capture_is_checked_again_and_sent(
    make_endpoint: object, events: list[SocialEvent], kind: Kind, mode: str
) -> None:
    endpoint, firewall, hook = armed(make_endpoint, kind, mode)
    hook.during = [firewall.note_evidence]
    result = kind.send(endpoint, "hello there")
    assert hook.checks == 2  # checked again
    posts = sent(endpoint)
    assert len(posts) == kind.posts
    assert all(carries(post, "hello there") for post in posts)
    (bound,) = retained(endpoint)  # the stale check bound nothing; the second is bound
    assert bound["evidenceRevision"] == 1 == firewall.evidence_revision
    assert bound["operation"] == kind.operation
    assert "held" not in bound
    assert result.guidance is not None
    assert result.guidance.to_json() == {
        "checkId": bound["checkId"],
        "decision": "guide",
        "advice": "mind the tone",
    }
    assert events[-1].outcome == "sent" and events[-1].check_id == bound["checkId"]


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_another_stale_capture_is_held_in_enforcement_mode(
    make_endpoint: object, events: list[SocialEvent], kind: Kind
) -> None:
    endpoint, firewall, hook = armed(make_endpoint, kind, "enforcement")
    hook.during = [firewall.note_evidence, firewall.note_evidence]
    with pytest.raises(FirewallSendError) as held:
        kind.send(endpoint, "hello there")
    assert hook.checks == 2  # checked once more, then held: never a third time
    (kept,) = retained(endpoint)
    assert held.value.error_data() == {
        "reason": "firewall-refused",
        "checkId": kept["checkId"],
        "refusal": HOLD_REFUSAL_TEXT,
        "feedback": HOLD_FEEDBACK_TEXT,
    }
    assert held.value.message == f"send refused: {HOLD_REFUSAL_TEXT}; {HOLD_FEEDBACK_TEXT}"
    assert (kept["held"], kept["mode"], kept["decision"]) == (True, "enforcement", "guide")
    assert kept["advice"] is None
    assert kept["evidenceRevision"] == 1 and firewall.evidence_revision == 2
    assert sent(endpoint) == []  # no intent, no post
    assert not [op for op in endpoint.collectives.operations() if op.requester == "alice"]
    assert (events[-1].outcome, events[-1].reason) == ("refused", "firewall-refused")
    assert events[-1].check_id == kept["checkId"]
    # "Each retry or revision is a new invocation, checked again": it goes out now
    retry = kind.send(endpoint, "hello there")
    assert hook.checks == 3
    assert len(sent(endpoint)) == kind.posts
    assert retry.guidance is not None and retry.guidance.advice == "mind the tone"


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_guidance_mode_records_the_hold_and_sends_without_stale_advice(
    make_endpoint: object, events: list[SocialEvent], kind: Kind
) -> None:
    endpoint, firewall, hook = armed(make_endpoint, kind, "guidance")
    hook.during = [firewall.note_evidence, firewall.note_evidence]
    result = kind.send(endpoint, "hello there")
    assert hook.checks == 2
    assert result.guidance is None  # without stale advice
    assert "guidance" not in result.to_mcp()
    posts = sent(endpoint)  # the original send
    assert len(posts) == kind.posts
    assert all(carries(post, "hello there") for post in posts)
    (kept,) = retained(endpoint)  # the hold is recorded, with the send
    assert (kept["held"], kept["mode"], kept["decision"]) == (True, "guidance", "guide")
    assert kept["advice"] is None
    assert events[-1].outcome == "sent"
    assert events[-1].guidance is None and events[-1].held
    assert events[-1].to_json()["held"] is True


@pytest.mark.parametrize("kind", [*COLLECTING, *ANSWERING], ids=str)
def test_a_hold_refuses_on_the_original_call_even_with_inbound_failure_delivery(
    make_endpoint: object, kind: Kind
) -> None:
    """ "FirewallSendError returns a retained check reference and permitted feedback on the
    original send call, including when failureDelivery is inbound." """
    endpoint, firewall, hook = armed(make_endpoint, kind, "enforcement")
    hook.during = [firewall.note_evidence, firewall.note_evidence]
    with pytest.raises(FirewallSendError) as held:
        kind.send(endpoint, "hello there", "inbound")
    assert (held.value.refusal, held.value.feedback) == (HOLD_REFUSAL_TEXT, HOLD_FEEDBACK_TEXT)
    assert endpoint.check(held.value.check_id) is not None
    assert not [item for item in endpoint.inbox() if item["kind"] == "operationFailed"]
    assert sent(endpoint) == []


@pytest.mark.parametrize("kind", ANSWERING, ids=str)
def test_a_response_whose_request_expired_during_its_check_is_not_sent(
    make_endpoint: object, clock: object, kind: Kind
) -> None:
    endpoint, _, hook = armed(make_endpoint, kind, "enforcement")
    hook.during = [lambda: clock.advance(61)]  # type: ignore[attr-defined]
    with pytest.raises(CollectiveError) as late:
        kind.send(endpoint, "hello there")
    assert late.value.failure.kind == "request-expired"
    assert not [post for post in sent(endpoint) if post.kind == "response"]
    (kept,) = retained(endpoint)  # the assessment is retained alone: it bound no intent
    assert "held" not in kept


@pytest.mark.parametrize("kind", [COLLECTING[0], ANSWERING[0]], ids=str)
def test_over_mcp_a_hold_is_a_firewall_refusal_with_inbound_delivery(
    make_endpoint: object, kind: Kind
) -> None:
    endpoint, firewall, hook = armed(make_endpoint, kind, "enforcement")
    hook.during = [firewall.note_evidence, firewall.note_evidence]
    send_input: dict[str, object] = (
        {"to": "agent:bob", "collectiveResponse": {"action": "accept", "content": {"note": "hi"}}}
        if kind.operation == "response"
        else {"to": "agent:bob", "text": "hi", "collective": gather()}
    )
    with pytest.raises(SocialToolError) as held:
        endpoint.mcp_send_message(
            {"input": send_input}, {"org.social-harness/send": {"failureDelivery": "inbound"}}
        )
    (kept,) = retained(endpoint)
    assert held.value.code == REFUSED_CODE
    assert held.value.data == {
        "reason": "firewall-refused",
        "checkId": kept["checkId"],
        "refusal": HOLD_REFUSAL_TEXT,
        "feedback": HOLD_FEEDBACK_TEXT,
    }
    assert kept["held"] is True
    assert sent(endpoint) == []
