"""The message firewall's own secret guard: a noted value is refused in every common form.

A value noted with ``note_secret`` (a secret read from a credential file, maybe outside the
workspace, so unknown to the gate's inspection) used to be matched only as it was: its base64,
hex, reversed or URL-encoded form, or its two halves in two sends, went out. The firewall now
matches its noted values as the inspection matches the workspace's.
"""

from __future__ import annotations

import base64
import codecs
from collections.abc import Callable

import pytest

from pytest_harness_audit.social import MessageFirewall
from pytest_harness_audit.social.addresses import canonical_address
from pytest_harness_audit.social.firewall_rules import SendCandidate

SECRET = "zq-netrc-7f3a9c2b1d4e8a6f0e5c"


def candidate(text: str, to: str = "agent:bob") -> SendCandidate:
    return SendCandidate(canonical_address(to, "alice"), "multicast", text)


def firewall() -> MessageFirewall:
    made = MessageFirewall()
    assert made.note_secret(SECRET, "~/.netrc")
    return made


FORMS: dict[str, Callable[[str], str]] = {
    "plain": lambda v: v,
    "base64": lambda v: base64.b64encode(v.encode()).decode(),
    "hex": lambda v: v.encode().hex(),
    "upper hex": lambda v: v.encode().hex().upper(),
    "reversed": lambda v: v[::-1],
    "url": lambda v: "".join(f"%{b:02X}" for b in v.encode()),
    "spaced": lambda v: " ".join(v),
    "upper case": lambda v: v.upper(),
    "fullwidth": lambda v: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in v),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_a_noted_secret_is_refused_in_every_form(form: str) -> None:
    check = firewall().check(candidate(f"here: {FORMS[form](SECRET)} ok"), "chk_1")
    assert check.decision == "refuse" and check.rule_ids == ("secret-in-message",)
    assert SECRET not in str(check.to_json())


def test_a_noted_secret_split_over_two_sends_is_refused() -> None:
    guard = firewall()
    first = guard.check(candidate(f"part {SECRET[:14]} then"), "chk_1")
    second = guard.check(candidate(f"and {SECRET[14:]} done", "group:bob,carol"), "chk_2")
    assert "refuse" in (first.decision, second.decision)


@pytest.mark.parametrize(
    "text",
    [
        "tests pass; the netrc lookup is fixed",
        "merged as 7f3a9c2 (see the log)",
        codecs.encode("ordinary words in rot13", "rot13"),
        "the zq- prefix marks our keys",
    ],
)
def test_ordinary_messages_are_admitted(text: str) -> None:
    assert firewall().check(candidate(text), "chk_1").decision == "admit"


def test_without_the_guard_nothing_is_matched() -> None:
    guard = MessageFirewall(guard_secrets=False)
    guard.note_secret(SECRET, "~/.netrc")
    encoded = base64.b64encode(SECRET.encode()).decode()
    assert guard.check(candidate(encoded), "chk_1").decision == "admit"
