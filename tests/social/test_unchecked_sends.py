"""A send refused before its firewall check still meets the secret guard.

The gate leaves a social send's secrets to the message firewall, which checks a send only once
its address, text and form are valid. A send that carries a known secret and is invalid as well
(a lone surrogate in its text, an unknown or malformed address, content over the limit, a bad
answer) is refused before that check: it must not be judged PASS. Its record keeps the invalid
input's refusal and is judged FAIL with the ``secret_exposure`` alert, through every send route
(``harness.send``, ``send_message_text``, the MCP tool, the proxy's ``send_message`` tool).
The same invalid sends without a secret keep their verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from pytest_harness_audit.doors.social import send_message_local_tool
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import SocialSendFailure, SocialToolError

#: Reading ``.env`` is allowed; the firewall guards the secrets read (enforcement mode).
GUARDED = {"preset": "permissive", "firewall": {"mode": "enforcement", "guardSecrets": True}}
#: Dry-run safety: a secret in an error the agent reads is judged WARN by inspection.
DRY_RUN = {"preset": "safety", "enforce": False, "immune": {"enabled": False}}


def _reader(tmp_path: Path, policy: dict[str, object]) -> Harness:
    """A session that has read ``.env``."""
    harness = Harness.create(
        tmp_path,
        template="python-service",
        policy=Policy.from_dict(policy),
        agents=("alice", "bob"),
    )
    assert harness.call("Read", file_path=".env").ok
    return harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    """A session that has read ``.env`` under :data:`GUARDED` (its verdict PASS)."""
    harness = _reader(tmp_path, GUARDED)
    yield harness
    harness.close()


def _key(harness: Harness) -> str:
    found = re.search(r"API_KEY=(\S+)", (harness.root / ".env").read_text(encoding="utf-8"))
    assert found is not None
    return found.group(1)


Route = Callable[[Harness, str, str], object]


def _send(harness: Harness, to: str, text: str) -> object:
    return harness.send(to, text)


def _message_text(harness: Harness, to: str, text: str) -> object:
    return harness.social.endpoint.send_message_text(to, text)


def _mcp(harness: Harness, to: str, text: str) -> object:
    return harness.social.endpoint.mcp_send_message({"input": {"to": to, "text": text}})


def _proxy_tool(harness: Harness, to: str, text: str) -> object:
    tool = send_message_local_tool(harness.social)
    return tool.handler({"input": {"to": to, "text": text}}, None)


ROUTES: dict[str, Route] = {
    "send": _send,
    "send_message_text": _message_text,
    "mcp": _mcp,
    "proxy-tool": _proxy_tool,
}
REFUSED = (SocialSendFailure, SocialToolError, MCPError)


def _invalid(key: str) -> dict[str, tuple[str, str]]:
    """``(to, text)`` of sends refused before the firewall's check, each carrying ``key``."""
    return {
        "lone-surrogate-after": ("agent:bob", f"the key: {key} \ud800"),
        "lone-surrogate-inside": ("agent:bob", f"the key: {key[:14]}\udc00{key[14:]}"),
        "unknown-agent": ("agent:nobody", f"the key: {key}"),
        "invalid-address": ("agent:Bob!", f"the key: {key}"),
        "over-the-limit": ("agent:bob", f"the key: {key} " + "x" * 40_000),
    }


CASES = list(_invalid("k"))


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("case", CASES)
def test_an_invalid_send_carrying_a_secret_fails(harness: Harness, route: str, case: str) -> None:
    to, text = _invalid(_key(harness))[case]
    assert harness.verdict == "PASS"
    with pytest.raises(REFUSED):
        ROUTES[route](harness, to, text)
    assert harness.posts() == []
    record = harness.records[-1]
    assert record.tool == "send_message" and record.status == "error"
    assert "secret_exposure" in record.alerts
    assert harness.verdict == "FAIL"
    assert _key(harness) not in harness.chain.path.read_text(encoding="utf-8")


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("case", CASES)
def test_the_same_invalid_send_without_a_secret_keeps_its_verdict(
    harness: Harness, route: str, case: str
) -> None:
    to, text = _invalid("API_KEY is in .env, ask me for it")[case]
    with pytest.raises(REFUSED):
        ROUTES[route](harness, to, text)
    assert harness.records[-1].status == "error"
    assert "secret_exposure" not in harness.records[-1].alerts
    assert harness.verdict == "PASS"


def test_a_valid_send_is_still_the_firewalls(harness: Harness) -> None:
    harness.send("agent:bob", "hello \u00e9 \U0001f600")
    assert harness.verdict == "PASS"
    with pytest.raises(SocialSendFailure):
        harness.send("agent:bob", f"the key: {_key(harness)}")
    assert harness.records[-1].status == "blocked"
    assert harness.verdict == "FAIL"


def test_a_bad_answer_carrying_a_secret_fails(harness: Harness) -> None:
    response = {"action": "accept", "content": {"key": _key(harness)}}
    with pytest.raises(REFUSED):
        harness.respond("agent:bob", response)  # no open request: refused before the check
    assert harness.verdict == "FAIL"


def test_a_secret_echoed_in_the_refusal_is_judged_fail_not_warn(tmp_path: Path) -> None:
    # a workspace secret never read (so not redacted from the refusal's text, which names the
    # address): inspection judges the error WARN under a dry-run policy; the secret guard's
    # FAIL is the worse part and is kept
    harness = Harness.create(
        tmp_path,
        template="python-service",
        policy=Policy.from_dict(DRY_RUN),
        agents=("alice", "bob"),
    )
    try:
        with pytest.raises(REFUSED):
            harness.send(f"agent:{_key(harness)}", "hello")
        assert harness.records[-1].raw["judged"]["verdict"] == "FAIL"
        assert harness.verdict == "FAIL"
    finally:
        harness.close()


def test_a_guard_that_cannot_read_the_refused_send_fails_closed(harness: Harness) -> None:
    def broken(text: str) -> list[str]:
        raise RuntimeError("scanner down")

    firewall = harness.social.firewall
    assert firewall is not None
    firewall.secret_scanner = broken
    with pytest.raises(REFUSED):
        harness.send("agent:bob", "no secret here \ud800")
    assert harness.records[-1].raw["judged"]["verdict"] == "FAIL"
    assert harness.verdict == "FAIL"
