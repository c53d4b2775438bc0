"""Racing a send against an evidence change: an agent that reads a secret while its own send
carrying it is being checked must not get the secret out.

The check captured the evidence before the secret was noted, so it passed; the intent binding
compares revisions, sees the capture is stale and checks again (now the secret is known), or
holds the send when the evidence moved again. Benign look-alikes — an unrelated change, a secret
read after the send was bound — must not refuse anything.
"""

from __future__ import annotations

import threading

import pytest
from stale_support import (
    HOLD_FEEDBACK_TEXT,
    HOLD_REFUSAL_TEXT,
    KINDS,
    SECRET,
    DuringCheck,
    Kind,
    carries,
    in_thread,
    retained,
    sent,
)

from pytest_harness_audit.social import (
    FirewallSendError,
    MessageFirewall,
    SocialEndpoint,
    SocialEvent,
)
from pytest_harness_audit.social import capture as capture_module

SECRET_REFUSAL_TEXT = "the message contains a secret value read earlier in this session"
SECRET_FEEDBACK_TEXT = "remove the secret value from the message and send again"
LEAK = f"the deploy key is {SECRET}"


def raced(
    make_endpoint: object, kind: Kind, mode: str = "enforcement"
) -> tuple[SocialEndpoint, MessageFirewall, DuringCheck]:
    firewall = MessageFirewall(mode=mode)  # type: ignore[arg-type]
    endpoint = make_endpoint(firewall=firewall)  # type: ignore[operator]
    kind.setup(endpoint)
    hook = DuringCheck()
    firewall.secret_scanner = hook
    return endpoint, firewall, hook


def read_secret(firewall: MessageFirewall, value: str = SECRET) -> None:
    """The agent reads a credential file on another thread: the secret is noted."""
    in_thread(lambda: firewall.note_secret(value, ".env"))


def nothing_leaked(endpoint: SocialEndpoint, error: FirewallSendError) -> None:
    assert not [post for post in sent(endpoint) if carries(post, SECRET)]
    assert SECRET not in str(error) and SECRET not in repr(error.error_data())
    assert SECRET not in repr(retained(endpoint))


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_secret_read_while_its_send_is_checked_does_not_get_out(
    make_endpoint: object, events: list[SocialEvent], kind: Kind
) -> None:
    endpoint, firewall, hook = raced(make_endpoint, kind)
    hook.during = [lambda: read_secret(firewall)]
    with pytest.raises(FirewallSendError) as refused:
        kind.send(endpoint, LEAK)
    assert hook.checks == 2  # the stale capture was checked again, against the secret
    assert refused.value.error_data() == {
        "reason": "firewall-refused",
        "checkId": refused.value.check_id,
        "refusal": SECRET_REFUSAL_TEXT,
        "feedback": SECRET_FEEDBACK_TEXT,
    }
    assert sent(endpoint) == []
    nothing_leaked(endpoint, refused.value)
    (kept,) = retained(endpoint)
    assert kept["checkId"] == refused.value.check_id
    assert kept["ruleIds"] == ["secret-in-message"]
    assert kept["evidence"][0]["sources"] == [".env"]
    assert events[-1].reason == "firewall-refused"


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_secret_read_during_the_second_check_holds_the_send(
    make_endpoint: object, kind: Kind
) -> None:
    endpoint, firewall, hook = raced(make_endpoint, kind)
    hook.during = [firewall.note_evidence, lambda: read_secret(firewall)]
    with pytest.raises(FirewallSendError) as held:
        kind.send(endpoint, LEAK)
    assert (held.value.refusal, held.value.feedback) == (HOLD_REFUSAL_TEXT, HOLD_FEEDBACK_TEXT)
    assert sent(endpoint) == []
    nothing_leaked(endpoint, held.value)
    # the retry is checked against the current evidence, which now holds the secret
    with pytest.raises(FirewallSendError) as retried:
        kind.send(endpoint, LEAK)
    assert retried.value.refusal == SECRET_REFUSAL_TEXT
    assert sent(endpoint) == []
    nothing_leaked(endpoint, retried.value)


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_secret_read_while_the_intent_is_bound_waits_for_the_commit(
    make_endpoint: object, monkeypatch: pytest.MonkeyPatch, kind: Kind
) -> None:
    """Between the comparison and the post there is no gap to read into: the read waits for the
    commit, so the post was made before the secret was known, and the next send is refused."""
    endpoint, firewall, _ = raced(make_endpoint, kind)
    real_insert = capture_module.insert_check
    waited: list[bool] = []

    def insert_while_a_secret_is_read(*args: object) -> None:
        reader = threading.Thread(target=lambda: firewall.note_secret(SECRET, ".env"))
        reader.start()
        reader.join(timeout=0.2)
        waited.append(reader.is_alive())  # blocked on the evidence lock until the commit
        real_insert(*args)  # type: ignore[arg-type]
        monkeypatch.setattr(capture_module, "insert_check", real_insert)
        readers.append(reader)

    readers: list[threading.Thread] = []
    monkeypatch.setattr(capture_module, "insert_check", insert_while_a_secret_is_read)
    result = kind.send(endpoint, LEAK)
    for reader in readers:
        reader.join(timeout=10)
    assert waited == [True]
    assert firewall.secret_count == 1 and firewall.evidence_revision == 1
    (bound,) = retained(endpoint)
    assert bound["evidenceRevision"] == 0  # the send was bound before the secret was read
    assert result.guidance is None
    assert len(sent(endpoint)) == kind.posts  # a policy result never unsends it
    with pytest.raises(FirewallSendError) as refused:
        endpoint.send("agent:bob", LEAK)
    assert refused.value.refusal == SECRET_REFUSAL_TEXT


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_an_unrelated_secret_read_during_the_check_refuses_nothing(
    make_endpoint: object, kind: Kind
) -> None:
    endpoint, firewall, hook = raced(make_endpoint, kind)
    hook.during = [lambda: read_secret(firewall, "pk-other-9876543210")]
    result = kind.send(endpoint, "the deploy key is in the vault")
    assert hook.checks == 2
    assert result.guidance is None
    assert len(sent(endpoint)) == kind.posts
    (bound,) = retained(endpoint)
    assert bound["decision"] == "admit" and bound["evidenceRevision"] == 1


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_guidance_mode_refuses_a_raced_secret_too(make_endpoint: object, kind: Kind) -> None:
    """Guidance mode softens the rules, not the secret guard: the second check knows the
    secret, and the send is refused as in enforcement mode."""
    endpoint, firewall, hook = raced(make_endpoint, kind, "guidance")
    hook.during = [lambda: read_secret(firewall)]
    with pytest.raises(FirewallSendError) as refused:
        kind.send(endpoint, LEAK)
    assert hook.checks == 2
    assert (refused.value.refusal, refused.value.feedback) == (
        SECRET_REFUSAL_TEXT,
        SECRET_FEEDBACK_TEXT,
    )
    assert sent(endpoint) == []
    nothing_leaked(endpoint, refused.value)
    (kept,) = retained(endpoint)
    assert kept["ruleIds"] == ["secret-in-message"] and kept["mode"] == "guidance"
    assert kept["advice"] is None and "held" not in kept
