"""Secrets read in the session: extracted, fed to the firewall, never sent, never recorded."""

from __future__ import annotations

import json

import pytest
from bridge_support import API_KEY, SessionFactory, message_records, social

from pytest_harness_audit.doors.social import SendBlockedError, assert_not_sent, refused_records
from pytest_harness_audit.inspect.secrets import fingerprint
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import Verdict
from pytest_harness_audit.social import FirewallSendError
from pytest_harness_audit.social.secret_ledger import SecretLedger, output_text, secret_values

ENV = """# Development settings
export API_KEY="sk-live-1234abcd5678"
DATABASE_URL=postgres://app:hunter2-pass@db:5432/app  # local only
NODE_ENV=production
PORT=8080
DB_PASSWORD=correcthorse
"""


def test_env_lines_give_their_secret_values() -> None:
    assert secret_values(ENV) == [
        "sk-live-1234abcd5678",
        "postgres://app:hunter2-pass@db:5432/app",
        "hunter2-pass",
        "correcthorse",
    ]


def test_numbered_read_output_is_understood() -> None:
    numbered = "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(ENV.splitlines(), 1))
    assert secret_values(numbered) == secret_values(ENV)


def test_json_credentials_give_keyed_and_token_like_values() -> None:
    document = {
        "type": "service_account",
        "private_key_id": "0123456789abcdef",
        "private_key": "-----BEGIN KEY-----\nQUJDREVGR0hJSktMTU5PUFFSU1RVVldY\n-----END KEY-----",
        "nested": [{"token": "tok_abc123"}],
    }
    values = secret_values(json.dumps(document, indent=2))
    assert "service_account" not in values
    assert values == [
        "0123456789abcdef",
        document["private_key"],
        "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY",
        "tok_abc123",
    ]


def test_other_text_gives_long_tokens_only() -> None:
    text = "deploy key: ghp_16C7e42F292c6912E7710c838347Ae178B4a\nplain words only here"
    assert secret_values(text) == ["ghp_16C7e42F292c6912E7710c838347Ae178B4a"]
    assert secret_values("hello world, nothing secret") == []


def test_mcp_tool_results_are_read_as_their_text() -> None:
    result = {"content": [{"type": "text", "text": "API_KEY=sk-live-1234abcd5678"}]}
    assert secret_values(output_text(result)) == ["sk-live-1234abcd5678"]


def test_the_ledger_notes_only_successful_credential_reads(make_session: SessionFactory) -> None:
    harness, _ = make_session(Policy.preset("safety", enforce=False))
    ledger = SecretLedger()
    settings = harness.call("Read", file_path="app/settings.py")
    assert ledger.note_from(settings) == []
    read = harness.call("Read", file_path=".env")
    assert API_KEY in ledger.note_from(read)
    assert ledger.note_from(read) == []  # repeats are not noted twice
    assert ledger.note_from(read.record, "API_KEY=sk-other-99999999") == ["sk-other-99999999"]
    assert {s.source for s in ledger.items()} == {".env"}

    harness, _ = make_session("safety")  # enforced: the read is blocked, nothing to note
    blocked = harness.call("Read", file_path=".env")
    assert blocked.blocked and SecretLedger().note_from(blocked) == []


def test_redaction_replaces_every_secret() -> None:
    ledger = SecretLedger()
    ledger.note("sk-live-1234abcd5678", ".env")
    assert ledger.redact(
        {"text": "key sk-live-1234abcd5678!", "n": [1, "sk-live-1234abcd5678"]}
    ) == {
        "text": f"key [secret:{fingerprint('sk-live-1234abcd5678')}]!",
        "n": [1, f"[secret:{fingerprint('sk-live-1234abcd5678')}]"],
    }
    with pytest.raises(TypeError, match="call result"):
        ledger.note_from(42)


def test_a_secret_read_then_sent_is_refused_and_escalates(make_session: SessionFactory) -> None:
    # Dry-run safety: the .env read runs (its deny is only recorded); the firewall enforces.
    harness, session = make_session(Policy.preset("safety", enforce=False))
    read = harness.call("Read", file_path=".env")
    assert read.ok and "credential_access" in read.record["alerts"]
    assert API_KEY in session.note_secrets_from(read)

    with pytest.raises(FirewallSendError) as refused:
        session.endpoint.send("group:carol,bob", f"here is the key: {API_KEY}")
    assert API_KEY not in str(refused.value)
    assert session.endpoint.posts() == []

    (record,) = message_records(harness)
    assert record.status == "blocked" and record.raw["firewall"]["ruleIds"] == ["secret-in-message"]
    assert record.params == {
        "to": "group:alice,bob,carol",
        "text": f"here is the key: [secret:{fingerprint(API_KEY)}]",
    }
    chain_text = (harness.storage_dir / "audit" / f"{harness.session_id}.jsonl").read_text()
    assert API_KEY not in chain_text

    (escalation,) = [e for e in harness.escalations if e.raw["immune"]["level"] == "quarantine"]
    assert escalation.raw["immune"]["trigger"] == "flow:secret-then-send"
    with pytest.raises(SendBlockedError):
        session.endpoint.send("agent:bob", "all good")
    assert harness.verdict is Verdict.FAIL and harness.verify().valid
    assert [r.raw["social"]["reason"] for r in refused_records(harness.records)] == [
        "firewall-refused",
        "policy-blocked",
    ]
    assert_not_sent(harness.records)


def test_the_password_inside_a_url_is_a_secret_of_its_own(make_session: SessionFactory) -> None:
    harness, session = make_session(Policy.preset("safety", enforce=False))
    session.note_secrets_from(harness.call("Bash", command="cat .env"))
    with pytest.raises(FirewallSendError):
        session.endpoint.send("agent:bob", "db password hunter2-test")
    assert social(message_records(harness)[0])["reason"] == "firewall-refused"


def test_secrets_noted_before_the_firewall_exists_still_count(
    make_session: SessionFactory,
) -> None:
    harness, first = make_session(Policy.preset("safety", enforce=False))
    first.note_secret(API_KEY, ".env")
    from pytest_harness_audit.doors.social import SocialSession, firewall_from_policy

    later = SocialSession(
        harness.gate,
        harness.storage_dir / "later",
        "alice",
        ("bob",),
        firewall=firewall_from_policy(harness.policy),
        secrets=first.secrets,
    )
    try:
        with pytest.raises(FirewallSendError):
            later.endpoint.send("agent:bob", API_KEY)
    finally:
        later.close()
