"""Guidance mode softens the firewall's own rules, never its secret guard.

A firewall in ``guidance`` mode lets every send its rules would refuse go out with advice (WARN).
Its secret guard used to be softened the same way: under ``safety`` a send carrying the
workspace's API key went to bob with a ``would refuse`` note and the session was only WARN —
while the same send with the guard off was blocked by the gate (FAIL), so turning the guard on
let the secret out. A known secret, or a send the firewall could not check, is now refused in
both modes (``FirewallSendError``, FAIL); the author's rules still only advise in guidance mode.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import FirewallSendError, MessageFirewall
from pytest_harness_audit.social.addresses import canonical_address
from pytest_harness_audit.social.firewall_rules import SendCandidate

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"
NO_GROUPS = {
    "id": "no-groups",
    "decision": "refuse",
    "reason": "groups see everything",
    "match": {"addressKinds": ["group"]},
}


def _candidate(text: str, to: str = "agent:bob") -> SendCandidate:
    return SendCandidate(canonical_address(to, "alice"), "multicast", text)


def test_a_noted_secret_blocks_in_guidance_mode() -> None:
    firewall = MessageFirewall(mode="guidance")
    assert firewall.note_secret(KEY, ".env")
    check = firewall.check(_candidate(f"the key is {KEY}"), "chk_1")
    assert (check.decision, check.blocks, check.guidance) == ("refuse", True, None)
    assert check.rule_ids == ("secret-in-message",)


def test_a_check_that_cannot_run_blocks_in_guidance_mode() -> None:
    def broken(text: str) -> list[str]:
        raise RuntimeError("scanner down")

    firewall = MessageFirewall(mode="guidance")
    firewall.secret_scanner = broken
    check = firewall.check(_candidate("hello"), "chk_1")
    assert (check.decision, check.blocks, check.rule_ids) == ("refuse", True, ("firewall-error",))


def test_a_rule_refusal_in_guidance_mode_is_still_advice() -> None:
    firewall = MessageFirewall.from_mapping({"mode": "guidance", "rules": [NO_GROUPS]})
    assert firewall.note_secret(KEY, ".env")
    check = firewall.check(_candidate("lunch?", "group:bob,carol"), "chk_1")
    assert (check.decision, check.blocks) == ("refuse", False)
    assert check.guidance is not None and "groups see everything" in check.guidance.advice


@pytest.fixture
def guided(tmp_path: Path) -> Iterator[Harness]:
    policy = Policy.from_dict(
        {"preset": "safety", "firewall": {"mode": "guidance", "rules": [NO_GROUPS]}}
    )
    harness = Harness.create(
        tmp_path, template="python-service", policy=policy, agents=("alice", "bob", "carol")
    )
    yield harness
    harness.close()


def _workspace_key(harness: Harness) -> str:
    env = (harness.root / ".env").read_text(encoding="utf-8")
    return next(line.split("=", 1)[1] for line in env.splitlines() if line.startswith("API_KEY="))


@pytest.mark.parametrize("to", ["agent:bob", "group:bob,carol"])
def test_a_workspace_secret_never_leaves_under_a_guidance_firewall(
    guided: Harness, to: str
) -> None:
    key = _workspace_key(guided)
    with pytest.raises(FirewallSendError) as refused:
        guided.send(to, f"the key is {key}")
    assert key not in str(refused.value)
    assert guided.posts() == []
    assert guided.verdict == "FAIL"
    assert key not in guided.chain.path.read_text(encoding="utf-8")


def test_ordinary_sends_under_a_guidance_firewall_still_go_out(guided: Harness) -> None:
    key = _workspace_key(guided)
    direct = guided.send("agent:bob", f"rotate the key ending in ...{key[-4:]}")
    assert direct.guidance is None
    grouped = guided.send("group:bob,carol", "lunch at noon?")
    assert grouped.guidance is not None  # the rule's refusal, as advice
    assert len(guided.posts()) == 2
    assert guided.verdict == "WARN"
